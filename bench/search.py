"""Retrieval latency on a synthetic group of 100,000 facts; prints ``name: value`` lines.

    .venv/bin/python bench/search.py [--facts 100000] [--queries 60] [--hashing] [--embedder SPEC]

The group (facts, 20,000 entities, 10,000 episodes, 200 communities, random unit vectors: the worst
case for any index) is built once in ``bench/out/search-<facts>.db`` and reused. Queries are
embedded with the local MiniLM model. Reported: p50/p95 of ``Searcher.context()`` end to end (query
embedding + cosine + BM25 + BFS over facts and entities, cosine + BM25 over communities, RRF, the
block) and of each step alone; the build time, the database file's size and the process's peak
resident memory.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "out"
GROUP = "bench-100k"
NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _words(rng: random.Random, count: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "pe", "do", "ge", "ha", "zu", "bo", "ri", "an"]
    return ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(count)]


def _unit(rng: np.random.Generator, n: int, dim: int = 384) -> np.ndarray:
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _vectors(ids: list[str], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return dict(zip(ids, _unit(rng, len(ids)), strict=True))


async def build(store, n_facts: int) -> None:
    from chronomem.domain import Community, Entity, Episode, EpisodeStatus, Fact, Mention
    from chronomem.store.base import GraphWrite

    rng, nrng = random.Random(7), np.random.default_rng(7)
    vocab = _words(rng, 5000)
    n_entities, n_episodes = max(100, n_facts // 5), max(50, n_facts // 10)
    names = [f"{rng.choice(vocab).title()} {rng.choice(vocab).title()}" for _ in range(n_entities)]
    entities = [Entity(id=f"n{i}", group_id=GROUP, name=names[i], summary=" ".join(rng.sample(vocab, 8)))
                for i in range(n_entities)]
    await store.write(GraphWrite(group_id=GROUP, entities=entities,
                                 entity_vectors=_vectors([e.id for e in entities], nrng)))
    start = datetime(2020, 1, 1, tzinfo=UTC)
    episodes = [Episode(id=f"e{i}", group_id=GROUP, content=" ".join(rng.sample(vocab, 12)), speaker="user",
                        reference_time=start + timedelta(hours=i), created_at=start + timedelta(hours=i),
                        status=EpisodeStatus.DONE) for i in range(n_episodes)]
    mentions = [Mention(group_id=GROUP, episode_id=f"e{i}", entity_id=f"n{rng.randrange(n_entities)}")
                for i in range(n_episodes) for _ in range(2)]
    await store.write(GraphWrite(group_id=GROUP, episodes=episodes, mentions=mentions,
                                 episode_vectors=_vectors([e.id for e in episodes], nrng)))
    for batch_start in range(0, n_facts, 10_000):
        facts = []
        for i in range(batch_start, min(n_facts, batch_start + 10_000)):
            a, b = rng.randrange(n_entities), rng.randrange(n_entities)
            text = f"{names[a]} {' '.join(rng.sample(vocab, 6))} {names[b]}"
            facts.append(Fact(id=f"f{i}", group_id=GROUP, source_id=f"n{a}", target_id=f"n{b}", fact=text,
                              episode_ids=(f"e{rng.randrange(n_episodes)}",),
                              valid_at=start + timedelta(minutes=i), created_at=start + timedelta(minutes=i)))
        await store.write(GraphWrite(group_id=GROUP, facts=facts, fact_vectors=_vectors([f.id for f in facts], nrng)))
        print(f"built {batch_start + len(facts)} facts", file=sys.stderr)
    communities = [Community(id=f"c{i}", group_id=GROUP, name=" ".join(rng.sample(vocab, 4)),
                             summary=" ".join(rng.sample(vocab, 20)),
                             member_ids=tuple(f"n{rng.randrange(n_entities)}" for _ in range(20))) for i in range(200)]
    await store.write(GraphWrite(group_id=GROUP, communities=communities,
                                 community_vectors=_vectors([c.id for c in communities], nrng)))


async def timed(samples: dict[str, list[float]], name: str, make: Callable[[], Awaitable[object]]) -> object:
    started = time.perf_counter()
    result = await make()
    samples.setdefault(name, []).append((time.perf_counter() - started) * 1000)
    return result


def p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--hashing", action="store_true", help="hashing embedder instead of MiniLM")
    parser.add_argument("--embedder", default="local", help="embedder spec (build_embedder), default MiniLM")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from chronomem.filters import SearchFilters
    from chronomem.search import Searcher, recipe
    from chronomem.search.rerank import rrf
    from chronomem.store.base import Scope
    from chronomem.store.factory import open_store

    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"search-{args.facts}.db"
    store = await open_store(f"sqlite:///{path}")
    built = time.perf_counter()
    if (await store.stats(GROUP)).facts < args.facts:
        await store.delete_group(GROUP)
        await build(store, args.facts)
        print(f"build_seconds: {time.perf_counter() - built:.1f}")
    from chronomem.embed.factory import build_embedder

    embedder = build_embedder("hashing" if args.hashing else args.embedder, cache=False)
    searcher = Searcher(store, embedder)
    rng = random.Random(11)
    facts = await store.list_facts(GROUP, limit=2000)
    queries = [" ".join(rng.sample(f.fact.split(), 4)) + "?" for f in rng.sample(facts, args.queries)]
    filters = SearchFilters(now=NOW)
    samples: dict[str, list[float]] = {}
    for warmup, query in enumerate(queries):
        await searcher.context(GROUP, query, now=NOW)  # loads the model and the vector matrices
        if warmup == 4:
            break
    for query in queries:
        vector = (await timed(samples, "embed_query", lambda q=query: embedder.embed([q])))[0]
        cos = await timed(samples, "cosine", lambda v=vector: store.vector_search(GROUP, Scope.FACTS, v, limit=50,
                                                                                   filters=filters))
        bm = await timed(samples, "bm25", lambda q=query: store.fulltext_search(GROUP, Scope.FACTS, q, limit=50,
                                                                                filters=filters))
        seeds = [e for f in await store.get_facts(GROUP, [h.id for h in cos[:10] + bm[:10]]) for e in f.entity_ids]
        reached = await timed(samples, "bfs", lambda s=seeds: store.bfs(GROUP, s[:20], max_hops=2, filters=filters,
                                                                        limit=50))
        rankings = [[h.id for h in cos], [h.id for h in bm], list(reached.facts)]
        await timed(samples, "rrf", lambda r=rankings: asyncio.sleep(0, rrf(r)))
        await timed(samples, "search", lambda q=query: searcher.search(GROUP, q, config=recipe("context"), now=NOW))
        await timed(samples, "context", lambda q=query: searcher.context(GROUP, q, now=NOW))
    print(f"facts: {args.facts}")
    print(f"queries: {len(queries)}")
    for name in ("context", "search", "embed_query", "cosine", "bm25", "bfs", "rrf"):
        print(f"{name}_p50_ms: {p(samples[name], 50):.2f}")
        print(f"{name}_p95_ms: {p(samples[name], 95):.2f}")
    print(f"db_file_mb: {sum(f.stat().st_size for f in OUT.glob(path.name + '*')) / 2**20:.0f}")
    print(f"peak_rss_mb: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")  # Linux: KiB
    await store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
