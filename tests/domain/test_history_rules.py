"""The pure rules of append-only history: what makes a new version, and what known_at means."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chronomem.domain import Fact, FactSource
from chronomem.filters import SearchFilters, fact_matches
from chronomem.store.history import in_force, revise, versions_of

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def job(**kw: object) -> Fact:
    return Fact(group_id="g", source_id="alice", target_id="acme", fact="Alice works at Acme", created_at=day(0), **kw)


def test_a_new_fact_is_version_one_recorded_when_created() -> None:
    fact = job()
    assert (fact.version, fact.recorded_at) == (1, day(0))
    assert revise(None, fact).head == fact and revise(None, fact).closed is None


def test_a_change_to_what_a_fact_says_closes_the_stored_version() -> None:
    stored = job()
    closed = stored.model_copy(update={"invalid_at": day(5), "expired_at": day(5), "recorded_at": day(5)})
    revision = revise(stored, closed)
    assert (revision.head.version, revision.head.recorded_at) == (2, day(5))
    assert revision.closed is not None and revision.closed.fact == stored and revision.closed.recorded_to == day(5)


def test_new_provenance_alone_is_no_new_version() -> None:
    stored = job(episode_ids=("e1",))
    cited = stored.model_copy(update={"episode_ids": ("e1", "e2"), "sources": (FactSource(name="crm"),),
                                      "recorded_at": day(3)})
    revision = revise(stored, cited)
    assert revision.closed is None and (revision.head.version, revision.head.recorded_at) == (1, day(0))
    assert revision.head.sources == (FactSource(name="crm"),)


def test_transaction_time_only_moves_forward() -> None:
    stored = job()
    backdated = stored.model_copy(update={"fact": "Alice works at Acme Corp", "recorded_at": day(-1)})
    assert revise(stored, backdated, now=day(9)).head.recorded_at == day(9)
    assert revise(stored, backdated, now=day(-3)).head.recorded_at == day(0) + timedelta(microseconds=1)


def test_in_force_picks_the_version_held_at_a_time() -> None:
    stored = job()
    revision = revise(stored, stored.model_copy(update={"invalid_at": day(5), "recorded_at": day(5)}))
    assert revision.closed is not None
    history = versions_of([revision.closed], revision.head)
    assert in_force(history, day(-1)) is None
    assert in_force(history, day(4)) == stored
    assert in_force(history, day(5)) == revision.head


def test_known_at_alone_keeps_what_was_current_then_and_with_as_of_what_was_true() -> None:
    superseded = job(valid_at=datetime(2020, 1, 1, tzinfo=UTC), invalid_at=datetime(2024, 1, 1, tzinfo=UTC),
                     expired_at=day(5))
    assert not fact_matches(superseded, SearchFilters(known_at=day(6)))  # no longer current on day 6
    assert fact_matches(superseded, SearchFilters(known_at=day(4)))
    in_2022 = datetime(2022, 1, 1, tzinfo=UTC)
    assert fact_matches(superseded, SearchFilters(as_of=in_2022, known_at=day(6)))  # true in 2022, known on day 6
    assert not fact_matches(superseded, SearchFilters(as_of=in_2022, known_at=day(-1)))  # not recorded yet
