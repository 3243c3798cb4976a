"""The dynamic extension step: a new entity goes where most of its neighbours' facts point."""

from __future__ import annotations

from chronomem.communities import assign_batch, choose_community
from chronomem.communities.extension import apply_moves, membership_moves, neighbour_weights
from chronomem.domain import Community, Fact

MEMBERSHIP = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B"}


def test_joins_the_community_holding_most_neighbour_weight() -> None:
    assert choose_community({"a1": 1, "b1": 1, "b2": 1}, MEMBERSHIP) == "B"
    assert choose_community({"a1": 3, "b1": 1, "b2": 1}, MEMBERSHIP) == "A"


def test_unassigned_neighbours_do_not_vote() -> None:
    assert choose_community({"stranger": 5, "a1": 1}, MEMBERSHIP) == "A"
    assert choose_community({"stranger": 5}, MEMBERSHIP) is None
    assert choose_community({}, MEMBERSHIP) is None


def test_ties_keep_the_current_community_then_prefer_the_larger_one() -> None:
    assert choose_community({"a1": 1, "b1": 1}, MEMBERSHIP, current="B") == "B"
    assert choose_community({"a1": 1, "b1": 1}, MEMBERSHIP, sizes={"A": 3, "B": 2}) == "A"
    assert choose_community({"a1": 1, "b1": 1}, MEMBERSHIP, sizes={"A": 2, "B": 9}) == "B"
    assert choose_community({"a1": 1, "b1": 1}, MEMBERSHIP) == "A"  # then the smaller id


def test_a_batch_entity_follows_a_batch_neighbour_placed_before_it() -> None:
    neighbours = {"new1": {"new2": 1.0}, "new2": {"new1": 1.0, "b1": 2.0}}
    result = assign_batch(["new1", "new2"], neighbours, MEMBERSHIP)
    assert result.communities == {"new1": "B", "new2": "B"}
    assert result.moved == ()


def test_an_entity_with_no_placed_neighbour_stays_unassigned() -> None:
    result = assign_batch(["lonely", "pal"], {"lonely": {"pal": 1.0}, "pal": {"lonely": 1.0}}, MEMBERSHIP)
    assert result.communities == {"lonely": None, "pal": None}
    assert result.assigned == {}


def test_a_member_moves_only_when_another_community_outweighs_its_own() -> None:
    stays = assign_batch(["a1"], {"a1": {"a2": 1.0, "b1": 1.0}}, MEMBERSHIP)
    assert stays.communities == {"a1": "A"} and stays.moved == ()
    moves = assign_batch(["a1"], {"a1": {"a2": 1.0, "b1": 2.0, "b2": 1.0}}, MEMBERSHIP)
    assert moves.communities == {"a1": "B"} and moves.moved == ("a1",)


def test_neighbour_weights_count_parallel_facts_and_hyperedge_participants() -> None:
    facts = [
        Fact(group_id="g", source_id="x", target_id="a1", fact="x knows a1"),
        Fact(group_id="g", source_id="a1", target_id="x", fact="a1 hired x"),
        Fact(group_id="g", source_id="x", target_id="b1", other_entity_ids=("b2",), fact="x met b1 and b2"),
        Fact(group_id="g", source_id="a2", target_id="a3", fact="unrelated to the batch"),
    ]
    assert neighbour_weights(["x"], facts) == {"x": {"a1": 2.0, "b1": 1.0, "b2": 1.0}}


def test_moves_and_their_application_to_stored_communities() -> None:
    result = assign_batch(["a1", "n"], {"a1": {"b1": 2.0, "a2": 1.0}, "n": {"a2": 1.0}}, MEMBERSHIP)
    moves = membership_moves(result, MEMBERSHIP)
    assert moves.joined == {"B": ["a1"], "A": ["n"]} and moves.left == {"A": ["a1"]}
    a = Community(id="A", group_id="g", member_ids=("a1", "a2", "a3"))
    assert apply_moves(a, moves.joined["A"], moves.left["A"]).member_ids == ("a2", "a3", "n")
