"""Every query one ``Searcher.context()`` sends to FalkorDB, with its server time and rows.

    .venv/bin/python bench/falkordb_queries.py --falkordb-url falkordb://127.0.0.1:6379 [--facts 100000]
                                               [--queries 20] [--show 1]

Runs on the group ``bench/search.py --store falkordb`` built (``bench-search-<N>``; this script
builds nothing). For each query it records the graph command's text, rows, wall time and the
server's own "internal execution time" from the reply's statistics, around ``--queries``
``context()`` calls with the queries bench/search.py uses. Prints, as ``name: value`` lines, the
round trips and server time per ``context()`` (p50 over the calls), the server CPU per
``context()`` (INFO cpu, the whole server process: parsing and replying included), and for
``--show`` calls the table of queries, heaviest first. A profile of the server's plan of each
shape can then be had with ``GRAPH.PROFILE`` on the printed text.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import os
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import search as search_bench  # noqa: E402  (the group and the queries of bench/search.py)

_EXECUTION = re.compile(r"internal execution time: ([0-9.]+)")


@dataclass
class Sent:
    text: str
    rows: int = 0
    wall_ms: float = 0.0
    server_ms: float = float("nan")


_current: contextvars.ContextVar[Sent | None] = contextvars.ContextVar("sent", default=None)


@dataclass
class Recorder:
    """Wraps the connection's ``query`` (the text, rows and wall time of each graph query) and
    ``execute`` (the server's execution time, from the raw reply) while a call is recorded."""

    calls: list[list[Sent]] = field(default_factory=list)

    def install(self, connection: Any) -> None:
        query, execute = connection.query, connection.execute

        async def recorded_query(key: str, text: str, params: Any = None, **options: Any) -> Any:
            if not self.calls:
                return await query(key, text, params, **options)
            sent = Sent(text)
            token = _current.set(sent)  # a contextvar: concurrent queries each find their own
            started = time.perf_counter()
            try:
                rows = await query(key, text, params, **options)
            finally:
                _current.reset(token)
            sent.rows, sent.wall_ms = len(rows), (time.perf_counter() - started) * 1000
            self.calls[-1].append(sent)
            return rows

        async def recorded_execute(*args: Any, **options: Any) -> Any:
            reply = await execute(*args, **options)
            sent = _current.get()
            if sent is not None and isinstance(reply, list) and reply:
                found = (_EXECUTION.search(str(line)) for line in reply[-1])
                sent.server_ms = next((float(m.group(1)) for m in found if m), float("nan"))
            return reply

        connection.query, connection.execute = recorded_query, recorded_execute


async def run(args: argparse.Namespace) -> int:
    from chronomem.embed.factory import build_embedder
    from chronomem.search import Searcher
    from chronomem.store.factory import open_store

    group = search_bench.group_of(args.facts)
    store: Any = await open_store(args.falkordb_url)
    try:
        if (await store.stats(group)).facts != args.facts:
            print(f"group {group} is not built: run bench/search.py --store falkordb --build-only", file=sys.stderr)
            return 1
        searcher = Searcher(store, build_embedder("hashing" if args.hashing else "local", cache=False))
        rng = random.Random(11)
        facts = await store.list_facts(group, limit=2000)
        queries = [" ".join(rng.sample(f.fact.split(), 4)) + "?" for f in rng.sample(facts, args.queries)]
        for query in queries[:3]:  # warm: the model, the plan cache
            await searcher.context(group, query, now=search_bench.NOW)
        recorder = Recorder()
        recorder.install(store.connection)
        cpu: list[float] = []
        for query in queries:
            recorder.calls.append([])
            before = await search_bench.server_cpu_seconds(store)
            await searcher.context(group, query, now=search_bench.NOW)
            after = await search_bench.server_cpu_seconds(store)
            cpu.append(((after or 0.0) - (before or 0.0)) * 1000)
    finally:
        await store.close()
    per_context = {
        "round_trips_per_context_p50": [len(c) for c in recorder.calls],
        "server_exec_ms_per_context_p50": [sum(s.server_ms for s in c) for c in recorder.calls],
        "server_cpu_per_context_ms_p50": cpu,
        "rows_per_context_p50": [sum(s.rows for s in c) for c in recorder.calls],
    }
    print(f"facts: {args.facts}")
    print(f"contexts: {len(recorder.calls)}")
    print(f"load_avg_1m: {os.getloadavg()[0]:.2f}")
    for name, values in per_context.items():
        print(f"{name}: {np.percentile(values, 50):.2f}")
    shapes: dict[str, list[float]] = {}
    for call in recorder.calls:
        for sent in call:
            shapes.setdefault(sent.text, []).append(sent.server_ms)
    width = args.width
    print("# per query shape: calls per context, server ms per call p50 / p95, text")
    for text, times in sorted(shapes.items(), key=lambda kv: -sum(kv[1])):
        calls = len(times) / len(recorder.calls)
        print(f"{calls:5.2f}  {np.percentile(times, 50):7.2f}  {np.percentile(times, 95):7.2f}  {text[:width]}")
    for index, call in enumerate(recorder.calls[: args.show]):
        print(f"# context {index}: {queries[index]!r}, server CPU {cpu[index]:.1f} ms")
        for s in call:
            print(f"  {s.server_ms:7.2f} ms  {s.wall_ms:7.2f} wall  {s.rows:4d} rows  {s.text[:width]}")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--falkordb-url", default="falkordb://127.0.0.1:6379")
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--show", type=int, default=1, help="contexts whose every query is listed")
    parser.add_argument("--width", type=int, default=220, help="characters of query text shown")
    parser.add_argument("--hashing", action="store_true", help="hashing embedder instead of MiniLM")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
