"""Store benchmark: search latency, upsert latency, bulk load, file size and cold start, per backend.

Generic over the Store port (``open_store(url)``); prints one ``name: value`` line per figure
(``falkordb_``-prefixed for that backend). Progress goes to stderr.

    .venv/bin/python bench/store.py                      # sqlite, 100k facts + the 1M-fact cold start
    .venv/bin/python bench/store.py --store both --skip-1m

The synthetic group: ``--entities`` entities and ``--facts`` facts with random 384-d unit vectors
(the worst case for approximate indexes), fact texts drawn from a Zipf-distributed vocabulary (so
common query words hit many rows), four timestamps spread over five years, a fifth of the facts
superseded. History: 5,000 open facts are then invalidated (each keeps its replaced version), giving
the storage cost of a version and ``asof_known`` ("true at t as known at t'", t' before them). The
1M-fact file is ten such groups, built once under bench/out/ and reused.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import os
import sqlite3
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from chronomem.domain import Entity, Fact
from chronomem.filters import SearchFilters
from chronomem.store import GraphWrite, Scope, Store, open_store

__all__ = ["main"]

OUT = Path(__file__).resolve().parent / "out"
DIMENSION = 384
BATCH = 2_000
ROUNDS = 200
GROUPS_1M = 10
EPOCH = datetime(2020, 1, 1, tzinfo=UTC)
SPAN_DAYS = 5 * 365
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "an", "el", "or", "um", "is", "ba", "do"]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def vocabulary(size: int) -> list[str]:
    """Pronounceable made-up words; the same list for every group, so any group answers the queries."""
    rng = np.random.default_rng(12345)
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES, size=int(rng.integers(2, 5)))))
    return sorted(words)


@dataclass
class Workload:
    """A synthetic group: its objects, vectors and the queries run against it."""

    group_id: str
    entities: list[Entity]
    facts: list[Fact]
    fact_vectors: np.ndarray
    entity_vectors: np.ndarray
    words: list[str]
    word_weights: np.ndarray
    rng: np.random.Generator = field(repr=False)

    def text_query(self) -> str:
        picks = self.rng.choice(len(self.words), size=int(self.rng.integers(2, 4)), p=self.word_weights)
        return " ".join(self.words[i] for i in picks)

    def vector_query(self) -> np.ndarray:
        v = self.rng.standard_normal(DIMENSION).astype(np.float32)
        return v / np.linalg.norm(v)

    def time_point(self) -> datetime:
        return EPOCH + timedelta(days=float(self.rng.uniform(0, SPAN_DAYS)))


def unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    matrix = rng.standard_normal((n, DIMENSION), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def make_workload(group_id: str, n_facts: int, n_entities: int, seed: int) -> Workload:
    rng = np.random.default_rng(seed)
    words = vocabulary(5_000)
    weights = 1.0 / np.arange(1, len(words) + 1) ** 1.07  # Zipf-like, as in natural text
    weights /= weights.sum()
    created = EPOCH + timedelta(days=1)
    entities = [
        Entity(group_id=group_id, name=f"{words[i % len(words)]} {i}", summary=f"entity number {i}", created_at=created)
        for i in range(n_entities)
    ]
    word_ids = rng.choice(len(words), size=(n_facts, 8), p=weights)
    sources, targets = rng.integers(0, n_entities, n_facts), rng.integers(0, n_entities, n_facts)
    valid_days = rng.uniform(0, SPAN_DAYS, n_facts)
    facts = []
    for i in range(n_facts):
        valid = EPOCH + timedelta(days=float(valid_days[i]))
        superseded = rng.random() < 0.2
        ended = valid + timedelta(days=float(rng.uniform(1, 400))) if superseded else None
        facts.append(
            Fact(
                group_id=group_id,
                source_id=entities[sources[i]].id,
                target_id=entities[targets[i]].id,
                relation_type="RELATES_TO",
                fact=f"{entities[sources[i]].name} " + " ".join(words[w] for w in word_ids[i]),
                valid_at=valid,
                invalid_at=ended,
                created_at=valid,
                expired_at=ended,
            )
        )
    return Workload(group_id, entities, facts, unit_rows(rng, n_facts), unit_rows(rng, n_entities), words, weights, rng)


async def load(store: Store, work: Workload) -> float:
    """Write the workload in batches; returns facts per second (entities and vectors included)."""
    started = time.perf_counter()
    for start in range(0, len(work.entities), BATCH):
        chunk = work.entities[start : start + BATCH]
        vectors = {e.id: work.entity_vectors[start + i] for i, e in enumerate(chunk)}
        await store.write(GraphWrite(group_id=work.group_id, entities=chunk, entity_vectors=vectors))
    for start in range(0, len(work.facts), BATCH):
        chunk = work.facts[start : start + BATCH]
        vectors = {f.id: work.fact_vectors[start + i] for i, f in enumerate(chunk)}
        await store.write(GraphWrite(group_id=work.group_id, facts=chunk, fact_vectors=vectors))
        if start % (BATCH * 10) == 0:
            log(f"  {work.group_id}: {start + len(chunk)} facts")
    return len(work.facts) / (time.perf_counter() - started)


@dataclass
class Samples:
    """Wall-clock and process CPU milliseconds per call (CPU time shows the work itself when other
    processes share the cores)."""

    wall: list[float]
    cpu: list[float]


async def timed(rounds: int, call: Callable[[], Awaitable[object]]) -> Samples:
    await call()  # warm-up (the first search of a group builds its in-memory index)
    samples = Samples([], [])
    for _ in range(rounds):
        started, cpu_started = time.perf_counter(), time.process_time()
        await call()
        samples.wall.append((time.perf_counter() - started) * 1000)
        samples.cpu.append((time.process_time() - cpu_started) * 1000)
    return samples


def percentiles(name: str, samples: Samples) -> dict[str, float]:
    ordered = sorted(samples.wall)
    return {
        f"{name}_p50_ms": statistics.median(ordered),
        f"{name}_p95_ms": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
        f"{name}_cpu_p50_ms": statistics.median(samples.cpu),
    }


def exact_top(work: Workload, query: np.ndarray, allowed: np.ndarray, k: int) -> set[str]:
    scores = np.where(allowed, work.fact_vectors @ query, -np.inf)
    top = np.argpartition(-scores, k)[:k]
    return {work.facts[i].id for i in top}


async def search_figures(store: Store, work: Workload) -> dict[str, float]:
    figures: dict[str, float] = {}
    entity_ids = [e.id for e in work.entities]
    current = np.array([f.expired_at is None for f in work.facts])
    log("  bm25 …")
    figures |= percentiles(
        "bm25", await timed(ROUNDS, lambda: store.fulltext_search(work.group_id, Scope.FACTS, work.text_query()))
    )
    log("  vector …")
    figures |= percentiles(
        "vector", await timed(ROUNDS, lambda: store.vector_search(work.group_id, Scope.FACTS, work.vector_query()))
    )
    log("  bfs …")
    figures |= percentiles(
        "bfs2",
        await timed(ROUNDS, lambda: store.bfs(work.group_id, [entity_ids[int(work.rng.integers(len(entity_ids)))]])),
    )
    log("  as_of …")
    figures |= percentiles(
        "asof",
        await timed(
            ROUNDS,
            lambda: store.vector_search(
                work.group_id, Scope.FACTS, work.vector_query(), filters=SearchFilters(as_of=work.time_point())
            ),
        ),
    )
    figures |= percentiles(
        "asof_bm25",
        await timed(
            ROUNDS,
            lambda: store.fulltext_search(
                work.group_id, Scope.FACTS, work.text_query(), filters=SearchFilters(as_of=work.time_point())
            ),
        ),
    )
    log("  recall …")
    hits = total = 0
    for _ in range(50):
        query = work.vector_query()
        got = {h.id for h in await store.vector_search(work.group_id, Scope.FACTS, query, limit=10)}
        hits += len(got & exact_top(work, query, current, 10))
        total += 10
    figures["vector_recall_at_10"] = hits / total
    return figures


async def upsert_figures(store: Store, work: Workload) -> dict[str, float]:
    """Re-send single facts as superseded (the invalidation write), each with its vector."""
    now = datetime.now(UTC)
    picks = iter(work.rng.choice(len(work.facts), size=ROUNDS + 1, replace=False))

    async def one() -> None:
        i = int(next(picks))
        changed = work.facts[i].model_copy(update={"expired_at": now, "invalid_at": now})
        await store.write(
            GraphWrite(group_id=work.group_id, facts=[changed], fact_vectors={changed.id: work.fact_vectors[i]})
        )

    return percentiles("upsert", await timed(ROUNDS, one))


HISTORY_FACTS = 5_000  # facts invalidated (one new version each) to measure what history costs


def sqlite_version_bytes(url: str) -> int | None:
    """Pages of the version table and its index (SQLite's dbstat), or None for other backends."""
    if not url.startswith("sqlite:///"):
        return None
    with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN ('fact_versions', 'fact_versions_in_force')"
        ).fetchone()
    return int(row[0])


