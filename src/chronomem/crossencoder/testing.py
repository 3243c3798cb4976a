"""A deterministic cross-encoder for tests: the share of the query's words found in the passage.

``score = |words(query) ∩ words(passage)| / |words(query)|`` (case-folded ``\\w+`` tokens), in [0, 1];
an empty query scores 0. Cheap, stable across runs, and ordered the way a test author expects.
"""

from __future__ import annotations

from collections.abc import Sequence

from chronomem.text.words import WORD

__all__ = ["TokenOverlapCrossEncoder"]



def _words(text: str) -> set[str]:
    return set(WORD.findall(text.casefold()))


class TokenOverlapCrossEncoder:
    def __init__(self) -> None:
        self.calls = 0  # score() calls (tests assert batching with it)

    async def score(self, query: str, passages: Sequence[str]) -> list[float]:
        self.calls += 1
        query_words = _words(query)
        if not query_words:
            return [0.0 for _ in passages]
        return [len(query_words & _words(passage)) / len(query_words) for passage in passages]
