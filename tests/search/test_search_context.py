"""χ: the paper's context block, fitted to a budget."""

from __future__ import annotations

from datetime import UTC, datetime

from chronomem.domain import Community, Entity, Episode, Fact
from chronomem.search.context import build_context, estimate_tokens, fact_line

G = "g"
T1 = datetime(2023, 1, 1, tzinfo=UTC)
T2 = datetime(2024, 6, 1, tzinfo=UTC)
NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _fact(text: str, **kw) -> Fact:
    return Fact(group_id=G, source_id="a", target_id="b", fact=text, **kw)


def test_template_sections_and_date_ranges():
    block = build_context(
        [_fact("Alice works at Acme", valid_at=T1)],
        [Entity(group_id=G, name="Alice", summary="An engineer.")],
        [Community(group_id=G, name="work", summary="Alice and her employer.")],
        now=NOW,
    )
    assert block.startswith("FACTS and ENTITIES represent relevant context")
    assert "format: FACT (Date range: from - to)" in block
    assert "<FACTS>\n- Alice works at Acme (Date range: 2023-01-01 00:00:00Z - present)\n</FACTS>" in block
    assert "<ENTITIES>\n- Alice: An engineer.\n</ENTITIES>" in block
    assert "<COMMUNITIES>\n- work: Alice and her employer.\n</COMMUNITIES>" in block
    assert "<EPISODES>" not in block


def test_superseded_fact_says_when_it_stopped_being_true():
    old = _fact("Alice works at Acme", valid_at=T1, invalid_at=T2, expired_at=T2)
    line = fact_line(old, now=NOW)
    assert "(Date range: 2023-01-01 00:00:00Z - 2024-06-01 00:00:00Z)" in line
    assert "[superseded: no longer true from 2024-06-01" in line
    retracted = fact_line(_fact("x", expired_at=T2), now=NOW)
    assert "unknown - present" in retracted and "retracted on 2024-06-01" in retracted


def test_future_end_date_reads_present():
    line = fact_line(_fact("Lease runs", valid_at=T1, invalid_at=datetime(2030, 1, 1, tzinfo=UTC)), now=NOW)
    assert line.endswith("- present)")


def test_duplicates_are_dropped_keeping_the_best_ranked():
    facts = [_fact("Bob likes tea", valid_at=T1), _fact("Bob likes tea.", valid_at=T1), _fact("Bob hikes")]
    block = build_context(facts, [], now=NOW)
    assert block.count("Bob likes tea") == 1
    assert block.index("Bob likes tea") < block.index("Bob hikes")


def test_budget_is_respected_in_rank_order_and_leaves_room_for_entities():
    facts = [_fact(f"fact number {i} " + "word " * 20) for i in range(200)]
    entities = [Entity(group_id=G, name=f"E{i}", summary="s " * 10) for i in range(50)]
    block = build_context(facts, entities, token_budget=500, now=NOW)
    assert estimate_tokens(block) <= 500 * 1.05
    assert "fact number 0 " in block and "fact number 199" not in block
    assert "- E0:" in block


def test_episodes_only_when_given_and_empty_input_gives_empty_block():
    episode = Episode(group_id=G, content="hello", speaker="Ann", reference_time=T1)
    block = build_context([], [], episodes=[episode], now=NOW)
    assert "<EPISODES>\n- (2023-01-01 00:00:00Z) Ann: hello\n</EPISODES>" in block
    assert build_context([], [], now=NOW) == ""
