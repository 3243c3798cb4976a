"""In-memory search matrices, one per (group, scope), kept in sync with every committed write.

A matrix is built from the ``vectors`` table the first time its (group, scope) is searched after
the store opens; from then on the writer applies each committed change to it. Search is exact
cosine (rows are unit vectors, so a matrix-vector product) and, when a filter must hold, walks the
ranking in growing windows until ``limit`` accepted hits are found or the rows run out, so it never
returns fewer hits than exist.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from chronomem.store.base import ScoredId

__all__ = ["VectorChange", "VectorIndex", "VectorRegistry"]

_FIRST_WINDOW = 64


@dataclass(frozen=True, slots=True)
class VectorChange:
    """One committed change: ``vector`` None means the id's vector was removed."""

    group_id: str
    scope: str
    id: str
    vector: np.ndarray | None


class VectorIndex:
    """Rows of unit float32 vectors with their ids; a lock guards every read and change."""

    def __init__(self, ids: list[str], matrix: np.ndarray) -> None:
        self._lock = threading.RLock()  # re-entered by the locked fallback of search()
        self._ids = ids
        self._rows = {id_: row for row, id_ in enumerate(ids)}
        self._matrix = matrix
        self._count = len(ids)
        self._version = 0  # bumped on every change so a paused search knows its ranking went stale

    def __len__(self) -> int:
        return self._count

    def upsert(self, id_: str, vector: np.ndarray) -> None:
        with self._lock:
            self._version += 1
            row = self._rows.get(id_)
            if row is None:
                if self._count and vector.shape[0] != self._matrix.shape[1]:
                    return  # dimension mismatch is refused by the writer before commit
                self._grow(vector.shape[0])
                row = self._count
                self._ids.append(id_)
                self._rows[id_] = row
                self._count += 1
            self._matrix[row] = vector

    def remove(self, id_: str) -> None:
        """Swap-remove: the last row moves into the hole."""
        with self._lock:
            row = self._rows.pop(id_, None)
            if row is None:
                return
            self._version += 1
            last = self._count - 1
            if row != last:
                moved = self._ids[last]
                self._matrix[row] = self._matrix[last]
                self._ids[row] = moved
                self._rows[moved] = row
            self._ids.pop()
            self._count -= 1

    def _grow(self, dimension: int) -> None:
        if self._matrix.shape[0] > self._count and self._matrix.shape[1] == dimension:
            return
        capacity = max(16, self._matrix.shape[0] * 2)
        grown = np.zeros((capacity, dimension), dtype=np.float32)
        grown[: self._count] = self._matrix[: self._count]
        self._matrix = grown

    def _ranking(self, query: np.ndarray) -> tuple[int, np.ndarray]:
        """(version, scores of every row) under the lock."""
        with self._lock:
            if self._count == 0 or query.shape[0] != self._matrix.shape[1]:
                return self._version, np.empty(0, dtype=np.float32)
            return self._version, self._matrix[: self._count] @ query

    def _window(self, version: int, order: np.ndarray, scores: np.ndarray) -> list[ScoredId] | None:
        with self._lock:
            if version != self._version:
                return None
            return [ScoredId(self._ids[i], float(scores[i])) for i in order]

    def search(
        self,
        query: np.ndarray,
        limit: int,
        *,
        min_score: float | None = None,
        accept: Callable[[list[str]], set[str]] | None = None,
    ) -> list[ScoredId]:
        """Top ``limit`` by cosine; ``accept`` (if given) returns which of a window's ids pass."""
        for _ in range(8):  # a writer may invalidate a window between steps; retry from scratch
            version, scores = self._ranking(query)
            found = self._walk(version, scores, limit, min_score, accept)
            if found is not None:
                return found
        with self._lock:  # under steady writes, finish with the lock held throughout
            version, scores = self._version, self._matrix[: self._count] @ query
            return self._walk(version, scores, limit, min_score, accept) or []

    def _walk(
        self,
        version: int,
        scores: np.ndarray,
        limit: int,
        min_score: float | None,
        accept: Callable[[list[str]], set[str]] | None,
    ) -> list[ScoredId] | None:
        total = scores.shape[0]
        hits: list[ScoredId] = []
        start, window = 0, max(_FIRST_WINDOW, limit * 4) if accept else limit
        while start < total and len(hits) < limit:
            stop = min(total, start + window)
            order = _ranked_slice(scores, start, stop)
            candidates = self._window(version, order, scores)
            if candidates is None:
                return None
            if min_score is not None:
                candidates = [c for c in candidates if c.score >= min_score]
            passing = accept([c.id for c in candidates]) if accept else None
            hits.extend(c for c in candidates if passing is None or c.id in passing)
            if len(candidates) < stop - start:  # min_score cut the ranking: nothing better follows
                break
            start, window = stop, window * 4
        return hits[:limit]


def _ranked_slice(scores: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Indices of the rows ranked start..stop-1 by descending score."""
    total = scores.shape[0]
    if stop >= total:
        top = np.argsort(-scores, kind="stable")
    else:
        top = np.argpartition(-scores, stop - 1)[:stop]
        top = top[np.argsort(-scores[top], kind="stable")]
    return top[start:stop]


class VectorRegistry:
    """The matrices of every (group, scope) searched so far."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._indexes: dict[tuple[str, str], VectorIndex] = {}

    def get(self, group_id: str, scope: str) -> VectorIndex | None:
        with self._lock:
            return self._indexes.get((group_id, scope))

    def install(self, group_id: str, scope: str, ids: list[str], blobs: Sequence[bytes]) -> VectorIndex:
        """Build a matrix from stored rows (called on the writer thread, so no write interleaves)."""
        if blobs:
            matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1).copy()
        else:
            matrix = np.zeros((0, 0), dtype=np.float32)
        index = VectorIndex(ids, matrix)
        with self._lock:
            self._indexes[(group_id, scope)] = index
        return index

    def apply(self, changes: Iterable[VectorChange]) -> None:
        """Apply committed changes to the matrices that are loaded; the others rebuild from disk."""
        for change in changes:
            index = self.get(change.group_id, change.scope)
            if index is None:
                continue
            if change.vector is None:
                index.remove(change.id)
            else:
                index.upsert(change.id, change.vector)

    def drop_group(self, group_id: str) -> None:
        with self._lock:
            for key in [k for k in self._indexes if k[0] == group_id]:
                del self._indexes[key]

    def clear(self) -> None:
        with self._lock:
            self._indexes.clear()
