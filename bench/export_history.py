"""Export/import benchmark: a group whose facts each have several versions, round-tripped.

Prints ``name: value`` lines: how many versions the export carries, whether every fact's history and
the as-known-at listings are identical after the import into a fresh store (counts: independent of
load), the document size, and export / import wall time (which depend on the machine's load: the
``load_1m`` line says what it was).

    .venv/bin/python bench/export_history.py                      # sqlite, 2,000 facts x 3 versions
    .venv/bin/python bench/export_history.py --store falkordb://127.0.0.1:6379 --facts 500

Source and target are two fresh stores: two files in a temporary directory, or two namespaces of
the FalkorDB server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta

from chronomem.archive import export_group, import_group, read_export
from chronomem.domain import Entity, Fact
from chronomem.embed.testing import HashingEmbedder
from chronomem.filters import SearchFilters
from chronomem.store import GraphWrite, Store, open_store

G = "bench-export"
START = datetime(2025, 1, 1, tzinfo=UTC)
EMBED = HashingEmbedder(64)


async def build(store: Store, facts: int, versions: int) -> None:
    """``facts`` facts between 50 entities, each revised ``versions - 1`` times (a day apart on T')."""
    entities = [Entity(group_id=G, name=f"entity {i}", created_at=START) for i in range(50)]
    heads = [Fact(group_id=G, source_id=entities[i % 50].id, target_id=entities[(i * 7 + 1) % 50].id,
                  fact=f"entity {i % 50} relates to entity {(i * 7 + 1) % 50} as fact {i}",
                  valid_at=START - timedelta(days=i), created_at=START) for i in range(facts)]
    await store.write(GraphWrite(G, entities=entities, facts=heads,
                                 entity_vectors={e.id: EMBED.embed_one(e.name) for e in entities},
                                 fact_vectors={f.id: EMBED.embed_one(f.fact) for f in heads}))
    for v in range(1, versions):
        recorded = START + timedelta(days=v)
        heads = [f.model_copy(update={"fact": f"{f.fact} (revision {v})", "recorded_at": recorded}) for f in heads]
        await store.write(GraphWrite(G, facts=heads))


async def listings(store: Store, versions: int) -> list[list[Fact]]:
    """What list_facts answers as known at each day of the history (and before it)."""
    return [sorted(await store.list_facts(G, filters=SearchFilters(known_at=START + timedelta(days=d, hours=1))),
                   key=lambda f: f.id) for d in range(-1, versions)]


async def main(url: str, facts: int, versions: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:

        def fresh(name: str) -> str:
            if url == "sqlite":
                return f"sqlite:///{tmp}/{name}.db"
            return f"{url}{'&' if '?' in url else '?'}namespace=bench{uuid.uuid4().hex[:8]}{name}"

        source, target = await open_store(fresh("source")), await open_store(fresh("target"))
        try:
            await build(source, facts, versions)
            began = time.perf_counter()
            exported = await export_group(source, EMBED, G)
            export_s = time.perf_counter() - began
            document = exported.model_dump_json()
            began = time.perf_counter()
            await import_group(target, EMBED, read_export(document))
            import_s = time.perf_counter() - began
            sample = [f.id for f in exported.facts[:: max(1, facts // 100)]]
            same_history = all([await target.fact_history(G, i) == await source.fact_history(G, i) for i in sample])
            same_listings = await listings(target, versions) == await listings(source, versions)
        finally:
            for store in (source, target):
                await store.delete_group(G)
                await store.close()
    print(f"facts: {len(exported.facts)}")
    print(f"earlier_versions_exported: {len(exported.fact_history)}")
    print(f"history_identical_on_sampled_facts: {same_history} ({len(sample)} facts)")
    print(f"known_at_listings_identical: {same_listings} ({versions + 1} instants)")
    print(f"document_bytes: {len(document)}")
    print(f"load_1m: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"export_s_under_that_load: {export_s:.3f}")
    print(f"import_s_under_that_load: {import_s:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="sqlite", help="sqlite, or a FalkorDB URL (falkordb://host:port)")
    parser.add_argument("--facts", type=int, default=2_000)
    parser.add_argument("--versions", type=int, default=3)
    args = parser.parse_args()
    if args.versions < 1 or args.facts < 1:
        sys.exit("--facts and --versions must be at least 1")
    asyncio.run(main(args.store, args.facts, args.versions))
