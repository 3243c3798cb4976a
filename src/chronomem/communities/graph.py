"""A group's entity graph as compressed sparse rows: the input of label propagation.

Nodes are indices into ``ids``, which are sorted so that every result computed on the graph (labels,
tie-breaks, community order) depends only on the data, never on the order a store returned it in.
Parallel facts are merged into one weighted edge (weight = number of facts), self-loops dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from chronomem.store.base import WeightedEdge

__all__ = ["WeightedGraph"]


@dataclass(frozen=True, slots=True, eq=False)
class WeightedGraph:
    """Undirected weighted graph; every edge is stored in both directions (row ``i`` lists i's
    neighbours in ``indices[indptr[i]:indptr[i + 1]]``, sorted, with their ``weights``)."""

    ids: tuple[str, ...]
    indptr: np.ndarray  # int64, len n + 1
    indices: np.ndarray  # int64, neighbour index per directed edge
    weights: np.ndarray  # float64, facts between the two entities
    sources: np.ndarray  # int64, the row (source node) of every directed edge, aligned with indices

    @property
    def size(self) -> int:
        return len(self.ids)

    def degrees(self) -> np.ndarray:
        """Weighted degree of every node (number of facts it takes part in, self-loops excluded)."""
        return np.bincount(self.sources, weights=self.weights, minlength=self.size)

    def neighbours(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        start, end = self.indptr[node], self.indptr[node + 1]
        return self.indices[start:end], self.weights[start:end]

    @classmethod
    def from_edges(cls, ids: Iterable[str], edges: Sequence[WeightedEdge]) -> WeightedGraph:
        """Build from a store's ``entity_edges``; edges naming unknown ids are ignored."""
        node_ids = tuple(sorted(set(ids)))
        index = {entity_id: i for i, entity_id in enumerate(node_ids)}
        a = np.fromiter((index.get(e.a, -1) for e in edges), dtype=np.int64, count=len(edges))
        b = np.fromiter((index.get(e.b, -1) for e in edges), dtype=np.int64, count=len(edges))
        w = np.fromiter((e.weight for e in edges), dtype=np.float64, count=len(edges))
        return cls.from_arrays(node_ids, a, b, w)

    @classmethod
    def from_arrays(cls, ids: Sequence[str], a: np.ndarray, b: np.ndarray, w: np.ndarray) -> WeightedGraph:
        """Build from parallel arrays of endpoint indices and weights (negative index = unknown).

        ``ids`` should be sorted (``from_edges`` sorts them) for results to be order-independent."""
        n = len(ids)
        keep = (a >= 0) & (b >= 0) & (a < n) & (b < n) & (a != b) & (w > 0)
        a, b, w = a[keep], b[keep], w[keep]
        src = np.concatenate([a, b])
        dst = np.concatenate([b, a])
        weight = np.concatenate([w, w]).astype(np.float64)
        # Merge parallel edges: one key per ordered pair, weights summed.
        keys, inverse = np.unique(src * max(n, 1) + dst, return_inverse=True)
        merged = np.bincount(inverse, weights=weight, minlength=len(keys))
        src, dst = keys // max(n, 1), keys % max(n, 1)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
        return cls(tuple(ids), indptr, dst.astype(np.int64), merged, src.astype(np.int64))
