"""Weighted label propagation (Raghavan et al. 2007), the community detection of the paper (§2.3).

Every node starts with its own label and repeatedly takes the label carrying the most fact weight
among its neighbours. Three choices keep it from the failure modes of naive implementations:

* **Semi-synchronous updates.** Nodes are split into colour classes (no edge inside a class); a class
  updates at once from the labels of the others. Fully synchronous updates make two neighbours
  swap labels forever; this order converges (Cordasco & Gargano 2010) and stays vectorised.
* **Deterministic tie-breaks.** A node keeps its label when it is among the heaviest; otherwise ties
  go to a hash of (label, node, round). A fixed order such as "smallest label wins" would let one
  label sweep through sparse links between clusters; the hash behaves like a seeded coin.
* **A cap on rounds.** A run that has not settled after ``max_rounds`` stops and says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chronomem.communities.graph import WeightedGraph

__all__ = [
    "Propagation",
    "best_labels",
    "clusters",
    "colour_classes",
    "detect_communities",
    "internal_degrees",
    "propagate",
    "row_positions",
]

_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


@dataclass(frozen=True, slots=True, eq=False)
class Propagation:
    labels: np.ndarray  # per node, the index of the node whose initial label it ended with
    rounds: int  # rounds run, the final quiet one included
    converged: bool  # False when the round cap stopped it


def _mix(label: np.ndarray, node: np.ndarray, salt: int) -> np.ndarray:
    """A splitmix64-style hash of (label, node, salt): the tie-break order."""
    x = label.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    x ^= node.astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F) + np.uint64(salt & 0xFFFFFFFF)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x & _MASK64


def colour_classes(graph: WeightedGraph) -> list[np.ndarray]:
    """A greedy proper colouring, highest degree first: no two nodes of one class are neighbours."""
    n = graph.size
    counts = np.diff(graph.indptr)
    order = np.lexsort((np.arange(n), -counts))
    indptr = graph.indptr.tolist()
    indices = graph.indices.tolist()
    colour = [-1] * n
    for node in order.tolist():
        taken = {colour[m] for m in indices[indptr[node] : indptr[node + 1]]}
        c = 0
        while c in taken:
            c += 1
        colour[node] = c
    colours = np.asarray(colour, dtype=np.int64)
    return [np.flatnonzero(colours == c) for c in range(int(colours.max(initial=-1)) + 1)]


def row_positions(graph: WeightedGraph, nodes: np.ndarray) -> np.ndarray:
    """Positions (into ``graph.indices``) of every edge of ``nodes``, row by row."""
    starts = graph.indptr[nodes]
    counts = graph.indptr[nodes + 1] - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    block_start = np.cumsum(counts) - counts  # where each row's block begins in the output
    return np.repeat(starts - block_start, counts) + np.arange(total, dtype=np.int64)


def best_labels(
    graph: WeightedGraph,
    labels: np.ndarray,
    edge_positions: np.ndarray,
    *,
    salt: int = 0,
    self_weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """One propagation step for the rows owning ``edge_positions`` (positions into ``indices``).

    Returns (nodes, best label of each); nodes without edges are absent. The current label wins
    any tie it is part of, so a settled labelling is a fixed point. ``self_weights`` adds weight
    to each node's own label (the inner facts of a contracted community).
    """
    n = max(graph.size, 1)
    src = graph.sources[edge_positions]
    neighbour_labels = labels[graph.indices[edge_positions]]
    edge_weights = graph.weights[edge_positions]
    if self_weights is not None:
        rows = np.unique(src)
        src = np.concatenate([src, rows])
        neighbour_labels = np.concatenate([neighbour_labels, labels[rows]])
        edge_weights = np.concatenate([edge_weights, self_weights[rows]])
    if not len(src):
        return src, src
    # (node, label) pairs sorted by node then label, with the weight each label carries.
    keys, inverse = np.unique(src * n + neighbour_labels, return_inverse=True)
    weight = np.bincount(inverse, weights=edge_weights, minlength=len(keys))
    node, label = keys // n, keys % n
    starts = np.flatnonzero(np.r_[True, node[1:] != node[:-1]])
    segment = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(node)]))
    # Weights are sums of whole (or half) facts, so equality is exact.
    heaviest = weight == np.maximum.reduceat(weight, starts)[segment]
    keeps = np.logical_or.reduceat(heaviest & (labels[node] == label), starts)
    tie_key = np.where(heaviest, _mix(label, node, salt), _MASK64)
    chosen = np.flatnonzero(heaviest & (tie_key == np.minimum.reduceat(tie_key, starts)[segment]))
    winner = np.empty(len(starts), dtype=np.int64)
    winner[segment[chosen]] = label[chosen]
    rows = node[starts]
    return rows, np.where(keeps, labels[rows], winner)


def propagate(
    graph: WeightedGraph,
    *,
    max_rounds: int = 30,
    self_weights: np.ndarray | None = None,
    initial: np.ndarray | None = None,
    classes: list[np.ndarray] | None = None,
) -> Propagation:
    """Plain label propagation to a fixed point or ``max_rounds``; same graph, same result.

    Every node starts with its own label unless ``initial`` labels are given. ``classes`` (from
    :func:`colour_classes`) saves recolouring a graph propagated more than once. Only nodes with a
    neighbour that changed since they were last looked at are re-evaluated: the others would keep
    their label, so late rounds cost little.
    """
    labels = np.arange(graph.size, dtype=np.int64) if initial is None else initial.astype(np.int64)
    classes = colour_classes(graph) if classes is None else classes
    stale = np.ones(graph.size, dtype=bool)
    rounds = 0
    while rounds < max_rounds:
        rounds += 1
        changed = 0
        for c, members in enumerate(classes):
            nodes = members[stale[members]]
            if not len(nodes):
                continue
            stale[nodes] = False
            rows, best = best_labels(
                graph, labels, row_positions(graph, nodes), salt=rounds * 1_000_003 + c, self_weights=self_weights
            )
            moved = labels[rows] != best
            if moved.any():
                labels[rows[moved]] = best[moved]
                stale[graph.indices[row_positions(graph, rows[moved])]] = True
                changed += int(moved.sum())
        if changed == 0:
            return Propagation(labels, rounds, True)
    return Propagation(labels, rounds, graph.size == 0)


def _contract(graph: WeightedGraph, labels: np.ndarray) -> tuple[WeightedGraph, np.ndarray, np.ndarray, np.ndarray]:
    """One node per label: (contracted graph, inner weight per community, label values, node → community)."""
    values, community = np.unique(labels, return_inverse=True)
    a, b = community[graph.sources], community[graph.indices]
    inner = a == b
    # Each fact appears in both directions: count inner ones once, cross ones from one side.
    inner_weight = np.bincount(a[inner], weights=graph.weights[inner], minlength=len(values)) / 2.0
    cross = a < b
    names = tuple(str(i) for i in range(len(values)))
    contracted = WeightedGraph.from_arrays(names, a[cross], b[cross], graph.weights[cross])
    return contracted, inner_weight, values, community


def detect_communities(graph: WeightedGraph, *, max_rounds: int = 30, merge_levels: int = 2) -> Propagation:
    """Label propagation, then up to ``merge_levels`` rounds of merging and refining.

    Plain propagation settles in local optima that split a dense cluster into fragments held by
    their own few facts. Over the contracted graph a community keeps its label with the weight of
    its inner facts and joins a neighbour only when it shares at least as many facts with it, so
    fragments merge and well-separated communities stay apart; a node-level propagation from the
    merged labels then moves single entities that an early round left on the wrong side.
    """
    classes = colour_classes(graph)
    result = propagate(graph, max_rounds=max_rounds, classes=classes)
    labels, rounds, converged = result.labels, result.rounds, result.converged
    for _ in range(merge_levels):
        contracted, inner_weight, values, community = _contract(graph, labels)
        # Half a fact less than its inner weight: a tie with a neighbour means joining it.
        merged = propagate(contracted, max_rounds=max_rounds, self_weights=inner_weight - 0.5)
        start = values[merged.labels[community]]
        refined = propagate(graph, max_rounds=max_rounds, initial=start, classes=classes)
        rounds += merged.rounds + refined.rounds
        converged = merged.converged and refined.converged
        if np.array_equal(refined.labels, labels):
            break
        labels = refined.labels
    return Propagation(labels, rounds, converged)


def clusters(labels: np.ndarray, *, min_size: int = 1) -> list[np.ndarray]:
    """Node indices grouped by label, biggest group first (ties: smallest member first);
    groups smaller than ``min_size`` are left out."""
    if not len(labels):
        return []
    order = np.argsort(labels, kind="stable")
    _, starts, counts = np.unique(labels[order], return_index=True, return_counts=True)
    groups = [order[s : s + k] for s, k in zip(starts.tolist(), counts.tolist(), strict=True) if k >= min_size]
    groups.sort(key=lambda g: (-len(g), int(g[0])))
    return groups


def internal_degrees(graph: WeightedGraph, labels: np.ndarray) -> np.ndarray:
    """Fact weight each node shares with nodes of its own label: its centrality in its community."""
    src = graph.sources
    inside = labels[src] == labels[graph.indices]
    return np.bincount(src[inside], weights=graph.weights[inside], minlength=graph.size)
