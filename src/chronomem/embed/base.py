"""The embedder port: texts in, unit-normalized float32 vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of a fixed dimension."""

    @property
    def dimension(self) -> int:
        """Length of every vector this embedder returns."""

    @property
    def model_name(self) -> str:
        """Identifies the model (part of cache keys: vectors of different models never mix)."""

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A ``(len(texts), dimension)`` float32 array of L2-normalized rows, in input order."""
