"""A plain Okapi BM25 ranker over in-memory texts: the baseline the harness reports beside chronomem.

Independent of any store on purpose, so the baseline means the same thing on every backend.
Lucene's idf (always positive), k1 = 1.2, b = 0.75, lower-cased word tokens, no stemming.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from chronomem.text.words import WORD

__all__ = ["BM25", "tokenize"]



def tokenize(text: str) -> list[str]:
    return WORD.findall(text.casefold())


class BM25:
    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._docs = [Counter(tokenize(t)) for t in texts]
        self._lengths = [sum(d.values()) for d in self._docs]
        self._avg = (sum(self._lengths) / len(self._docs)) if self._docs else 0.0
        frequency: Counter[str] = Counter()
        for doc in self._docs:
            frequency.update(doc.keys())
        n = len(self._docs)
        self._idf = {term: math.log(1 + (n - df + 0.5) / (df + 0.5)) for term, df in frequency.items()}

    def scores(self, query: str) -> list[float]:
        terms = [t for t in tokenize(query) if t in self._idf]
        result = []
        for doc, length in zip(self._docs, self._lengths, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self._avg) if self._avg else self.k1
            result.append(
                sum(self._idf[t] * doc[t] * (self.k1 + 1) / (doc[t] + norm) for t in terms if t in doc)
            )
        return result

    def rank(self, query: str, k: int | None = None) -> list[int]:
        """Document indices, best first (ties by index)."""
        scores = self.scores(query)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return order if k is None else order[:k]
