"""Invalidation is a pure function: these tests need no store and no model."""

from __future__ import annotations

from datetime import timedelta

from ingest_doubles import at

from chronomem.domain import Fact
from chronomem.ingest.invalidation import SUPERSEDED_BY, invalidate, reopen

NOW = at("2025-01-01")


def fact(text: str, valid: str | None = None, invalid: str | None = None, **extra: object) -> Fact:
    return Fact(
        group_id="g", source_id="alice", target_id=text.split()[-1].lower(), relation_type="WORKS_FOR", fact=text,
        valid_at=at(valid) if valid else None, invalid_at=at(invalid) if invalid else None,
        created_at=at("2024-12-01"), **extra,
    )


def test_contradicted_fact_ends_when_the_new_one_starts_and_expires_now():
    old, new = fact("Alice works at Acme", "2020-01-01"), fact("Alice works at Beta", "2024-05-18")
    result = invalidate(new, [old], now=NOW, reference_time=at("2024-06-01"))
    (closed,) = result.expired
    assert closed.invalid_at == at("2024-05-18") and closed.expired_at == NOW
    assert closed.attributes[SUPERSEDED_BY] == new.id
    assert result.new_fact == new


def test_undated_new_fact_starts_at_the_reference_time():
    old, new = fact("Alice works at Acme", "2020-01-01"), fact("Alice works at Beta")
    (closed,) = invalidate(new, [old], now=NOW, reference_time=at("2024-06-01")).expired
    assert closed.invalid_at == at("2024-06-01")


def test_late_arriving_older_fact_is_born_closed_and_does_not_touch_the_newer_one():
    newer, late = fact("Alice works at Beta", "2024-05-18"), fact("Alice works at Acme", "2020-01-01")
    result = invalidate(late, [newer], now=NOW, reference_time=at("2020-01-01"))
    assert result.expired == ()
    assert result.new_fact.invalid_at == at("2024-05-18")
    assert result.new_fact.expired_at is None  # history, not a superseded record


def test_facts_that_do_not_overlap_are_left_alone():
    ended = fact("Alice works at Acme", "2018-01-01", "2019-01-01")
    new = fact("Alice works at Beta", "2024-05-18")
    assert invalidate(new, [ended], now=NOW, reference_time=at("2024-06-01")).expired == ()
    already_closed_new = fact("Alice worked at Gamma", "2010-01-01", "2011-01-01")
    result = invalidate(already_closed_new, [new], now=NOW, reference_time=at("2010-01-01"))
    assert result.new_fact.invalid_at == at("2011-01-01") and result.expired == ()


def test_already_expired_facts_are_not_closed_twice():
    old = fact("Alice works at Acme", "2020-01-01").model_copy(update={"expired_at": at("2024-01-01")})
    new = fact("Alice works at Beta", "2024-05-18")
    assert invalidate(new, [old], now=NOW, reference_time=at("2024-06-01")).expired == ()


def test_reopen_undoes_an_invalidation():
    old, new = fact("Alice works at Acme", "2020-01-01"), fact("Alice works at Beta", "2024-05-18")
    (closed,) = invalidate(new, [old], now=NOW, reference_time=at("2024-06-01")).expired
    reopened = reopen(closed, now=closed.expired_at + timedelta(days=1))
    assert reopened.invalid_at is None and reopened.expired_at is None
    assert SUPERSEDED_BY not in reopened.attributes
