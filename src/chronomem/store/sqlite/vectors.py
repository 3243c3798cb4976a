"""In-memory vector matrices: exact cosine over unit float32 rows.

Small groups are scored with one numpy matrix-vector product. From ``accelerate_from`` rows on (and
when faiss is installed) a half-precision scan picks candidates and float32 rescoring ranks them,
with the same results (see fastscan.py) at a fraction of the memory traffic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chronomem.store.base import ScoredId
from chronomem.store.sqlite.fastscan import HalfPrecisionScan, faiss_module
from chronomem.store.sqlite.ranking import Accept, RankedRows

__all__ = ["ACCELERATE_FROM", "VectorIndex"]

ACCELERATE_FROM = 20_000


class VectorIndex(RankedRows):
    def __init__(self, ids: list[str], blobs: Sequence[bytes], *, accelerate_from: int = ACCELERATE_FROM) -> None:
        super().__init__(list(ids))
        self._rows = {id_: row for row, id_ in enumerate(ids)}
        if blobs:
            self._matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1).copy()
        else:
            self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._count = len(ids)
        self._accelerate_from = accelerate_from
        self._scan: HalfPrecisionScan | None = None
        self._maybe_accelerate()

    def __len__(self) -> int:
        return self._count

    @property
    def dimension(self) -> int | None:
        return self._matrix.shape[1] if self._count else None

    @property
    def accelerated(self) -> bool:
        return self._scan is not None

    def _maybe_accelerate(self) -> None:
        faiss = faiss_module() if self._count and self._count >= self._accelerate_from else None
        if self._scan is None and faiss is not None:
            self._scan = HalfPrecisionScan(faiss, self._live_ids(), self._matrix)

    def _live_ids(self) -> list[str]:
        return [i for i in self._ids if i is not None]

    def upsert(self, id_: str, vector: np.ndarray) -> None:
        with self._lock:
            self._touch()
            row = self._rows.get(id_)
            if row is None:
                self._grow(vector.shape[0])
                row = self._count
                self._ids.append(id_)
                self._rows[id_] = row
                self._count += 1
            self._matrix[row] = vector
            if self._scan is None:
                self._maybe_accelerate()
            else:
                self._scan.upsert(id_, vector)
                self._rebuild_scan_if_worn()

    def remove(self, id_: str) -> None:
        """Swap-remove: the last row moves into the hole."""
        with self._lock:
            row = self._rows.pop(id_, None)
            if row is None:
                return
            self._touch()
            last = self._count - 1
            if row != last:
                moved = self._ids[last]
                assert moved is not None
                self._matrix[row] = self._matrix[last]
                self._ids[row] = moved
                self._rows[moved] = row
            self._ids.pop()
            self._count -= 1
            if self._scan is not None:
                self._scan.remove(id_)
                self._rebuild_scan_if_worn()

    def _rebuild_scan_if_worn(self) -> None:
        if self._scan is not None and self._scan.needs_rebuild():
            self._scan.rebuild(self._live_ids(), self._matrix)

    def _grow(self, dimension: int) -> None:
        if self._matrix.shape[0] > self._count and self._matrix.shape[1] == dimension:
            return
        capacity = max(16, self._matrix.shape[0] * 2)
        grown = np.zeros((capacity, dimension), dtype=np.float32)
        if self._count:
            grown[: self._count] = self._matrix[: self._count]
        self._matrix = grown

    def _scores(self, query: object) -> np.ndarray:
        vector = np.asarray(query, dtype=np.float32)
        if self._count == 0 or vector.shape[0] != self._matrix.shape[1]:
            return np.empty(0, dtype=np.float32)
        return self._matrix[: self._count] @ vector

    def search(
        self, query: object, limit: int, *, min_score: float | None = None, accept: Accept | None = None
    ) -> list[ScoredId]:
        with self._lock:
            if self._scan is not None:
                return self._scan_search(np.asarray(query, dtype=np.float32), limit, min_score, accept)
        return super().search(query, limit, min_score=min_score, accept=accept)

    def _scan_search(
        self, query: np.ndarray, limit: int, min_score: float | None, accept: Accept | None
    ) -> list[ScoredId]:
        """Widen the half-precision candidates until ``limit`` exact, accepted hits are certain."""
        assert self._scan is not None
        k = max(64, limit * 4) if accept else limit + 32
        verdicts: dict[str, bool] = {}
        while True:
            ids, line = self._scan.candidates(query, k)
            hits, complete = self._certain_hits(ids, line, query, min_score)
            if accept is not None:
                unknown = [h.id for h in hits if h.id not in verdicts]
                if unknown:
                    passing = accept(unknown)
                    verdicts.update((i, i in passing) for i in unknown)
                hits = [h for h in hits if verdicts[h.id]]
            if len(hits) >= limit or complete or k >= self._scan.size:
                return hits[:limit]
            k *= 4

    def _certain_hits(
        self, ids: list[str], line: float, query: np.ndarray, min_score: float | None
    ) -> tuple[list[ScoredId], bool]:
        """Candidates rescored in float32, best first, down to ``line`` (below it an unseen row might
        rank higher); ``complete`` when nothing unseen can still qualify."""
        rows = np.fromiter((self._rows[i] for i in ids), dtype=np.int64, count=len(ids))
        exact = self._matrix[rows] @ query if len(ids) else np.empty(0, dtype=np.float32)
        unseen_too_weak = line == float("-inf") or (min_score is not None and line < min_score)
        hits: list[ScoredId] = []
        for j in np.argsort(-exact, kind="stable"):
            score = float(exact[j])
            if score < line:
                return hits, unseen_too_weak
            if min_score is not None and score < min_score:
                return hits, True  # every unseen row scores at most line <= score
            hits.append(ScoredId(ids[j], score))
        return hits, unseen_too_weak
