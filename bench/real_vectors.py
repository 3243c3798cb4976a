"""Real sentences and their MiniLM embeddings, cached on disk, for recall measurements.

    .venv/bin/python bench/real_vectors.py [--count 100000]

Texts: every LoCoMo turn ("speaker: text", 5,882) then distinct sentences of at least four words
from the LongMemEval sessions (user and assistant turns, split at sentence ends; 258,599 exist),
in a fixed shuffled order, up to ``--count``. Queries: the LoCoMo and LongMemEval questions.
Embedding runs in chunks of 5,000 saved to ``bench/out/real-vectors/`` as they finish (MiniLM does
about 120 sentences/s on the shared two-core machine), so an interrupted run resumes where it stopped.
Other benchmarks import :func:`load_real` and get the vectors already computed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"
CACHE = HERE / "out" / "real-vectors"
CHUNK = 5_000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")

__all__ = ["load_real", "real_queries", "real_texts"]


def real_texts() -> list[str]:
    """The corpus in its fixed order (the same list on every run)."""
    from chronomem.datasets.locomo import load_locomo
    from chronomem.datasets.longmemeval import load_longmemeval

    texts = [f"{t.speaker}: {t.text}" for s in load_locomo(DATA / "locomo10.json") for t in s.turns]
    sentences: dict[str, None] = {}
    for question in load_longmemeval(DATA / "longmemeval_s_dev.json.gz"):
        for session in question.sessions:
            for turn in session.turns:
                for sentence in _SENTENCE_END.split(turn.content):
                    sentence = sentence.strip()
                    if len(sentence.split()) >= 4:
                        sentences.setdefault(sentence, None)
    rest = sorted(sentences)  # sets and dicts of str hash differently per process: sort, then shuffle
    np.random.default_rng(7).shuffle(rest)
    seen = set(texts)
    return list(dict.fromkeys(texts)) + [s for s in rest if s not in seen]


def real_queries() -> list[str]:
    from chronomem.datasets.locomo import load_locomo
    from chronomem.datasets.longmemeval import load_longmemeval

    locomo = [q.question for s in load_locomo(DATA / "locomo10.json") for q in s.questions]
    return locomo + [q.question for q in load_longmemeval(DATA / "longmemeval_s_dev.json.gz")]


def _chunk_path(index: int) -> Path:
    return CACHE / f"chunk-{index:04d}.npy"


def load_real(count: int) -> tuple[list[str], np.ndarray]:
    """The first ``count`` texts that have cached vectors (fewer if not that many are embedded yet)."""
    texts = real_texts()[:count]
    parts = []
    for index in range((len(texts) + CHUNK - 1) // CHUNK):
        path = _chunk_path(index)
        if not path.exists():
            break
        parts.append(np.load(path))
    vectors = np.concatenate(parts) if parts else np.zeros((0, 384), dtype=np.float32)
    vectors = vectors[:count]
    return texts[: len(vectors)], vectors


async def embed_queries() -> np.ndarray:
    path = CACHE / "queries.npy"
    if path.exists():
        return np.load(path)
    from chronomem.embed.local import LocalEmbedder

    vectors = await LocalEmbedder(batch_size=128).embed(real_queries())
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from chronomem.embed.local import LocalEmbedder

    CACHE.mkdir(parents=True, exist_ok=True)
    texts = real_texts()[: args.count]
    embedder = LocalEmbedder(batch_size=128)
    await embed_queries()
    for index in range((len(texts) + CHUNK - 1) // CHUNK):
        path = _chunk_path(index)
        if path.exists():
            continue
        vectors = await embedder.embed(texts[index * CHUNK : (index + 1) * CHUNK])
        np.save(path.with_suffix(".tmp.npy"), vectors)
        path.with_suffix(".tmp.npy").rename(path)  # a chunk on disk is always whole
        print(f"embedded {min(len(texts), (index + 1) * CHUNK)} of {len(texts)}", file=sys.stderr, flush=True)
    print(f"real_texts: {len(texts)}")
    print(f"real_queries: {len(await embed_queries())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
