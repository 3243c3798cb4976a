"""Rows decode to the same objects ``model_construct`` would build (the codec builds them directly)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, ValidationError

from chronomem.domain import Community, Entity, Episode, Fact
from chronomem.store.sqlite.codec import community_from_row, entity_from_row, episode_from_row, fact_from_row

US = 1_700_000_000_123_456


def same_as_model_construct(built: BaseModel) -> None:
    cls = type(built)
    reference = cls.model_construct(**dict(built.__dict__))
    assert built == reference
    assert list(built.__dict__) == list(cls.model_fields)  # every field, in declaration order
    assert built.model_fields_set == reference.model_fields_set
    assert built.model_dump() == reference.model_dump()
    assert repr(built) == repr(reference)
    with pytest.raises(ValidationError):  # still frozen
        built.id = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    "others, episodes, attributes, sources",
    [("[]", "[]", "{}", "[]"), ('["e3"]', '["p1","p2"]', '{"a":1}', '[{"name":"crm","reference":"acct/7"}]')],
)
def test_fact_rows(others: str, episodes: str, attributes: str, sources: str) -> None:
    row = ("f1", "e1", "e2", others, "LIVES_IN", "Maya lives in Lisbon", episodes, attributes, US, None, US, US + 1,
           sources, 2, US + 1)
    fact = fact_from_row("g", row)
    same_as_model_construct(fact)
    assert fact.other_entity_ids == tuple(json.loads(others))
    assert fact.episode_ids == tuple(json.loads(episodes))
    assert fact.attributes == json.loads(attributes)
    assert fact.invalid_at is None and fact.expired_at is not None
    assert [s.model_dump() for s in fact.sources] == json.loads(sources)
    assert fact.version == 2 and fact.recorded_at == fact.expired_at


def test_empty_json_gives_fresh_objects() -> None:
    row = ("n1", "Maya", "[]", "", "[]", "{}", US, "")
    first, second = entity_from_row("g", row), entity_from_row("g", row)
    assert first.labels == () and first.aliases == () and first.attributes == {}
    assert first.attributes is not second.attributes  # no dict shared between objects


def test_entity_episode_and_community_rows() -> None:
    entity = entity_from_row("g", ("n1", "Maya", '["Person"]', "a friend", '["May"]', '{"age":3}', US, "model"))
    same_as_model_construct(entity)
    assert isinstance(entity, Entity) and entity.labels == ("Person",) and entity.aliases == ("May",)
    assert entity.summary_source == "model"
    episode = episode_from_row(
        "g", ("p1", "message", "hi", "Maya", "user", US, US, "chat", '{"k":"v"}', "pending", 0, None, "{}")
    )
    same_as_model_construct(episode)
    assert isinstance(episode, Episode) and episode.metadata == {"k": "v"} and episode.usage == {}
    community = community_from_row("g", ("c1", "friends", "summary", US), ("n1", "n2"))
    same_as_model_construct(community)
    assert isinstance(community, Community) and community.member_ids == ("n1", "n2")


def test_decoded_fact_round_trips_through_validation() -> None:
    fact = fact_from_row("g", ("f1", "e1", "e2", "[]", "LIVES_IN", "x", "[]", "{}", US, None, US, None, "[]", 1, US))
    assert Fact.model_validate(fact.model_dump()) == fact
