"""Vector recall@10 of each store backend on real sentence embeddings (not random vectors).

``bench/store.py`` measures recall on random 384-d unit vectors, the worst case for an approximate
(HNSW) index. This asks what a user sees: every LoCoMo turn ("speaker: text", 5,882 of them) is a
fact embedded with the local MiniLM model, and the LoCoMo questions are the queries. Each backend's
``vector_search`` top-10 is compared with exact cosine top-10 computed here with numpy.

    .venv/bin/python bench/vector_recall.py [--store sqlite|falkordb|both] [--falkordb-url URL] [--queries 300]
                                            [--ann-from 0]

Prints ``vector_recall_at_10_real`` (SQLite) and ``falkordb_vector_recall_at_10_real``, with the
p95 latency of those searches. Embeddings are cached under bench/out/ so re-runs are quick. SQLite
forces its approximate index on (``--ann-from 0``; a 5,882-fact group would otherwise be searched
exactly), so its figure is the recall of the approximate index's parameter rule at this size;
``--ann-from 1000000000`` measures the exact path instead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import uuid
from pathlib import Path

import numpy as np

from chronomem.datasets.locomo import load_locomo
from chronomem.domain import Entity, Fact
from chronomem.embed import build_embedder
from chronomem.store import GraphWrite, Scope, Store, open_store
from chronomem.store.settings import StoreSettings

HERE = Path(__file__).resolve().parent
LOCOMO = HERE.parents[1] / "shared" / "data" / "locomo10.json"
OUT = HERE / "out"
K = 10


def corpus_and_queries(limit: int) -> tuple[list[str], list[str]]:
    samples = load_locomo(LOCOMO)
    texts = [f"{t.speaker}: {t.text}" for s in samples for t in s.turns]
    questions = [q.question for s in samples for q in s.questions]
    rng = np.random.default_rng(7)
    picked = rng.choice(len(questions), size=min(limit, len(questions)), replace=False)
    return texts, [questions[i] for i in sorted(picked)]


async def load(store: Store, group: str, texts: list[str], vectors: np.ndarray) -> list[str]:
    a, b = Entity(group_id=group, name="Speaker A"), Entity(group_id=group, name="Speaker B")
    await store.write(GraphWrite(group_id=group, entities=[a, b]))
    ids: list[str] = []
    for start in range(0, len(texts), 500):
        facts = [
            Fact(group_id=group, source_id=a.id, target_id=b.id, fact=text)
            for text in texts[start : start + 500]
        ]
        vecs = {f.id: vectors[start + i] for i, f in enumerate(facts)}
        await store.write(GraphWrite(group_id=group, facts=facts, fact_vectors=vecs))
        ids += [f.id for f in facts]
    return ids


async def measure(url: str, texts: list[str], vectors: np.ndarray, queries: np.ndarray,
                  settings: StoreSettings) -> tuple[float, float, bool]:
    store = await open_store(url, settings)
    group = f"recall-{uuid.uuid4().hex[:8]}"
    try:
        ids = await load(store, group, texts, vectors)
        position = {fact_id: i for i, fact_id in enumerate(ids)}
        scores = queries @ vectors.T
        kth = -np.sort(-scores, axis=1)[:, K - 1]
        await store.vector_search(group, Scope.FACTS, queries[0], limit=K)  # warm-up: indexes build lazily
        info = await store.vector_index_info(group, wait_seconds=600) if hasattr(store, "vector_index_info") else None
        approximate = bool(info and info["approximate"])
        recalls, latencies = [], []
        for row, query in enumerate(queries):
            started = time.perf_counter()
            hits = await store.vector_search(group, Scope.FACTS, query, limit=K)
            latencies.append((time.perf_counter() - started) * 1000)
            # A hit is right when it scores at least the exact 10th best (repeated turns tie exactly).
            right = [h for h in hits if scores[row, position[h.id]] >= kth[row] - 1e-5]
            recalls.append(len(right) / K)
        return statistics.fmean(recalls), float(np.percentile(latencies, 95)), approximate
    finally:
        await store.delete_group(group)
        await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=["sqlite", "falkordb", "both"], default="sqlite")
    parser.add_argument("--falkordb-url", default="falkordb://127.0.0.1:6379")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--ann-from", type=int, default=0, help="SQLite: rows from which the approximate index is used")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    OUT.mkdir(exist_ok=True)

    texts, questions = corpus_and_queries(args.queries)
    embedder = build_embedder("local", cache_path=OUT / "vector-recall-embeddings.db")
    vectors = np.asarray(await embedder.embed(texts), dtype=np.float32)
    queries = np.asarray(await embedder.embed(questions), dtype=np.float32)
    print(f"facts: {len(texts)}")
    print(f"queries: {len(questions)}")

    targets = {"sqlite": f"sqlite:///{OUT / f'vector-recall-{os.getpid()}.db'}", "falkordb": args.falkordb_url}
    for name in ("sqlite", "falkordb") if args.store == "both" else (args.store,):
        recall, p95, approximate = await measure(targets[name], texts, vectors, queries,
                                                 StoreSettings(sqlite_ann_from=args.ann_from))
        prefix = "" if name == "sqlite" else f"{name}_"
        if name == "sqlite":
            print(f"vector_index_approximate: {int(approximate)}")
        print(f"{prefix}vector_recall_at_10_real: {recall:.4f}")
        print(f"{prefix}vector_real_p95_ms: {p95:.2f}")
    for suffix in ("", "-wal", "-shm"):
        Path(targets["sqlite"].removeprefix("sqlite:///") + suffix).unlink(missing_ok=True)


if __name__ == "__main__":
    asyncio.run(main())