async def history_figures(store: Store, work: Workload, url: str) -> dict[str, float]:
    """Invalidate HISTORY_FACTS open facts (each keeps its replaced version), then ask "true at t as
    known at t'" with t' before them, so every one of them is judged by its earlier version."""
    open_ones = [i for i, f in enumerate(work.facts) if f.expired_at is None][:HISTORY_FACTS]
    known_before = datetime.now(UTC)
    bytes_before, memory_before = sqlite_version_bytes(url), await server_memory(store)
    for start in range(0, len(open_ones), 500):
        now = datetime.now(UTC)
        changed = [work.facts[i].model_copy(update={"expired_at": now, "invalid_at": now, "recorded_at": now})
                   for i in open_ones[start:start + 500]]
        await store.write(GraphWrite(group_id=work.group_id, facts=changed))
    figures: dict[str, float] = {}
    bytes_after, memory_after = sqlite_version_bytes(url), await server_memory(store)
    if bytes_before is not None and bytes_after is not None:
        figures["version_bytes_per_invalidation"] = (bytes_after - bytes_before) / len(open_ones)
    if memory_before and memory_after:
        figures["version_memory_bytes_per_invalidation"] = (
            (memory_after["memory_mb"] - memory_before["memory_mb"]) * 1e6 / len(open_ones)
        )
    sample = work.facts[open_ones[0]].id
    figures["versions_per_invalidated_fact"] = len(await store.fact_history(work.group_id, sample)) - 1
    log("  as_of + known_at …")
    figures |= percentiles(
        "asof_known",
        await timed(
            ROUNDS,
            lambda: store.vector_search(
                work.group_id, Scope.FACTS, work.vector_query(),
                filters=SearchFilters(as_of=work.time_point(), known_at=known_before),
            ),
        ),
    )
    return figures


