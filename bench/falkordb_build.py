"""How fast a large group is written to FalkorDB, inside ``bulk_load`` or write by write; prints
``name: value`` lines.

    .venv/bin/python bench/falkordb_build.py --falkordb-url falkordb://127.0.0.1:6379 [--facts 10000]
                                             [--mode bulk|inline] [--keep]

Writes the group of ``bench/search.py`` (N facts, N/5 entities, N/10 episodes, 200 communities,
random 384-d vectors) through ``store.write`` in batches of 10,000: ``bulk`` inside
``store.bulk_load`` (each HNSW index built once, at the end), ``inline`` without it (every write
inserts its vectors into the index). The group lives in the namespace ``bench-build`` and is deleted
afterwards unless ``--keep``.

Reported: wall seconds and facts per second (the machine's load while building is printed beside
them: on a shared machine the wall time is the neighbours' as much as ours), the server's CPU seconds
(INFO cpu, what load does not inflate much), this process's CPU seconds, recall@10 of the fact
vector search against exact search (the index quality must not change with the path), and the
graph's memory.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import search  # noqa: E402  (the group builder and recall of bench/search.py)


async def run(url: str, n_facts: int, mode: str, keep: bool) -> dict[str, float]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from chronomem.store.factory import open_store

    sep = "&" if "?" in url else "?"
    store = await open_store(f"{url}{sep}namespace=bench-build&socket_timeout=3600")
    group = f"{mode}-{n_facts}"
    figures: dict[str, float] = {}
    try:
        await store.delete_group(group)
        load_before = os.getloadavg()[0]
        server_before, cpu_before = await search.server_cpu_seconds(store), time.process_time()
        started = time.perf_counter()
        if mode == "bulk":
            await search.build(store, group, n_facts)
        else:
            await search._build(store, group, n_facts)
        figures["build_seconds"] = time.perf_counter() - started
        server_after = await search.server_cpu_seconds(store)
        figures["facts_per_second"] = n_facts / figures["build_seconds"]
        figures["load_avg_1m_before"], figures["load_avg_1m_after"] = load_before, os.getloadavg()[0]
        if server_before is not None and server_after is not None:
            figures["server_cpu_seconds"] = server_after - server_before
        figures["client_cpu_seconds"] = time.process_time() - cpu_before
        figures["vector_recall_at_10"] = await search.recall_random(store, group, n_facts)
        memory = await search.graph_memory_mb(store, group)
        if memory is not None:
            figures["graph_memory_mb"] = memory
    finally:
        if not keep:
            await store.delete_group(group)
        await store.close()
    return figures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--falkordb-url", default="falkordb://127.0.0.1:6379")
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--mode", choices=["bulk", "inline"], default="bulk")
    parser.add_argument("--keep", action="store_true", help="keep the group afterwards")
    args = parser.parse_args(argv)
    figures = asyncio.run(run(args.falkordb_url, args.facts, args.mode, args.keep))
    print(f"mode: {args.mode}")
    print(f"facts: {args.facts}")
    for name, value in figures.items():
        print(f"{name}: {value:.4f}" if "recall" in name else f"{name}: {value:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
