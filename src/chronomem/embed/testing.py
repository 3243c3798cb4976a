"""A deterministic embedder for tests and benchmarks: no model, no I/O, stable across runs.

It hashes word unigrams and character trigrams into a fixed number of buckets (the hashing trick),
so texts that share words get similar vectors — enough for resolution and search tests to mean
something — while identical texts always get identical vectors.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from chronomem.text.words import WORD

__all__ = ["HashingEmbedder"]



class HashingEmbedder:
    def __init__(self, dimension: int = 384) -> None:
        self._dimension = dimension
        self.calls = 0  # how many embed() calls were made (tests assert caching with it)
        self.texts_embedded = 0

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def model_name(self) -> str:
        return f"hashing-{self._dimension}"

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self._dimension, 1.0 if (value >> 63) & 1 else -1.0

    def embed_one(self, text: str) -> np.ndarray:
        vector = np.zeros(self._dimension, dtype=np.float32)
        words = WORD.findall(text.casefold())
        for word in words:
            index, sign = self._bucket("w:" + word)
            vector[index] += 2.0 * sign
            padded = f"#{word}#"
            for i in range(len(padded) - 2):
                index, sign = self._bucket("c:" + padded[i : i + 3])
                vector[index] += 0.5 * sign
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0
            return vector
        return vector / norm

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.stack([self.embed_one(t) for t in texts])