async def server_memory(store: Store) -> dict[str, float]:
    """Memory a server backend holds for the loaded group (FalkorDB: INFO memory); none for embedded ones."""
    probe = getattr(store, "memory_used_mb", None)
    return {} if probe is None else {"memory_mb": await probe()}


def sqlite_size_mb(url: str) -> float | None:
    if not url.startswith("sqlite:///"):
        return None
    path = Path(url.removeprefix("sqlite:///"))
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists()) / 1e6


async def bench_100k(url: str, args: argparse.Namespace) -> dict[str, float]:
    work = make_workload(f"bench-{uuid.uuid4().hex[:8]}", args.facts, args.entities, seed=1)
    store = await open_store(url)
    try:
        log(f"loading {args.facts} facts, {args.entities} entities into {url}")
        figures = {"load_facts_per_s": await load(store, work)}
        figures |= await search_figures(store, work)
        figures |= await upsert_figures(store, work)
        figures |= await history_figures(store, work, url)
        figures |= await server_memory(store)
    finally:
        if not url.startswith("sqlite"):
            await store.delete_group(work.group_id)
        await store.close()
    size = sqlite_size_mb(url)
    if size is not None:
        figures["file_size_mb"] = size
    return figures


async def build_1m(url: str, args: argparse.Namespace) -> None:
    store = await open_store(url)
    try:
        for g in range(GROUPS_1M):
            group = f"bench-1m-{g}"
            if (await store.stats(group)).facts == args.facts:
                continue
            await store.delete_group(group)
            log(f"building {group} of the 1M-fact store")
            await load(store, make_workload(group, args.facts, args.entities, seed=100 + g))
    finally:
        await store.close()


