"""The cross-encoder port: scores how relevant each passage is to a query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

__all__ = ["CrossEncoder"]


@runtime_checkable
class CrossEncoder(Protocol):
    async def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage, in input order; higher is more relevant, in [0, 1]."""
