"""Rerankers: pure functions over ids, scores and vectors."""

from __future__ import annotations

import numpy as np
import pytest

from chronomem.search.rerank import (
    cut_below,
    entity_distances_to_fact_distances,
    episode_mentions,
    lead_with_each,
    mmr,
    node_distance,
    order_by_scores,
    rrf,
)


def test_rrf_rewards_items_ranked_well_by_several_methods():
    fused = rrf([["a", "b", "c"], ["b", "d", "a"]], k=60)
    ids = [i for i, _ in fused]
    assert ids[:2] == ["b", "a"]  # b: 1/62 + 1/61 > a: 1/61 + 1/63
    assert dict(fused)["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert set(ids) == {"a", "b", "c", "d"}


def test_rrf_k_changes_how_much_the_top_rank_dominates():
    rankings = [["x", "y"], ["y", "z"], ["x", "q"]]
    small_k = dict(rrf(rankings, k=1))
    assert small_k["x"] == pytest.approx(1 / 2 + 1 / 2)
    assert small_k["y"] == pytest.approx(1 / 3 + 1 / 2)


def test_rrf_counts_a_repeated_id_once_per_ranking_and_honours_weights():
    assert dict(rrf([["a", "a"]], k=60))["a"] == pytest.approx(1 / 61)
    weighted = rrf([["a"], ["b"]], k=60, weights=[1.0, 2.0])
    assert [i for i, _ in weighted] == ["b", "a"]
    with pytest.raises(ValueError):
        rrf([["a"]], k=0)


def test_order_by_scores_is_stable_and_puts_unscored_last():
    assert order_by_scores(["a", "b", "c"], {"a": 1.0, "b": 2.0}) == [("b", 2.0), ("a", 1.0), ("c", float("-inf"))]
    assert [i for i, _ in order_by_scores(["a", "b"], {"a": 1.0, "b": 1.0})] == ["a", "b"]


def test_cut_below_drops_weak_results_only_when_asked():
    ranked = [("a", 0.9), ("b", 0.2)]
    assert cut_below(ranked, 0.5) == [("a", 0.9)]
    assert cut_below(ranked, None) == ranked


def _unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_mmr_prefers_a_diverse_second_result_over_a_near_duplicate():
    query = _unit(1, 1, 0)
    vectors = {"dup1": _unit(1, 0.9, 0), "dup2": _unit(1, 0.91, 0), "other": _unit(0.3, 1, 0.9)}
    picked = [i for i, _ in mmr(query, ["dup1", "dup2", "other"], vectors, lambda_=0.5)]
    assert picked[0] in {"dup1", "dup2"}
    assert picked[1] == "other"
    relevance_only = [i for i, _ in mmr(query, ["dup1", "dup2", "other"], vectors, lambda_=1.0)]
    assert relevance_only[2] == "other"


def test_mmr_limit_and_candidates_without_vectors():
    query = _unit(1, 0)
    vectors = {"a": _unit(1, 0), "b": _unit(0, 1)}
    ranked = mmr(query, ["ghost", "a", "b"], vectors, lambda_=0.7, limit=3)
    assert [i for i, _ in ranked] == ["a", "b", "ghost"]
    assert ranked[0][1] == pytest.approx(0.7)
    assert ranked[-1][1] == -1.0
    assert len(mmr(query, ["a", "b"], vectors, limit=1)) == 1
    with pytest.raises(ValueError):
        mmr(query, ["a"], vectors, lambda_=1.5)


def test_episode_mentions_ranks_most_cited_first_and_keeps_order_on_ties():
    ranked = episode_mentions(["a", "b", "c", "d"], {"b": 5, "c": 1, "d": 5})
    assert ranked == [("b", 5.0), ("d", 5.0), ("c", 1.0), ("a", 0.0)]


def test_node_distance_orders_by_hops_and_puts_unreached_last():
    ranked = node_distance(["far", "ghost", "centre", "near"], {"centre": 0, "near": 1, "far": 3})
    assert ranked == [("centre", 1.0), ("near", 0.5), ("far", 0.25), ("ghost", 0.0)]


def test_fact_distance_is_the_nearest_participant():
    facts = {"f1": ["x", "y"], "f2": ["y", "z"], "f3": ["q", "r"]}
    assert entity_distances_to_fact_distances(facts, {"x": 0, "y": 1, "z": 2}) == {"f1": 0, "f2": 1}


def test_lead_with_each_puts_every_rankings_best_behind_the_fused_first():
    fused = [("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6), ("e", 0.5)]
    # event 1's best is "d", event 2's best is "a" (already first), event 3's is not a candidate
    assert lead_with_each(fused, [["d", "b"], ["a", "e"], ["zz"], []]) == [
        ("a", 0.9), ("d", 0.6), ("b", 0.8), ("c", 0.7), ("e", 0.5)
    ]
    assert lead_with_each([], [["a"]]) == []