async def bench_1m(url: str, args: argparse.Namespace) -> dict[str, float]:
    await build_1m(url, args)
    work = make_workload("unused", 10, 10, seed=7)
    started = time.perf_counter()
    store = await open_store(url)
    try:
        await store.vector_search("bench-1m-0", Scope.FACTS, work.vector_query())
        figures = {"reopen_1m_s": time.perf_counter() - started}
        started = time.perf_counter()
        await store.fulltext_search("bench-1m-0", Scope.FACTS, "anything")
        figures["first_bm25_100k_s"] = time.perf_counter() - started  # builds that group's BM25 index
        started = time.perf_counter()
        for g in range(1, GROUPS_1M):
            await store.vector_search(f"bench-1m-{g}", Scope.FACTS, work.vector_query())
        # every group's matrix in memory: all 1M fact vectors
        figures["reopen_1m_all_groups_s"] = figures["reopen_1m_s"] + time.perf_counter() - started
        group = make_workload("bench-1m-3", 10, 10, seed=3)  # same vocabulary, for text queries
        figures |= percentiles(
            "bm25_1m", await timed(ROUNDS, lambda: store.fulltext_search("bench-1m-3", Scope.FACTS, group.text_query()))
        )
        figures |= percentiles(
            "vector_1m",
            await timed(ROUNDS, lambda: store.vector_search("bench-1m-3", Scope.FACTS, group.vector_query())),
        )
    finally:
        await store.close()
    size = sqlite_size_mb(url)
    if size is not None:
        figures["file_size_1m_mb"] = size
    return figures


def backend_urls(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(prefix, 100k url, 1M url) per backend asked for."""
    OUT.mkdir(parents=True, exist_ok=True)
    chosen = []
    if args.store in ("sqlite", "both"):
        small = OUT / f"store-100k-{os.getpid()}.db"  # per run: concurrent runs must not share it
        chosen.append(("", f"sqlite:///{small}", f"sqlite:///{OUT / 'store-1m.db'}"))
    if args.store in ("falkordb", "both"):
        chosen.append(("falkordb_", args.falkordb_url, args.falkordb_url))
    return chosen


def remove_sqlite_files(url: str) -> None:
    if url.startswith("sqlite:///"):
        path = url.removeprefix("sqlite:///")
        for suffix in ("", "-wal", "-shm"):
            Path(path + suffix).unlink(missing_ok=True)


@contextmanager
def exclusive(name: str) -> Iterator[None]:
    """One run at a time builds and measures the shared 1M-fact store (others wait)."""
    with open(OUT / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


async def run(args: argparse.Namespace) -> None:
    for prefix, small_url, large_url in backend_urls(args):
        try:
            figures = await bench_100k(small_url, args)
        finally:
            remove_sqlite_files(small_url)
        if not args.skip_1m:
            with exclusive(f"{prefix}store-1m"):
                figures |= await bench_1m(large_url, args)
        for name, value in figures.items():
            print(f"{prefix}{name}: {value:.4g}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", choices=["sqlite", "falkordb", "both"], default="sqlite")
    parser.add_argument("--falkordb-url", default="falkordb://127.0.0.1:6379")
    parser.add_argument("--facts", type=int, default=100_000, help="facts per group")
    parser.add_argument("--entities", type=int, default=20_000, help="entities per group")
    parser.add_argument("--skip-1m", action="store_true", help="skip the 1,000,000-fact cold start")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
