"""Edge invalidation (docs/design.md §1, paper §2.2.3): a pure function over a new fact and the facts it contradicts.

Two timelines. On T (the world), a contradicted fact stops being true when the new one starts: its
``invalid_at`` becomes the new fact's ``valid_at``. On T' (our records) it was superseded now: its
``expired_at`` becomes ``now``. Nothing is deleted, and nothing is rewritten: each changed fact is
a new version recorded ``now``, and the store keeps the version it replaces (``store.history``).

Order on T decides, not arrival order. When the new fact started *before* a fact it contradicts (an
older episode arriving late), the newer fact stands and the new one is born closed: its
``invalid_at`` is the newer fact's ``valid_at``. It is not expired: the record is right, it is
history. Facts whose intervals do not overlap are left alone.

A fact's start, when the text gave none, is the reference time of the episode that stated it.
The closing fact's id is kept in ``attributes["superseded_by"]`` so that removing the episode that
stated it can reopen what it closed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from chronomem.domain import Fact

__all__ = ["ENDED_BY", "SUPERSEDED_BY", "Invalidation", "end", "invalidate", "reopen", "supersede_within_episode"]

SUPERSEDED_BY = "superseded_by"
ENDED_BY = "ended_by"  # the episode that said a fact ended (stages/ended.py)


@dataclass(frozen=True, slots=True)
class Invalidation:
    new_fact: Fact  # the new fact, closed if a later fact already holds
    expired: tuple[Fact, ...]  # contradicted facts, now with invalid_at and expired_at


def _start(fact: Fact, default: datetime) -> datetime:
    return fact.valid_at or default


def _ended_before(fact: Fact, moment: datetime) -> bool:
    return fact.invalid_at is not None and fact.invalid_at <= moment


def invalidate(
    new_fact: Fact, contradicted: Sequence[Fact], *, now: datetime, reference_time: datetime
) -> Invalidation:
    """Apply the contradictions of ``new_fact`` on both timelines; returns the changed facts."""
    start = _start(new_fact, reference_time)
    expired: list[Fact] = []
    for old in sorted(contradicted, key=lambda f: (f.valid_at or f.created_at, f.id)):
        if old.id == new_fact.id or old.expired_at is not None:
            continue  # already superseded in our records
        if old.valid_at is not None and old.valid_at > start:
            # the new fact is older in the world: it held until the newer one began
            if not _ended_before(new_fact, old.valid_at):
                new_fact = new_fact.model_copy(
                    update={"invalid_at": old.valid_at, "attributes": {**new_fact.attributes, SUPERSEDED_BY: old.id}}
                )
            continue
        if _ended_before(old, start):
            continue  # it had already ended when the new fact began: no overlap, no conflict
        expired.append(
            old.model_copy(
                update={
                    "invalid_at": start,
                    "expired_at": now,
                    "recorded_at": now,  # a new version, recorded now (history is append-only)
                    "attributes": {**old.attributes, SUPERSEDED_BY: new_fact.id},
                }
            )
        )
    return Invalidation(new_fact=new_fact, expired=tuple(expired))


def supersede_within_episode(
    earlier: Fact, later: Fact, *, now: datetime, reference_time: datetime
) -> tuple[Fact, Fact]:
    """Two statements of one episode that contradict: ``(earlier, later)`` after the later one wins.

    Order on T still decides when the dates differ: an earlier statement about a later time ("I'll
    move to Paris next year. I live in Lisbon.") closes the later one, as :func:`invalidate` does. An
    earlier statement about an earlier time is history learned now ("I lived in Lisbon; since May I
    live in Paris"): it is born closed, not expired. With the same start (undated: a self-correction,
    "I work at Acme. Actually, at Beta.") the earlier one is superseded in our records at once.
    """
    result = invalidate(later, [earlier], now=now, reference_time=reference_time)
    if not result.expired:
        return earlier, result.new_fact
    closed = result.expired[0]
    if _start(earlier, reference_time) < _start(later, reference_time):
        closed = closed.model_copy(update={"expired_at": None})
    return closed, result.new_fact


def end(
    fact: Fact, *, at: datetime, said_at: datetime, now: datetime, episode_id: str, replaced_by: str | None = None
) -> Fact:
    """Close a fact an episode (of reference time ``said_at``) says ended ("BA cancelled BA283", "my
    new lead is Aisha"): no longer true from ``at`` on T, superseded ``now`` on T'. An end before the
    fact began (a plan cancelled ahead of its day) closes it where it began: it never held. An end
    still to come ("will step down on March 31") is learnt, not a supersession: the fact holds until
    then, so it is not expired. ``ended_by`` names the episode and ``superseded_by`` the fact that
    replaced it, so removing either reopens it."""
    attributes = {**fact.attributes, ENDED_BY: episode_id}
    if replaced_by is not None:
        attributes[SUPERSEDED_BY] = replaced_by
    start = fact.valid_at
    return fact.model_copy(update={
        "invalid_at": max(at, start) if start is not None else at,
        "expired_at": now if at <= said_at else None,
        "recorded_at": now,
        "attributes": attributes,
    })


def reopen(fact: Fact, *, now: datetime) -> Fact:
    """Undo an invalidation whose cause was removed: the fact is open and current again, as a new
    version recorded ``now`` (the closed version stays in the history)."""
    attributes = {k: v for k, v in fact.attributes.items() if k not in (SUPERSEDED_BY, ENDED_BY)}
    return fact.model_copy(
        update={"invalid_at": None, "expired_at": None, "attributes": attributes, "recorded_at": now}
    )
