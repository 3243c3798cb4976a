"""Label propagation: planted clusters come back exactly, deterministically, in bounded rounds."""

from __future__ import annotations

import random

import numpy as np
import pytest
from community_planted import planted_partition

from chronomem.communities import WeightedGraph, detect_communities, propagate
from chronomem.communities.labelprop import clusters, colour_classes, internal_degrees, row_positions
from chronomem.store.base import WeightedEdge


def partition(graph: WeightedGraph, labels: np.ndarray, min_size: int = 2) -> set[frozenset[str]]:
    return {frozenset(graph.ids[i] for i in group) for group in clusters(labels, min_size=min_size)}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("sizes", [[12, 12, 12], [8, 15, 25, 40], [30, 6, 6, 18, 10]])
def test_planted_partition_is_recovered_exactly(sizes: list[int], seed: int) -> None:
    planted = planted_partition(sizes, p_in=0.5, links=len(sizes) + 2, seed=seed)
    graph = WeightedGraph.from_edges(planted.ids, planted.edges)
    result = detect_communities(graph)
    assert result.converged
    assert partition(graph, result.labels) == set(planted.clusters)


def test_same_graph_in_another_order_gives_the_same_labels() -> None:
    planted = planted_partition([10, 20, 15], seed=3)
    edges = list(planted.edges)
    random.Random(9).shuffle(edges)
    flipped = [WeightedEdge(e.b, e.a, e.weight) for e in edges]
    first = detect_communities(WeightedGraph.from_edges(planted.ids, planted.edges))
    second = detect_communities(WeightedGraph.from_edges(reversed(planted.ids), flipped))
    assert np.array_equal(first.labels, second.labels)


def test_two_entities_with_parallel_facts_converge() -> None:
    # Synchronous label propagation swaps these two labels forever (Graphiti's hang).
    graph = WeightedGraph.from_edges(["a", "b"], [WeightedEdge("a", "b", 2)])
    result = propagate(graph)
    assert result.converged and result.rounds <= 3
    assert result.labels[0] == result.labels[1]


def test_balanced_triangle_converges_to_one_community() -> None:
    edges = [WeightedEdge("x", "y", 2), WeightedEdge("y", "z", 2), WeightedEdge("x", "z", 2)]
    graph = WeightedGraph.from_edges("xyz", edges)
    result = propagate(graph)
    assert result.converged
    assert len(set(result.labels.tolist())) == 1


def test_round_cap_stops_an_unsettled_run_and_says_so() -> None:
    planted = planted_partition([40, 40], seed=1)
    graph = WeightedGraph.from_edges(planted.ids, planted.edges)
    result = propagate(graph, max_rounds=1)
    assert result.rounds == 1
    assert not result.converged


def test_fact_weight_decides_between_two_clusters() -> None:
    edges = [WeightedEdge(a, b, 3) for a, b in [("a1", "a2"), ("a2", "a3"), ("a1", "a3")]]
    edges += [WeightedEdge(b, c, 3) for b, c in [("b1", "b2"), ("b2", "b3"), ("b1", "b3")]]
    edges += [WeightedEdge("x", "a1", 1), WeightedEdge("x", "b1", 3)]
    graph = WeightedGraph.from_edges(["a1", "a2", "a3", "b1", "b2", "b3", "x"], edges)
    found = partition(graph, detect_communities(graph).labels)
    assert found == {frozenset({"a1", "a2", "a3"}), frozenset({"b1", "b2", "b3", "x"})}


def test_parallel_edges_add_up_and_self_loops_are_dropped() -> None:
    graph = WeightedGraph.from_edges(
        ["a", "b", "c"], [WeightedEdge("a", "b", 1), WeightedEdge("b", "a", 2), WeightedEdge("c", "c", 5)]
    )
    neighbours, weights = graph.neighbours(graph.ids.index("a"))
    assert [graph.ids[i] for i in neighbours] == ["b"] and weights.tolist() == [3.0]
    assert graph.degrees().tolist() == [3.0, 3.0, 0.0]


def test_isolated_entities_stay_alone_and_are_left_out_by_min_size() -> None:
    graph = WeightedGraph.from_edges(["a", "b", "lonely"], [WeightedEdge("a", "b", 1)])
    result = detect_communities(graph)
    assert partition(graph, result.labels) == {frozenset({"a", "b"})}
    assert frozenset({"lonely"}) in partition(graph, result.labels, min_size=1)


def test_edges_to_unknown_entities_are_ignored() -> None:
    graph = WeightedGraph.from_edges(["a", "b"], [WeightedEdge("a", "b", 1), WeightedEdge("a", "ghost", 4)])
    assert graph.degrees().tolist() == [1.0, 1.0]


def test_empty_graph() -> None:
    graph = WeightedGraph.from_edges([], [])
    result = detect_communities(graph)
    assert result.converged and len(result.labels) == 0
    assert clusters(result.labels) == []


def test_colour_classes_are_independent_sets_covering_every_node() -> None:
    planted = planted_partition([15, 15, 15], p_in=0.7, seed=5)
    graph = WeightedGraph.from_edges(planted.ids, planted.edges)
    classes = colour_classes(graph)
    assert sorted(np.concatenate(classes).tolist()) == list(range(graph.size))
    for members in classes:
        inside = set(members.tolist())
        for node in members:
            assert not inside & set(graph.neighbours(int(node))[0].tolist())


def test_hub_of_a_star_is_the_most_central_member() -> None:
    edges = [WeightedEdge("hub", f"leaf{i}", 1) for i in range(5)] + [WeightedEdge("leaf0", "leaf1", 1)]
    graph = WeightedGraph.from_edges(["hub", *(f"leaf{i}" for i in range(5))], edges)
    result = detect_communities(graph)
    inner = internal_degrees(graph, result.labels)
    assert graph.ids[int(np.argmax(inner))] == "hub"


def test_row_positions_gather_the_edges_of_the_given_rows() -> None:
    edges = [WeightedEdge("a", "b", 1), WeightedEdge("a", "c", 1), WeightedEdge("c", "d", 1)]
    graph = WeightedGraph.from_edges("abcd", edges)
    positions = row_positions(graph, np.array([0, 3, 2]))
    assert [(graph.ids[graph.sources[p]], graph.ids[graph.indices[p]]) for p in positions] == [
        ("a", "b"), ("a", "c"), ("d", "c"), ("c", "a"), ("c", "d"),
    ]
    assert len(row_positions(graph, np.array([], dtype=np.int64))) == 0
