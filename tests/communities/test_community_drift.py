"""Drift measures: zero after a build, rising as extension places entities."""

from __future__ import annotations

import pytest

from chronomem.communities import DriftCounter, partition_disagreement


def test_counter_is_zero_after_a_build_and_rises_with_each_entity_placed() -> None:
    counter = DriftCounter.after_build(100)
    assert counter.drift == 0.0
    values = []
    for _ in range(5):
        counter = counter.record(added=10)
        values.append(counter.drift)
    assert values == sorted(values) and len(set(values)) == 5
    assert counter.drift == pytest.approx(50 / 150)
    assert counter.record(moved=25).drift == pytest.approx(75 / 150)


def test_counter_of_an_empty_group_is_defined() -> None:
    assert DriftCounter.after_build(0).drift == 0.0
    assert DriftCounter.after_build(0).record(added=1).drift == 1.0


def test_counter_seeded_from_an_exact_measure() -> None:
    assert DriftCounter.from_measure(200, 0.25).drift == pytest.approx(0.25)


def test_identical_partitions_under_other_ids_do_not_disagree() -> None:
    stored = {"a": "X", "b": "X", "c": "Y", "d": "Y"}
    fresh = {"a": "1", "b": "1", "c": "2", "d": "2"}
    assert partition_disagreement("abcde", stored, fresh) == 0.0


def test_each_misplaced_or_unplaced_entity_counts() -> None:
    stored = {"a": "X", "b": "X", "c": "X", "d": "Y", "e": "Y"}
    fresh = {"a": "1", "b": "1", "c": "2", "d": "2", "e": "2"}
    assert partition_disagreement("abcde", stored, fresh) == pytest.approx(1 / 5)
    assert partition_disagreement("abcdef", stored, {**fresh, "f": "2"}) == pytest.approx(2 / 6)


def test_a_split_community_is_matched_once() -> None:
    stored = {e: "X" for e in "abcd"}
    fresh = {"a": "1", "b": "1", "c": "1", "d": "2"}
    assert partition_disagreement("abcd", stored, fresh) == pytest.approx(1 / 4)
    assert partition_disagreement("", {}, {}) == 0.0
