"""The bi-temporal domain model: what a user sees of timestamps, ids and relation types."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from chronomem.domain import (
    Entity,
    Episode,
    EpisodeKind,
    Fact,
    is_current,
    known_at,
    to_relation_type,
    true_at,
)
from chronomem.errors import InvalidInputError
from chronomem.filters import SearchFilters, TimeRange, fact_matches
from chronomem.text.names import normalize_name
from chronomem.timeutil import assume_utc, ensure_utc, from_epoch_ms, to_epoch_ms

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


def fact(**kw: object) -> Fact:
    base: dict[str, object] = {"group_id": "g", "source_id": "a", "target_id": "b", "fact": "a knows b"}
    base.update(kw)
    return Fact(**base)  # type: ignore[arg-type]


def test_naive_datetimes_are_refused_not_compared():
    with pytest.raises(ValidationError, match="naive datetime"):
        fact(valid_at=datetime(2024, 1, 1))
    with pytest.raises(InvalidInputError):
        true_at(fact(), datetime(2024, 1, 1))


def test_aware_datetimes_are_normalized_to_utc():
    paris = timezone(timedelta(hours=1))
    f = fact(valid_at=datetime(2024, 1, 1, 1, 0, tzinfo=paris))
    assert f.valid_at == T0 and f.valid_at.tzinfo == UTC
    assert assume_utc(datetime(2024, 1, 1)) == T0
    assert ensure_utc(datetime(2024, 1, 1, 1, tzinfo=paris)) == T0


def test_epoch_ms_round_trip_is_exact():
    moment = datetime(2023, 5, 8, 13, 56, 7, 123000, tzinfo=UTC)
    assert from_epoch_ms(to_epoch_ms(moment)) == moment
    assert to_epoch_ms(None) is None and from_epoch_ms(None) is None


def test_true_at_is_half_open_on_the_world_timeline():
    f = fact(valid_at=day(10), invalid_at=day(20))
    assert not true_at(f, day(9))
    assert true_at(f, day(10))
    assert true_at(f, day(19))
    assert not true_at(f, day(20))
    assert true_at(fact(), day(-1000))  # open bounds: always true


def test_known_at_follows_the_database_timeline():
    f = fact(created_at=day(5), expired_at=day(7))
    assert not known_at(f, day(4))
    assert known_at(f, day(5)) and known_at(f, day(6))
    assert not known_at(f, day(7))


def test_current_means_not_expired_and_not_ended():
    assert is_current(fact(), day(0))
    assert not is_current(fact(expired_at=day(1)), day(0))
    assert not is_current(fact(invalid_at=day(1)), day(2))
    assert is_current(fact(invalid_at=day(3)), day(2))  # ends in the future: still true now


def test_relation_types_are_screaming_snake_case():
    assert to_relation_type("works for") == "WORKS_FOR"
    assert to_relation_type("worksFor") == "WORKS_FOR"
    assert to_relation_type("lives-in (city)") == "LIVES_IN_CITY"
    assert to_relation_type("") == "RELATES_TO"
    with pytest.raises(ValidationError, match="SCREAMING_SNAKE_CASE"):
        fact(relation_type="works for")


def test_names_normalize_for_exact_matching():
    assert normalize_name("  Robert   SMITH. ") == "robert smith"
    assert normalize_name("Ｃａｆé") == normalize_name("café")
    e = Entity(group_id="g", name="Robert Smith", aliases=("Bob",))
    assert e.normalized_names == {"robert smith", "bob"}


def test_message_episode_text_carries_the_speaker():
    ep = Episode(group_id="g", content="I moved to Berlin", speaker="Caroline", reference_time=T0)
    assert ep.text == "Caroline: I moved to Berlin"
    assert Episode(group_id="g", kind=EpisodeKind.TEXT, content="plain").text == "plain"


def test_domain_objects_are_frozen_and_strict():
    e = Entity(group_id="g", name="Alice")
    with pytest.raises(ValidationError):
        e.name = "Bob"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Entity(group_id="g", name="Alice", colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Entity(group_id="", name="Alice")


def test_filters_reference_semantics():
    old = fact(valid_at=day(0), invalid_at=day(10), created_at=day(0), expired_at=day(12))
    new = fact(valid_at=day(10), created_at=day(12), relation_type="WORKS_FOR")
    now = SearchFilters(now=day(20))
    assert not fact_matches(old, now) and fact_matches(new, now)
    assert fact_matches(old, SearchFilters(as_of=day(5))) and not fact_matches(new, SearchFilters(as_of=day(5)))
    assert fact_matches(old, SearchFilters(known_at=day(11)))
    assert not fact_matches(new, SearchFilters(known_at=day(11)))
    assert fact_matches(old, SearchFilters(include_superseded=True))
    assert not fact_matches(old, SearchFilters(include_superseded=True, relation_types=("WORKS_FOR",)))
    in_range = SearchFilters(include_superseded=True, valid_at=TimeRange(start=day(5), end=day(15)))
    assert fact_matches(new, in_range) and not fact_matches(old, in_range)
    null_ok = SearchFilters(include_superseded=True, expired_at=TimeRange(end=day(1), include_null=True))
    assert fact_matches(new, null_ok) and not fact_matches(old, null_ok)
    with pytest.raises(ValidationError):
        TimeRange(start=day(2), end=day(1))
