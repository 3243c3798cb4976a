"""Retrieval latency on one large synthetic group, on either store; prints ``name: value`` lines.

    .venv/bin/python bench/search.py [--store sqlite|falkordb] [--falkordb-url URL] [--facts 100000]
                                     [--queries 60] [--hashing | --embedder SPEC] [--embedder-runtime R]
                                     [--build-only]
    .venv/bin/python bench/search.py --scales 10000,100000,1000000 [--store …]   # growth between sizes

The group (N facts, N/5 entities, N/10 episodes, 200 communities; fact texts from a made-up
vocabulary; random unit vectors, the worst case for any vector index) is written through the
store's own ``write`` in batches of 10,000, inside the store's ``bulk_load`` (FalkorDB builds each
HNSW index once at the end) — the product's write path, nothing bench-only — once, and reused:
SQLite keeps it in ``bench/out/search-<N>.db``, FalkorDB in the graph of the group
``bench-search-<N>``. Queries are four words of a stored fact, embedded with the local MiniLM model.

Reported, per size: p50/p95 of ``Searcher.context()`` end to end and of each step alone
(``vector`` = cosine over facts, ``bm25``, ``bfs`` = 2 hops from 20 seeds), the CPU time this process
spent per ``context()`` (and, for FalkorDB, the server's CPU per ``context()`` and per step, and the
graph queries a ``context()`` sends — the figures machine load does not inflate), the 1-minute load
average while measuring (latency on a loaded machine is the neighbours' as much as ours), ``vector_recall_at_10`` of the
store's vector search against exact numpy search on this group's random vectors and on real MiniLM
vectors (a second group of real sentences, see real_vectors.py), build time, file size (SQLite) or
graph memory (FalkorDB), peak resident memory of this process. ``--scales`` runs each size in its own
process (so peak memory is per size) and then prints how each figure grew.

SQLite searches a group of ``--ann-from`` facts or more (default: the store's own threshold, 200,000)
through its approximate index, trained in the background after the first search; the bench waits for
it before measuring and prints ``vector_index_approximate``, ``ann_build_seconds`` (wall, training and
filling, beside the first queries) and ``ann_memory_mb``. The real-vector group forces the index on
(``--real-ann-from 0``) so that its recall measures the approximate index's parameter rule, not the
exact scan a 65k group would otherwise get.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import resource
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
NOW = datetime(2025, 1, 1, tzinfo=UTC)
BATCH = 10_000
K = 10
RECALL_QUERIES = 200
# Figures compared across sizes by --scales (those a size prints and the next may too).
GROWTH = ("context_p95_ms", "bm25_p95_ms", "vector_p95_ms", "bfs_p95_ms", "context_cpu_ms",
          "server_cpu_per_context_ms", "vector_recall_at_10", "vector_recall_at_10_real", "peak_rss_mb",
          "file_size_mb", "graph_memory_mb", "build_seconds")


def group_of(n_facts: int) -> str:
    return f"bench-search-{n_facts}"


def _words(rng: random.Random, count: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "pe", "do", "ge", "ha", "zu", "bo", "ri", "an"]
    return ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(count)]


def _unit(rng: np.random.Generator, n: int, dim: int = 384) -> np.ndarray:
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def fact_vectors(batch_index: int, n: int) -> np.ndarray:
    """The fact vectors of one build batch: seeded by the batch, so exact search can regenerate all of
    them batch by batch without reading them back from the store."""
    return _unit(np.random.default_rng((7, batch_index)), n)


def _ids_vectors(ids: list[str], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return dict(zip(ids, _unit(rng, len(ids)), strict=True))


async def _write_chunked(store: Any, group: str, items: list[Any], field: str, vectors: str,
                         rng: np.random.Generator) -> None:
    from chronomem.store.base import GraphWrite

    for start in range(0, len(items), BATCH):
        chunk = items[start : start + BATCH]
        vectors_of_chunk = _ids_vectors([o.id for o in chunk], rng)
        await store.write(GraphWrite(group_id=group, **{field: chunk, vectors: vectors_of_chunk}))


async def build(store: Any, group: str, n_facts: int) -> None:
    async with store.bulk_load(group):
        await _build(store, group, n_facts)
        print("written; building the indexes", file=sys.stderr, flush=True)


async def _build(store: Any, group: str, n_facts: int) -> None:
    from chronomem.domain import Community, Entity, Episode, EpisodeStatus, Fact, Mention
    from chronomem.store.base import GraphWrite

    rng, nrng = random.Random(7), np.random.default_rng(7)
    vocab = _words(rng, 5000)
    n_entities, n_episodes = max(100, n_facts // 5), max(50, n_facts // 10)
    names = [f"{rng.choice(vocab).title()} {rng.choice(vocab).title()}" for _ in range(n_entities)]
    entities = [Entity(id=f"n{i}", group_id=group, name=names[i], summary=" ".join(rng.sample(vocab, 8)))
                for i in range(n_entities)]
    await _write_chunked(store, group, entities, "entities", "entity_vectors", nrng)
    start = datetime(2020, 1, 1, tzinfo=UTC)
    episodes = [Episode(id=f"e{i}", group_id=group, content=" ".join(rng.sample(vocab, 12)), speaker="user",
                        reference_time=start + timedelta(hours=i), created_at=start + timedelta(hours=i),
                        status=EpisodeStatus.DONE) for i in range(n_episodes)]
    await _write_chunked(store, group, episodes, "episodes", "episode_vectors", nrng)
    mentions = [Mention(group_id=group, episode_id=f"e{i}", entity_id=f"n{rng.randrange(n_entities)}")
                for i in range(n_episodes) for _ in range(2)]
    for at in range(0, len(mentions), BATCH):
        await store.write(GraphWrite(group_id=group, mentions=mentions[at : at + BATCH]))
    for batch_index, batch_start in enumerate(range(0, n_facts, BATCH)):
        facts = []
        for i in range(batch_start, min(n_facts, batch_start + BATCH)):
            a, b = rng.randrange(n_entities), rng.randrange(n_entities)
            text = f"{names[a]} {' '.join(rng.sample(vocab, 6))} {names[b]}"
            facts.append(Fact(id=f"f{i}", group_id=group, source_id=f"n{a}", target_id=f"n{b}", fact=text,
                              episode_ids=(f"e{rng.randrange(n_episodes)}",),
                              valid_at=start + timedelta(minutes=i), created_at=start + timedelta(minutes=i)))
        vectors = dict(zip((f.id for f in facts), fact_vectors(batch_index, len(facts)), strict=True))
        await store.write(GraphWrite(group_id=group, facts=facts, fact_vectors=vectors))
        print(f"built {batch_start + len(facts)} facts", file=sys.stderr, flush=True)
    communities = [Community(id=f"c{i}", group_id=group, name=" ".join(rng.sample(vocab, 4)),
                             summary=" ".join(rng.sample(vocab, 20)),
                             member_ids=tuple(f"n{rng.randrange(n_entities)}" for _ in range(20))) for i in range(200)]
    await store.write(GraphWrite(group_id=group, communities=communities,
                                 community_vectors=_ids_vectors([c.id for c in communities], nrng)))


def exact_top(queries: np.ndarray, n_facts: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-K fact ids (as row numbers) and their scores for each query, over the regenerated
    vectors of the group (one batch in memory at a time)."""
    best_rows = np.zeros((len(queries), 0), dtype=np.int64)
    best_scores = np.zeros((len(queries), 0), dtype=np.float32)
    for batch_index, batch_start in enumerate(range(0, n_facts, BATCH)):
        size = min(BATCH, n_facts - batch_start)
        scores = queries @ fact_vectors(batch_index, size).T
        rows = np.broadcast_to(np.arange(batch_start, batch_start + size), scores.shape)
        merged_scores = np.concatenate([best_scores, scores], axis=1)
        merged_rows = np.concatenate([best_rows, rows], axis=1)
        top = np.argsort(-merged_scores, axis=1, kind="stable")[:, :K]
        best_scores = np.take_along_axis(merged_scores, top, axis=1)
        best_rows = np.take_along_axis(merged_rows, top, axis=1)
    return best_rows, best_scores


