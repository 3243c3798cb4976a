"""In-memory vector matrices: exact cosine over unit float32 rows.

Small groups are scored with one numpy matrix-vector product. From ``accelerate_from`` rows on (and
when faiss is installed) a half-precision scan picks candidates and float32 rescoring ranks them,
with the same results (see fastscan.py) at a fraction of the memory traffic.

Fact vectors also keep their fact's four timestamps, so the time filters (as_of, known_at, ranges,
current-only) become a numpy mask: a selective one shrinks the scan to the rows that pass.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chronomem.store.base import ScoredId
from chronomem.store.sqlite.fastscan import HalfPrecisionScan, faiss_module
from chronomem.store.sqlite.ranking import Accept, RankedRows, walk_ranking
from chronomem.store.sqlite.timemask import NULL_TIME, TimeMask, TimeOverrides

__all__ = ["ACCELERATE_FROM", "VectorIndex", "dot_rows"]

ACCELERATE_FROM = 20_000
_SELECTIVE = 0.1  # a mask passing fewer rows than this share is scanned row by row, exactly


def dot_rows(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``matrix @ query`` without BLAS. OpenBLAS splits a matrix-vector product over its threads, and
    on a busy machine each query then waits for the slowest of them, spinning meanwhile: at 10,000 x 384
    (load ~6 on two cores) ``@`` took 24 ms of wall and 7.8 ms of CPU where einsum's single-threaded
    SIMD loop took 0.9 and 0.9; at 100,000 rows, 57/17 against 18/6.8 ms. One search is one vector, so
    there is no parallel work worth having: a service runs many searches at once instead."""
    scores: np.ndarray = np.einsum("ij,j->i", matrix, query)
    return scores


class VectorIndex(RankedRows):
    def __init__(
        self,
        ids: list[str],
        blobs: Sequence[bytes],
        *,
        times: np.ndarray | None = None,
        accelerate_from: int = ACCELERATE_FROM,
    ) -> None:
        super().__init__(list(ids))
        self._rows = {id_: row for row, id_ in enumerate(ids)}
        if blobs:  # one copy: bytearray.join builds the writable buffer the matrix views
            self._matrix = np.frombuffer(bytearray().join(blobs), dtype=np.float32).reshape(len(blobs), -1)
        else:
            self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._count = len(ids)
        self._times = None if times is None else np.array(times, dtype=np.int64).reshape(len(ids), 4)
        self._accelerate_from = accelerate_from
        self._scan: HalfPrecisionScan | None = None
        self._maybe_accelerate()

    def __len__(self) -> int:
        return self._count

    @property
    def dimension(self) -> int | None:
        return self._matrix.shape[1] if self._count else None

    def memory_bytes(self) -> int:
        """Approximate: the float32 rows, their float16 copy, timestamps and ~120 bytes per id."""
        dimension = self._matrix.shape[1] if self._matrix.ndim == 2 else 0
        scan = self._scan.size * dimension * 2 if self._scan is not None else 0
        times = self._times.nbytes if self._times is not None else 0
        return self._matrix.nbytes + scan + times + 120 * self._count

    @property
    def accelerated(self) -> bool:
        return self._scan is not None

    def _maybe_accelerate(self) -> None:
        faiss = faiss_module() if self._count and self._count >= self._accelerate_from else None
        if self._scan is None and faiss is not None:
            self._scan = HalfPrecisionScan(faiss, self._live_ids(), self._matrix)

    def _live_ids(self) -> list[str]:
        return [i for i in self._ids if i is not None]

    def set_times(self, id_: str, times: np.ndarray) -> None:
        with self._lock:
            row = self._rows.get(id_)
            if row is not None and self._times is not None:
                self._touch()
                self._times[row] = times

    def upsert(self, id_: str, vector: np.ndarray, times: np.ndarray | None = None) -> None:
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
            if self._times is not None:
                self._times[row] = NULL_TIME if times is None else times
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
                if self._times is not None:
                    self._times[row] = self._times[last]
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
        if self._times is not None:
            grown_times = np.full((capacity, 4), NULL_TIME, dtype=np.int64)
            grown_times[: self._count] = self._times[: self._count]
            self._times = grown_times

    def _scores(self, query: object) -> np.ndarray:
        vector = np.asarray(query, dtype=np.float32)
        if self._count == 0 or vector.shape[0] != self._matrix.shape[1]:
            return np.empty(0, dtype=np.float32)
        return dot_rows(self._matrix[: self._count], vector)

    def search(
        self,
        query: object,
        limit: int,
        *,
        min_score: float | None = None,
        accept: Accept | None = None,
        mask: TimeMask | None = None,
        overrides: TimeOverrides | None = None,
    ) -> list[ScoredId]:
        """``mask`` (fact indexes only) picks the rows whose timestamps pass the time filters;
        ``overrides`` gives other timestamps for some facts (the versions in force at a past time)."""
        vector = np.asarray(query, dtype=np.float32)
        with self._lock:
            keep = None if mask is None or self._times is None else mask(self._times[: self._count])
            if keep is not None and (overrides is None or not overrides.ids) and keep.all():
                keep = None  # every row passes (the usual "current facts" of a group without history)
            if keep is not None and overrides is not None and overrides.ids:
                self._apply_overrides(keep, mask, overrides)
            if keep is not None and (self._scan is None or keep.sum() < _SELECTIVE * self._count):
                return self._subset_search(np.flatnonzero(keep), vector, limit, min_score, accept)
            if self._scan is not None:
                return self._scan_search(vector, limit, min_score, accept, keep)
        return super().search(vector, limit, min_score=min_score, accept=accept)

    def _apply_overrides(self, keep: np.ndarray, mask: TimeMask | None, overrides: TimeOverrides) -> None:
        assert mask is not None
        rows = [self._rows.get(id_, -1) for id_ in overrides.ids]
        held = np.fromiter(rows, dtype=np.int64, count=len(rows))
        present = held >= 0
        keep[held[present]] = mask(overrides.times[present])

    def _subset_search(
        self, rows: np.ndarray, query: np.ndarray, limit: int, min_score: float | None, accept: Accept | None
    ) -> list[ScoredId]:
        """Exact scores of the given rows only (called with the lock held)."""
        scores = dot_rows(self._matrix[rows], query) if rows.size else np.empty(0, dtype=np.float32)

        def hits_of(order: np.ndarray) -> list[ScoredId]:
            return [ScoredId(self._ids[rows[i]], float(scores[i])) for i in order]

        return walk_ranking(scores, hits_of, limit, min_score, accept) or []

    def _scan_search(
        self,
        query: np.ndarray,
        limit: int,
        min_score: float | None,
        accept: Accept | None,
        keep: np.ndarray | None,
    ) -> list[ScoredId]:
        """Widen the half-precision candidates until ``limit`` exact, accepted hits are certain."""
        assert self._scan is not None
        k = max(64, limit * 4) if accept else limit + 32
        if keep is not None and self._count:  # aim for one scan: enough candidates for the mask's pass rate
            k = int(k / max(float(keep.mean()), _SELECTIVE) * 1.5)
        verdicts: dict[str, bool] = {}
        while True:
            ids, line = self._scan.candidates(query, k)
            if keep is not None:  # masked rows are seen (the line still holds) but never hits
                ids = [i for i in ids if keep[self._rows[i]]]
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
        exact = dot_rows(self._matrix[rows], query) if len(ids) else np.empty(0, dtype=np.float32)
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
