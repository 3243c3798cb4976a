"""Rows ranked by a score array, with filters checked window by window.

Both in-memory indexes (vectors, BM25) score every row of a (group, scope) at once with numpy, then
walk that ranking in growing windows, asking the caller which ids of a window pass the filters, until
``limit`` hits are found or the ranking runs out: a filtered search never returns fewer hits than
exist. A version counter, bumped by every change, tells a paused walk that its row numbers went stale.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from chronomem.store.base import ScoredId

__all__ = ["Accept", "RankedRows", "walk_ranking"]

Accept = Callable[[list[str]], set[str]]
_FIRST_WINDOW = 64
_RETRIES = 8
_SPARSE_FROM = 10_000  # rows from which a min_score walk ranks only the rows at or above it


class RankedRows:
    """Row ids plus a lock; subclasses hold the data the scores come from."""

    def __init__(self, ids: list[str | None]) -> None:
        self._lock = threading.RLock()  # re-entered by the locked fallback of search()
        self._ids = ids  # None marks a dead row (text index) until compaction
        self._version = 0

    def _touch(self) -> None:
        self._version += 1

    def _scores(self, query: object) -> np.ndarray:
        """Score of every row (0 or less: not a hit); called with the lock held."""
        raise NotImplementedError

    def search(
        self, query: object, limit: int, *, min_score: float | None = None, accept: Accept | None = None
    ) -> list[ScoredId]:
        for _ in range(_RETRIES):  # a write may land between two windows; start again
            with self._lock:
                version, scores = self._version, self._scores(query)
            found = self._walk(version, scores, limit, min_score, accept)
            if found is not None:
                return found
        with self._lock:  # under a steady stream of writes, hold the lock throughout
            return self._walk(self._version, self._scores(query), limit, min_score, accept) or []

    def _window(self, version: int, order: np.ndarray, scores: np.ndarray) -> list[ScoredId] | None:
        with self._lock:
            if version != self._version:
                return None
            return [ScoredId(self._ids[i], float(scores[i])) for i in order if self._ids[i] is not None]

    def _walk(
        self, version: int, scores: np.ndarray, limit: int, min_score: float | None, accept: Accept | None
    ) -> list[ScoredId] | None:
        return walk_ranking(scores, lambda order: self._window(version, order, scores), limit, min_score, accept)


def walk_ranking(
    scores: np.ndarray,
    hits_of: Callable[[np.ndarray], list[ScoredId] | None],
    limit: int,
    min_score: float | None,
    accept: Accept | None,
) -> list[ScoredId] | None:
    """Walk rows by descending score in growing windows; ``hits_of`` turns row numbers into hits
    (None: the rows went stale)."""
    if min_score is not None and scores.shape[0] >= _SPARSE_FROM:
        # Rank only the rows that can qualify: BM25 at 1M rows scores a few hundred thousand, and
        # partitioning those instead of every row halved the ranking's cost (10 -> 5 ms, loaded).
        qualify = np.flatnonzero(scores >= min_score)
        if qualify.size < scores.shape[0] // 2:
            return walk_ranking(scores[qualify], lambda order: hits_of(qualify[order]), limit, None, accept)
    total = scores.shape[0]
    hits: list[ScoredId] = []
    start, window = 0, (max(_FIRST_WINDOW, limit * 4) if accept else limit)
    while start < total and len(hits) < limit:
        stop = min(total, start + window)
        candidates = hits_of(_ranked_slice(scores, start, stop))
        if candidates is None:
            return None
        kept = [c for c in candidates if min_score is None or c.score >= min_score]
        passing = accept([c.id for c in kept]) if accept and kept else None
        hits.extend(c for c in kept if passing is None or c.id in passing)
        if len(kept) < len(candidates):  # the ranking fell below min_score: nothing better follows
            break
        start, window = stop, window * 4
    return hits[:limit]


def _ranked_slice(scores: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Indices of the rows ranked start..stop-1 by descending score (ties by row)."""
    total = scores.shape[0]
    if stop >= total:
        top = np.argsort(-scores, kind="stable")
    else:
        top = np.argpartition(-scores, stop - 1)[:stop]
        top = top[np.lexsort((top, -scores[top]))]
    return top[start:stop]