async def recall_random(store: Any, group: str, n_facts: int) -> float:
    """Recall@10 of the store's vector search on the group's own (random) vectors. A hit counts when
    it scores at least the exact 10th best (ties are equally right)."""
    from chronomem.store.base import Scope

    queries = _unit(np.random.default_rng(99), RECALL_QUERIES // 4)  # 50: regenerating 1M rows is the cost
    _, exact_scores = exact_top(queries, n_facts)
    recalls = []
    for row, query in enumerate(queries):
        hits = await store.vector_search(group, Scope.FACTS, query, limit=K)
        recalls.append(sum(h.score >= exact_scores[row, K - 1] - 1e-5 for h in hits) / K)
    return float(np.mean(recalls))


async def recall_real(store: Any, count: int) -> tuple[float, int, dict[str, float]]:
    """Recall@10 on real MiniLM vectors: a group of ``count`` real sentences (those embedded so far by
    real_vectors.py), queried with real questions; (recall, facts in the group)."""
    from chronomem.domain import Entity, Fact
    from chronomem.store.base import GraphWrite, Scope

    sys.path.insert(0, str(HERE))
    import real_vectors

    texts, vectors = real_vectors.load_real(count)
    if not texts:
        return float("nan"), 0, {}
    group = f"bench-recall-{len(texts)}"
    if (await store.stats(group)).facts != len(texts):
        await store.delete_group(group)
        a, b = Entity(id="a", group_id=group, name="Speaker A"), Entity(id="b", group_id=group, name="Speaker B")
        await store.write(GraphWrite(group_id=group, entities=[a, b]))
        for start in range(0, len(texts), BATCH):
            facts = [Fact(id=f"r{start + i}", group_id=group, source_id="a", target_id="b", fact=text)
                     for i, text in enumerate(texts[start : start + BATCH])]
            await store.write(GraphWrite(group_id=group, facts=facts,
                                         fact_vectors={f.id: vectors[start + i] for i, f in enumerate(facts)}))
    await wait_for_indexes(store, group)
    questions = await real_vectors.embed_queries()
    picked = np.random.default_rng(5).choice(len(questions), size=min(RECALL_QUERIES, len(questions)), replace=False)
    await store.vector_search(group, Scope.FACTS, questions[0], limit=K)  # loads the index (and starts its build)
    index_figures = await vector_index_figures(store, group, "real_")
    recalls = []
    for query in questions[np.sort(picked)]:
        kth = float(np.sort(vectors @ query)[-K])
        hits = await store.vector_search(group, Scope.FACTS, query, limit=K)
        recalls.append(sum(h.score >= kth - 1e-5 for h in hits) / K)
    return float(np.mean(recalls)), len(texts), index_figures


async def vector_index_figures(store: Any, group: str, prefix: str) -> dict[str, float]:
    """SQLite: wait for the approximate index's background build (when the group is large enough to
    have one), then what the fact vector index holds; {} on other stores."""
    if not hasattr(store, "vector_index_info"):
        return {}
    from chronomem.store.base import Scope

    info = await store.vector_index_info(group, Scope.FACTS, wait_seconds=3600)
    if info is None:
        return {}
    figures = {f"{prefix}vector_index_approximate": info["approximate"],
               f"{prefix}vector_index_memory_mb": info["memory_bytes"] / 2**20}
    if info["approximate"]:
        figures.update({f"{prefix}ann_build_seconds": info["ann_build_seconds"],
                        f"{prefix}ann_memory_mb": info["ann_memory_bytes"] / 2**20,
                        f"{prefix}ann_nlist": info["ann_nlist"], f"{prefix}ann_nprobe": info["ann_nprobe"]})
    return figures


async def timed(samples: dict[str, list[float]], name: str, make: Callable[[], Awaitable[Any]],
                store: Any = None) -> Any:
    """Wall and CPU time of one call; with ``store`` (FalkorDB), the server's CPU too, read around
    the timed span (so the INFO round trips are not in its wall time)."""
    server = await server_cpu_seconds(store) if store is not None else None
    started, cpu = time.perf_counter(), time.process_time()
    result = await make()
    samples.setdefault(name, []).append((time.perf_counter() - started) * 1000)
    samples.setdefault(f"{name}_cpu", []).append((time.process_time() - cpu) * 1000)
    if server is not None:
        after = await server_cpu_seconds(store)
        samples.setdefault(f"{name}_server_cpu", []).append(((after or server) - server) * 1000)
    return result


def p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


async def server_cpu_seconds(store: Any) -> float | None:
    """CPU seconds the FalkorDB server(s) used so far (None for the embedded store)."""
    connection = getattr(store, "connection", None)
    if connection is None:
        return None
    replies = await connection.on_every_primary("INFO", "cpu")
    return sum(float(r["used_cpu_user"]) + float(r["used_cpu_sys"]) for r in replies)


async def graph_queries(store: Any) -> int | None:
    """Graph queries the FalkorDB server(s) answered so far (INFO commandstats; None for SQLite)."""
    connection = getattr(store, "connection", None)
    if connection is None:
        return None
    replies = await connection.on_every_primary("INFO", "commandstats")
    return sum(int(stats["calls"]) for reply in replies for name, stats in reply.items()
               if name.lower() in ("cmdstat_graph.ro_query", "cmdstat_graph.query"))


async def wait_for_indexes(store: Any, group: str) -> float | None:
    """Seconds until every index of a FalkorDB group is OPERATIONAL (None for the embedded store).

    FalkorDB 4.16.3 keeps no HNSW index on disk: a server that starts rebuilds every vector index
    from the stored vectors (a 10k group took ~45 s at load ~10, as long as building it), and a
    search meanwhile sees part of the index. Figures measured before the end would be the partial
    index's."""
    connection = getattr(store, "connection", None)
    if connection is None:
        return None
    started = reported = time.perf_counter()
    while True:
        rows = await connection.query(store.graph_key(group), "CALL db.indexes() YIELD label, status "
                                      "RETURN label, status", read_only=True)
        building = [f"{label} {status}" for label, status in rows if status != "OPERATIONAL"]
        if not building:
            return time.perf_counter() - started
        if time.perf_counter() - reported > 60:
            print(f"{group}: waiting for {', '.join(building)}", file=sys.stderr, flush=True)
            reported = time.perf_counter()
        await asyncio.sleep(2)


async def graph_memory_mb(store: Any, group: str) -> float | None:
    connection = getattr(store, "connection", None)
    if connection is None:
        return None
    reply = await connection.execute("GRAPH.MEMORY", "USAGE", store.graph_key(group))
    usage = dict(zip(reply[::2], reply[1::2], strict=True)) if isinstance(reply, list) else reply
    return float(usage.get(b"total_graph_sz_mb", usage.get("total_graph_sz_mb", 0)))


async def measure(
    store: Any, group: str, n_queries: int, embedder_spec: str, runtime: str = "auto"
) -> dict[str, float]:
    from chronomem.embed.factory import build_embedder
    from chronomem.filters import SearchFilters
    from chronomem.search import Searcher, recipe
    from chronomem.search.rerank import rrf
    from chronomem.store.base import Scope

    embedder = build_embedder(embedder_spec, cache=False, local_runtime=runtime)  # type: ignore[arg-type]
    searcher = Searcher(store, embedder)
    rng = random.Random(11)
    facts = await store.list_facts(group, limit=2000)
    queries = [" ".join(rng.sample(f.fact.split(), 4)) + "?" for f in rng.sample(facts, n_queries)]
    filters = SearchFilters(now=NOW)
    samples: dict[str, list[float]] = {}
    cold = time.perf_counter()
    await searcher.context(group, queries[0], now=NOW)  # loads the model and (SQLite) the in-memory indexes
    figures = {"first_context_seconds": time.perf_counter() - cold}
    figures.update(await vector_index_figures(store, group, ""))
    for query in queries[1:5]:
        await searcher.context(group, query, now=NOW)
    load_before = os.getloadavg()[0]
    server = store if getattr(store, "connection", None) is not None else None  # FalkorDB: server CPU per step
    for query in queries:
        vector = (await timed(samples, "embed_query", lambda q=query: embedder.embed([q])))[0]
        cos = await timed(samples, "vector", lambda v=vector: store.vector_search(group, Scope.FACTS, v, limit=50,
                                                                                   filters=filters), server)
        bm = await timed(samples, "bm25", lambda q=query: store.fulltext_search(group, Scope.FACTS, q, limit=50,
                                                                                filters=filters), server)
        seeds = [e for f in await store.get_facts(group, [h.id for h in cos[:10] + bm[:10]]) for e in f.entity_ids]
        reached = await timed(samples, "bfs", lambda s=seeds: store.bfs(group, s[:20], max_hops=2, filters=filters,
                                                                        limit=50), server)
        rankings = [[h.id for h in cos], [h.id for h in bm], list(reached.facts)]
        await timed(samples, "rrf", lambda r=rankings: asyncio.sleep(0, rrf(r)))
        await timed(samples, "search", lambda q=query: searcher.search(group, q, config=recipe("context"), now=NOW))
    server_mid, queries_mid = await server_cpu_seconds(store), await graph_queries(store)
    for query in queries:  # context() alone, so the server's CPU per context() can be told apart
        await timed(samples, "context", lambda q=query: searcher.context(group, q, now=NOW))
    server_after, queries_after = await server_cpu_seconds(store), await graph_queries(store)
    figures["load_avg_1m"] = (load_before + os.getloadavg()[0]) / 2
    for name in ("context", "search", "embed_query", "vector", "bm25", "bfs", "rrf"):
        figures[f"{name}_p50_ms"] = p(samples[name], 50)
        figures[f"{name}_p95_ms"] = p(samples[name], 95)
    for name in ("embed_query", "vector", "bm25", "bfs"):  # CPU time: what load does not inflate
        figures[f"{name}_cpu_p50_ms"] = p(samples[f"{name}_cpu"], 50)
    figures["context_cpu_ms"] = p(samples["context_cpu"], 50)
    figures["context_cpu_p95_ms"] = p(samples["context_cpu"], 95)
    if server_mid is not None and server_after is not None:
        figures["server_cpu_per_context_ms"] = (server_after - server_mid) * 1000 / len(queries)
    if queries_mid is not None and queries_after is not None:
        figures["graph_queries_per_context"] = (queries_after - queries_mid) / len(queries)
    for name in ("vector", "bm25", "bfs"):
        if f"{name}_server_cpu" in samples:  # what the server spent on the step alone (not load-inflated wall)
            figures[f"{name}_server_cpu_p50_ms"] = p(samples[f"{name}_server_cpu"], 50)
            figures[f"{name}_server_cpu_p95_ms"] = p(samples[f"{name}_server_cpu"], 95)
    return figures


def _store_settings(ann_from: int | None) -> Any:
    from chronomem.store.settings import StoreSettings

    return StoreSettings() if ann_from is None else StoreSettings(sqlite_ann_from=ann_from)


def _url(args: argparse.Namespace, n_facts: int) -> str:
    if args.store == "sqlite":
        return f"sqlite:///{args.out / f'search-{n_facts}.db'}"
    url: str = args.falkordb_url
    if "socket_timeout" not in url:  # a 10,000-fact batch with its HNSW inserts outlasts the default 30 s
        url += ("&" if "?" in url else "?") + "socket_timeout=1800"
    return url


async def one_size(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from chronomem.store.factory import open_store

    args.out.mkdir(parents=True, exist_ok=True)
    group = group_of(args.facts)
    store = await open_store(_url(args, args.facts), _store_settings(args.ann_from))
    figures: dict[str, float] = {}
    try:
        stats = await store.stats(group)
        if stats.facts != args.facts or stats.communities != 200:  # absent, or a build that stopped midway
            await store.delete_group(group)
            started = time.perf_counter()
            await build(store, group, args.facts)
            figures["build_seconds"] = time.perf_counter() - started
            figures["build_load_avg_1m"] = os.getloadavg()[0]
        waited = await wait_for_indexes(store, group)
        if waited is not None:
            figures["index_wait_seconds"] = waited  # > 0: the server was rebuilding its HNSW indexes
        if not args.build_only:
            figures.update(await measure(
                store, group, args.queries, "hashing" if args.hashing else args.embedder, args.embedder_runtime
            ))
            figures["vector_recall_at_10"] = await recall_random(store, group, args.facts)
            # SQLite: the real-sentence group lives in a file of its own, so the group's file size stays its own
            real_db = args.real_db or args.out / "recall-real.db"
            real_store = (await open_store(f"sqlite:///{real_db}", _store_settings(args.real_ann_from))
                          if args.store == "sqlite" else store)
            try:
                recall, real_facts, real_index = await recall_real(real_store, args.real)
                figures["vector_recall_at_10_real"], figures["recall_real_facts"] = recall, real_facts
                figures.update(real_index)
            finally:
                if real_store is not store:
                    await real_store.close()
        memory = await graph_memory_mb(store, group)
        if memory is not None:
            figures["graph_memory_mb"] = memory  # this group's graph and its indexes (GRAPH.MEMORY USAGE)
            figures["server_used_memory_mb"] = await store.memory_used_mb()  # every graph on the server
    finally:
        await store.close()
    if args.store == "sqlite":
        path = args.out / f"search-{args.facts}.db"
        figures["file_size_mb"] = sum(f.stat().st_size for f in args.out.glob(path.name + "*")) / 2**20
    figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    print(f"store: {args.store}")
    print(f"facts: {args.facts}")
    print(f"queries: {args.queries}")
    for name, value in figures.items():
        print(f"{name}: {value:.4f}" if "recall" in name and "facts" not in name else f"{name}: {value:.2f}")
    return 0


def run_scales(args: argparse.Namespace, argv: list[str]) -> int:
    """Each size in its own process (its own peak memory), then the growth of each figure."""
    sizes = [int(s) for s in args.scales.split(",")]
    passed = [a for i, a in enumerate(argv) if not a.startswith("--scales") and (i == 0 or argv[i - 1] != "--scales")]
    results: dict[int, dict[str, float]] = {}
    for size in sizes:
        print(f"running {size} facts", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, __file__, *passed, "--facts", str(size)], check=True,
                              capture_output=True, text=True)
        results[size] = {}
        for line in done.stdout.splitlines():
            name, _, value = line.partition(": ")
            print(f"{name}[{size}]: {value}")
            with contextlib.suppress(ValueError):  # "store: sqlite" is not a figure
                results[size][name] = float(value)
    for name in GROWTH:
        values = [(s, results[s][name]) for s in sizes if name in results[s]]
        if len(values) > 1:
            steps = ", ".join(f"x{b / a:.2f}" if a else "n/a" for (_, a), (_, b) in itertools.pairwise(values))
            print(f"{name}_growth: {' -> '.join(f'{v:.4g}' for _, v in values)} ({steps})")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=["sqlite", "falkordb"], default="sqlite")
    parser.add_argument("--falkordb-url", default="falkordb://127.0.0.1:6379")
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--scales", default="", help="comma-separated sizes, each run in its own process")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--real", type=int, default=100_000, help="real MiniLM vectors for recall (at most)")
    parser.add_argument("--out", type=Path, default=OUT, help="directory of the SQLite files (default bench/out)")
    parser.add_argument("--real-db", type=Path, default=None,
                        help="file of the real-vector group (default: recall-real.db in --out)")
    parser.add_argument("--ann-from", type=int, default=None,
                        help="SQLite: facts from which the approximate index is used (default: the store's)")
    parser.add_argument("--real-ann-from", type=int, default=0,
                        help="the same for the real-vector recall group (default 0: forced on)")
    parser.add_argument("--embedder-runtime", default="auto", choices=["auto", "onnx", "torch"],
                        help="how a local embedder runs its model (default: ONNX Runtime where it can)")
    parser.add_argument("--hashing", action="store_true", help="hashing embedder instead of MiniLM")
    parser.add_argument("--embedder", default="local", help="embedder spec (build_embedder), default MiniLM")
    parser.add_argument("--build-only", action="store_true", help="build (or check) the group; measure nothing")
    args = parser.parse_args(argv)
    if args.scales:
        return run_scales(args, argv)
    return asyncio.run(one_size(args))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
