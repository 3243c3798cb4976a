"""In-memory vector matrices: cosine over unit float32 rows, exact up to ``ann_from`` rows.

Small groups are scored with one numpy matrix-vector product. From ``accelerate_from`` rows on (and
when faiss is installed) a half-precision scan picks candidates and float32 rescoring ranks them,
with the same results (see fastscan.py) at a fraction of the memory traffic. From ``ann_from`` rows
on, an approximate IVF index (ann.py) picks the candidates instead and float32 rescoring ranks them:
exact scores, approximate choice. It is trained in a background thread; searches stay exact until it
is ready, and changes made meanwhile are replayed into it before it takes over.

Fact vectors also keep their fact's four timestamps, so the time filters (as_of, known_at, ranges,
current-only) become a numpy mask: a selective one shrinks the scan to the rows that pass.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np

from chronomem.store.base import ScoredId
from chronomem.store.sqlite.ann import ANN_FROM, MIN_ROWS, IvfIndex
from chronomem.store.sqlite.fastscan import HalfPrecisionScan, faiss_module
from chronomem.store.sqlite.ranking import Accept, RankedRows, walk_ranking
from chronomem.store.sqlite.timemask import NULL_TIME, CurrentAt, TimeMask, TimeOverrides, open_rows

__all__ = ["ACCELERATE_FROM", "VectorIndex", "dot_rows"]

ACCELERATE_FROM = 20_000
_SELECTIVE = 0.1  # a mask passing fewer rows than this share is scanned row by row, exactly
_BUILD_CHUNK = 50_000  # rows copied into a training index per lock hold
_WIDENINGS = 4  # approximate searches that widen before an exact scan answers instead


def dot_rows(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``matrix @ query`` without BLAS. OpenBLAS splits a matrix-vector product over its threads, and
    on a busy machine each query then waits for the slowest of them, spinning meanwhile: at 10,000 x 384
    (load ~6 on two cores) ``@`` took 24 ms of wall and 7.8 ms of CPU where einsum's single-threaded
    SIMD loop took 0.9 and 0.9; at 100,000 rows, 57/17 against 18/6.8 ms. One search is one vector, so
    there is no parallel work worth having: a service runs many searches at once instead."""
    scores: np.ndarray = np.einsum("ij,j->i", matrix, query)
    return scores


def _accepted(hits: list[ScoredId], accept: Accept | None, verdicts: dict[str, bool]) -> list[ScoredId]:
    """The hits ``accept`` lets through, asking it only about ids not judged in an earlier widening."""
    if accept is None:
        return hits
    unknown = [h.id for h in hits if h.id not in verdicts]
    if unknown:
        passing = accept(unknown)
        verdicts.update((i, i in passing) for i in unknown)
    return [h for h in hits if verdicts[h.id]]


