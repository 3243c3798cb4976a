"""A disk cache of embeddings for the evaluation harness, keyed by model and text hash.

Embedding ~6,000 LoCoMo turns and ~15,000 LongMemEval turns with MiniLM on two CPU cores takes
minutes; cached, a re-run takes seconds. One ``.npz`` file per model holds every vector seen.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chronomem.embed.base import Embedder

__all__ = ["DiskCachedEmbedder"]


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


class DiskCachedEmbedder:
    """Wraps an embedder; texts already embedded by the same model are read from ``directory``.

    Call :meth:`save` to persist what was added (the harness does at the end of ingestion).
    """

    def __init__(self, inner: Embedder, directory: str | Path, *, batch_size: int = 256) -> None:
        self.inner = inner
        self.batch_size = batch_size
        safe = re.sub(r"[^\w.-]+", "_", inner.model_name)
        self.path = Path(directory) / f"vectors-{safe}.npz"
        self._vectors: dict[str, np.ndarray] = {}
        self._dirty = False
        if self.path.exists():
            with np.load(self.path) as data:
                self._vectors = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [_key(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._vectors))
        if missing:
            by_key = dict(zip(keys, texts, strict=True))
            for start in range(0, len(missing), self.batch_size):
                chunk = missing[start : start + self.batch_size]
                vectors = await self.inner.embed([by_key[k] for k in chunk])
                self._vectors.update(zip(chunk, vectors, strict=True))
            self._dirty = True
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._vectors[k] for k in keys]).astype(np.float32, copy=False)

    def save(self) -> None:
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._vectors), dtype="U32")
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, vectors=np.stack(list(self._vectors.values())).astype(np.float32))
        tmp.replace(self.path)
        self._dirty = False
