"""The embedder port: texts in, unit-normalized float32 vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "warm_up"]


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


async def warm_up(embedder: Embedder) -> None:
    """Load what the first ``embed`` would otherwise wait for (a local model takes seconds), for
    embedders that have something to load (a ``load()`` method); a no-op for the others. A server
    calls it before it says it is ready."""
    load = getattr(embedder, "load", None)
    if load is not None:
        await load()
