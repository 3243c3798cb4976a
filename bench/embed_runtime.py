"""The local embedder's two runtimes, ONNX Runtime and sentence-transformers on torch, on real text;
prints ``name: value`` lines.

    .venv/bin/python bench/embed_runtime.py [--queries 200] [--messages 640]

Queries are LoCoMo questions (``../shared/data/locomo10.json``), each embedded alone as a search
does; the batch is LoCoMo messages, embedded in one call as ingestion does. Reported per runtime:
query latency p50/p95 (wall, through the async ``embed``), the CPU time per query, the batch's
messages per second, the model's load time (for ONNX: with the graph already exported, and the
one-time export); and how far the ONNX vectors are from torch's (largest absolute difference and
smallest cosine over every query and message). Run it on an idle machine: both runtimes share it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from chronomem.embed.local import LocalEmbedder

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo10.json"


def _texts(n_queries: int, n_messages: int) -> tuple[list[str], list[str]]:
    conversations = json.loads(DATA.read_text())
    questions = [qa["question"] for c in conversations for qa in c["qa"]]
    messages = [
        turn["text"] for c in conversations for key, turns in c["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list) for turn in turns
    ]
    return questions[:n_queries], messages[:n_messages]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _measure(name: str, embedder: LocalEmbedder, queries: list[str], messages: list[str]) -> np.ndarray:
    start = time.perf_counter()
    await embedder.load()
    print(f"{name}_load_seconds: {time.perf_counter() - start:.2f}")
    for query in queries[:10]:
        await embedder.embed([query])
    walls, cpus, vectors = [], [], []
    for query in queries:
        wall, cpu = time.perf_counter(), time.process_time()
        vectors.append((await embedder.embed([query]))[0])
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    print(f"{name}_query_p50_ms: {statistics.median(walls):.2f}")
    print(f"{name}_query_p95_ms: {_pct(walls, 0.95):.2f}")
    print(f"{name}_query_cpu_ms: {statistics.median(cpus):.2f}")
    start = time.perf_counter()
    batch = await embedder.embed(messages)
    print(f"{name}_batch_messages_per_second: {len(messages) / (time.perf_counter() - start):.1f}")
    return np.vstack([np.array(vectors), batch])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--messages", type=int, default=640)
    args = parser.parse_args()
    queries, messages = _texts(args.queries, args.messages)
    print(f"queries: {len(queries)}")
    print(f"messages: {len(messages)}")
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()  # in a process of its own: the export imports torch, encoding does not
        export = (
            "import asyncio; from chronomem.embed.local import LocalEmbedder as E; "
            f"asyncio.run(E(runtime='onnx', onnx_cache_dir={cache!r}).load())"
        )
        subprocess.run([sys.executable, "-c", export], check=True)
        print(f"onnx_export_seconds: {time.perf_counter() - start:.2f}")
        ours = await _measure("onnx", LocalEmbedder(runtime="onnx", onnx_cache_dir=cache), queries, messages)
    theirs = await _measure("torch", LocalEmbedder(runtime="torch"), queries, messages)
    print(f"onnx_vs_torch_max_abs_difference: {float(np.abs(ours - theirs).max()):.2e}")
    print(f"onnx_vs_torch_min_cosine: {float((ours * theirs).sum(axis=1).min()):.7f}")


if __name__ == "__main__":
    asyncio.run(main())