class VectorIndex(RankedRows):
    def __init__(
        self,
        ids: list[str],
        blobs: Sequence[bytes],
        *,
        times: np.ndarray | None = None,
        accelerate_from: int = ACCELERATE_FROM,
        ann_from: int = ANN_FROM,
        background: bool = True,
    ) -> None:
        """``ann_from``: rows from which the approximate index is built (in a thread of its own
        unless ``background`` is False, when the build runs inline: for tests)."""
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
        self._ann_from, self._background = ann_from, background
        self._ann: IvfIndex | None = None
        self._ann_seconds = 0.0
        self._all_open: tuple[int, bool] = (-1, False)  # (version, every row open-ended) cache
        self._building: _Build | None = None
        self._maybe_accelerate()

    def __len__(self) -> int:
        return self._count

    @property
    def dimension(self) -> int | None:
        return self._matrix.shape[1] if self._count else None

    def memory_bytes(self) -> int:
        """Approximate: the float32 rows, their float16 copy or approximate index, timestamps and
        ~120 bytes per id."""
        dimension = self._matrix.shape[1] if self._matrix.ndim == 2 else 0
        scan = self._scan.size * dimension * 2 if self._scan is not None else 0
        ann = self._ann.memory_bytes() if self._ann is not None else 0
        times = self._times.nbytes if self._times is not None else 0
        return self._matrix.nbytes + scan + ann + times + 120 * self._count

    @property
    def accelerated(self) -> bool:
        return self._scan is not None or self._ann is not None

    @property
    def approximate(self) -> bool:
        """Does search use the approximate index (trained and caught up)?"""
        return self._ann is not None

    def describe(self) -> dict[str, float]:
        """Rows, whether search is approximate, bytes held, and the last approximate build's
        seconds (wall, training and copying the rows) and cluster counts."""
        with self._lock:
            info = {"rows": float(self._count), "approximate": float(self._ann is not None),
                    "memory_bytes": float(self.memory_bytes()), "building": float(self._building is not None)}
            if self._ann is not None:
                info.update(ann_build_seconds=self._ann_seconds, ann_memory_bytes=float(self._ann.memory_bytes()),
                            ann_nlist=float(self._ann.nlist), ann_nprobe=float(self._ann.nprobe))
            return info

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Wait for a background build of the approximate index; True when none is running."""
        build = self._building
        if build is not None:
            build.done.wait(timeout)
        return self._building is None

    def _maybe_accelerate(self) -> None:
        faiss = faiss_module() if self._count and self._count >= self._accelerate_from else None
        if self._scan is None and self._ann is None and faiss is not None:
            self._scan = HalfPrecisionScan(faiss, self._live_ids(), self._matrix)
        self._maybe_build_ann()

    def _maybe_build_ann(self) -> None:
        """Start training the approximate index once the group reaches ``ann_from`` rows, and again
        (the old one serving meanwhile) when it has doubled since the last training, since the
        cluster count follows the row count."""
        if self._building is not None or self._count < max(MIN_ROWS, self._ann_from):
            return
        if self._ann is not None and self._count < 2 * self._ann.trained_for:
            return
        faiss = faiss_module()
        if faiss is None:
            return
        build = self._building = _Build()
        if self._background:
            threading.Thread(target=self._build_ann, args=(faiss, build), name="chronomem-ann", daemon=True).start()
        else:
            self._build_ann(faiss, build)

    def _build_ann(self, faiss: object, build: _Build) -> None:
        """Train on a sample, copy the rows in chunks, replay what changed meanwhile, switch over.
        The slow parts (training, adding a chunk) run without the lock; faiss releases the GIL."""
        started = time.perf_counter()
        try:
            with self._lock:
                total = self._count
                picked = np.random.default_rng(total).choice(total, IvfIndex.sample_size(total), replace=False)
                sample = self._matrix[np.sort(picked)]  # (a copy: fancy indexing)
            ann = IvfIndex.train(faiss, sample, total)
            added = 0
            while True:
                with self._lock:
                    if added >= self._count:
                        self._switch_to(ann, build, added)
                        self._ann_seconds = time.perf_counter() - started
                        return
                    stop = min(self._count, added + _BUILD_CHUNK)
                    chunk = self._matrix[added:stop].copy()
                ann.add(np.arange(added, stop), chunk)
                added = stop
        except BaseException:
            with self._lock:  # exact search goes on; no retry, which would most likely fail the same way
                self._ann_from = np.iinfo(np.int64).max
            raise
        finally:
            with self._lock:
                if self._building is build:
                    self._building = None
            build.done.set()

    def _switch_to(self, ann: IvfIndex, build: _Build, added: int) -> None:
        """Replay the rows changed since they were copied, then let ``ann`` answer (lock held)."""
        if build.dirty:
            dirty = np.fromiter(build.dirty, dtype=np.int64, count=len(build.dirty))
            stale = dirty[dirty < added]
            ann.remove(stale)
            live = stale[stale < self._count]
            ann.add(live, self._matrix[live])
        self._ann, self._scan, self._building = ann, None, None

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
            self._changed(np.array([row]))
            if self._scan is not None:
                self._scan.upsert(id_, vector)
                self._rebuild_scan_if_worn()
            self._maybe_accelerate()

    def _changed(self, rows: np.ndarray) -> None:
        """Rows whose vector changed, appeared or left (a row at or past the count has left)."""
        if self._building is not None:
            self._building.dirty.update(rows.tolist())
        if self._ann is not None:
            self._ann.remove(rows)
            live = rows[rows < self._count]
            self._ann.add(live, self._matrix[live])

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
            self._changed(np.array([row, last]) if row != last else np.array([last]))
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
            keep = None
            if mask is not None and self._times is not None and not self._open_to(mask):
                keep = mask(self._times[: self._count])
            if keep is not None and (overrides is None or not overrides.ids) and keep.all():
                keep = None  # every row passes (the usual "current facts" of a group without history)
            if keep is not None and overrides is not None and overrides.ids:
                self._apply_overrides(keep, mask, overrides)
            if keep is not None and (not self.accelerated or keep.sum() < _SELECTIVE * self._count):
                return self._subset_search(np.flatnonzero(keep), vector, limit, min_score, accept)
            if self._ann is not None:
                return self._ann_search(vector, limit, min_score, accept, keep)
            if self._scan is not None:
                return self._scan_search(vector, limit, min_score, accept, keep)
        return super().search(vector, limit, min_score=min_score, accept=accept)

    def _open_to(self, mask: TimeMask) -> bool:
        """Does every row pass ``mask`` because it is the current-only filter and no row has ended?
        (Checked once per version of the index, not per search; lock held.)"""
        if not isinstance(mask, CurrentAt) or self._times is None:
            return False
        if self._all_open[0] != self._version:
            self._all_open = (self._version, bool(open_rows(self._times[: self._count]).all()))
        return self._all_open[1]

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

    def _ann_search(
        self,
        query: np.ndarray,
        limit: int,
        min_score: float | None,
        accept: Accept | None,
        keep: np.ndarray | None,
    ) -> list[ScoredId]:
        """Approximate candidates among the rows ``keep`` passes, rescored in float32; when too few
        pass min_score, ``accept`` or the mask, probe more clusters or take more candidates, and
        past a few widenings answer with an exact scan (called with the lock held)."""
        assert self._ann is not None
        k = max(64, limit * 4) if accept else limit + 32
        nprobe = self._ann.nprobe
        verdicts: dict[str, bool] = {}
        for _ in range(_WIDENINGS):
            rows = self._ann.candidates(query, k, keep, nprobe)
            exact = dot_rows(self._matrix[rows], query) if rows.size else np.empty(0, dtype=np.float32)
            hits = [ScoredId(self._ids[rows[j]], float(exact[j])) for j in np.argsort(-exact, kind="stable")]
            weak = min_score is not None and bool(hits) and hits[-1].score < min_score
            hits = [h for h in hits if min_score is None or h.score >= min_score]
            hits = _accepted(hits, accept, verdicts)
            if len(hits) >= limit or weak:  # (weak: the ranking already fell below min_score)
                return hits[:limit]
            if rows.size < k:  # the probed clusters ran out of (passing) rows
                if nprobe >= self._ann.nlist:
                    return hits  # every cluster was probed: these are all there are
                nprobe *= 4
            else:
                k *= 4
        if keep is not None:
            return self._subset_search(np.flatnonzero(keep), query, limit, min_score, accept)
        scores = dot_rows(self._matrix[: self._count], query)  # (a view: no copy of every row)
        return walk_ranking(scores, lambda order: [ScoredId(self._ids[i], float(scores[i])) for i in order],
                            limit, min_score, accept) or []

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
            hits = _accepted(hits, accept, verdicts)
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


class _Build:
    """A background build in progress: the rows changed since it started, and its end."""

    def __init__(self) -> None:
        self.dirty: set[int] = set()
        self.done = threading.Event()
