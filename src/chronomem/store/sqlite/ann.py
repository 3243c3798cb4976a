"""An approximate vector index for large groups: faiss IVF over half-precision codes.

Past a few hundred thousand rows even the half-precision exact scan (fastscan.py) reads every row
per query (768 MB at 1M x 384) and stops fitting a 20 ms budget. An inverted-file index clusters the
rows around ``nlist`` centroids and a query scans only the ``nprobe`` clusters nearest to it; the
owning VectorIndex rescores those candidates in float32, so scores are exact and only the choice of
candidates is approximate.

The parameter rule (nlist = 4 sqrt(N), nprobe = nlist / 8 and at least 32, a 40-per-centroid training sample, 10
k-means rounds) was picked on ~65k real MiniLM vectors with the rule forced on: recall@10 0.991
against exact search (bench/vector_recall.py --ann-from 0). Random vectors, which have no clusters, are
its worst case; see docs/retrieval.md for both figures.

Labels are the owning index's row numbers, and the direct map is a hash table, so an update or a
swap-removal is a constant-time remove + add, and a time mask over rows is a faiss bitmap selector
over labels. Training is slow (tens of seconds at 1M on one core) and happens on a private copy in a
background thread (see ``train``): faiss releases the GIL while it computes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["ANN_FROM", "MIN_ROWS", "IvfIndex", "ivf_shape"]

ANN_FROM = 200_000  # rows of a (group, scope) from which the approximate index is built
MIN_ROWS = 1_000  # fewer rows than this are never indexed approximately (k-means needs points per centroid)
_PER_CENTROID = 40  # training points per centroid (faiss warns below 39)
_KMEANS_ROUNDS = 10  # recall on real vectors was the same as with faiss's default 25, at 40% of the time


def ivf_shape(rows: int) -> tuple[int, int]:
    """(nlist, nprobe) for a group of ``rows`` rows."""
    # (small groups, when forced on: no fewer than 39 points per centroid, faiss's own floor)
    nlist = max(16, min(round(4 * math.sqrt(rows)), rows // 39))
    # (at least 32 clusters: at 5,000 real vectors, 16 of 128 found only 0.952 of the top 10)
    return nlist, min(nlist, max(32, math.ceil(nlist / 8)))


class IvfIndex:
    """faiss ``IndexIVFScalarQuantizer`` (fp16 codes, inner product) labelled by row number.

    Not thread-safe: the owning VectorIndex calls it under its lock, except while it is private to
    the thread that trains and fills it.
    """

    def __init__(self, faiss: Any, index: Any, quantizer: Any, trained_for: int) -> None:
        self._faiss = faiss
        self._index = index
        self._quantizer = quantizer  # the IVF index does not own its quantizer: keep it alive
        self.trained_for = trained_for
        self.nlist, self.nprobe = ivf_shape(trained_for)

    @classmethod
    def train(cls, faiss: Any, sample: np.ndarray, trained_for: int) -> IvfIndex:
        """An empty index whose centroids are learned from ``sample`` (rows of a group of
        ``trained_for`` rows). Slow: call it off the lock."""
        nlist, _ = ivf_shape(trained_for)
        dimension = sample.shape[1]
        quantizer = faiss.IndexFlatIP(dimension)
        # by_residual=False: fp16 codes of the vectors themselves; residuals gain nothing at this precision
        index = faiss.IndexIVFScalarQuantizer(
            quantizer, dimension, nlist, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT, False
        )
        index.cp.niter = _KMEANS_ROUNDS
        index.train(np.ascontiguousarray(sample, dtype=np.float32))
        index.set_direct_map_type(faiss.DirectMap.Hashtable)  # remove_ids by label in constant time
        return cls(faiss, index, quantizer, trained_for)

    @staticmethod
    def sample_size(rows: int) -> int:
        nlist, _ = ivf_shape(rows)
        return min(rows, _PER_CENTROID * nlist)

    def add(self, rows: np.ndarray, vectors: np.ndarray) -> None:
        if len(rows):
            self._index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), rows.astype(np.int64))

    def remove(self, rows: np.ndarray) -> None:
        """Drop these labels (absent ones are ignored)."""
        if len(rows):
            self._index.remove_ids(self._faiss.IDSelectorArray(np.ascontiguousarray(rows, dtype=np.int64)))

    def candidates(self, query: np.ndarray, k: int, keep: np.ndarray | None, nprobe: int) -> np.ndarray:
        """Row numbers of the approximate top ``k`` among the rows ``keep`` passes (all if None),
        from the ``nprobe`` nearest clusters."""
        selector = bitmap = None
        if keep is not None:
            bitmap = np.packbits(keep, bitorder="little")  # bit r of the bitmap: row r passes
            selector = self._faiss.IDSelectorBitmap(keep.shape[0], self._faiss.swig_ptr(bitmap))
        params = self._faiss.SearchParametersIVF(nprobe=min(nprobe, self.nlist), sel=selector)
        _, labels = self._index.search(query.reshape(1, -1).astype(np.float32), k, params=params)
        del bitmap  # (held until the search returned: the selector points into it)
        found: np.ndarray = labels[0]
        return found[found >= 0]

    @property
    def size(self) -> int:
        return int(self._index.ntotal)

    def memory_bytes(self) -> int:
        """fp16 codes and labels of the rows, the centroids, and ~32 bytes of hash map per row."""
        dimension = int(self._index.d)
        return self.size * (dimension * 2 + 8 + 32) + self.nlist * dimension * 4
