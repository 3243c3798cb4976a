"""Edge invalidation (DESIGN §1, paper §2.2.3): a pure function over a new fact and the facts it contradicts.

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

__all__ = ["SUPERSEDED_BY", "Invalidation", "invalidate", "reopen"]

SUPERSEDED_BY = "superseded_by"


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


def reopen(fact: Fact, *, now: datetime) -> Fact:
    """Undo an invalidation whose cause was removed: the fact is open and current again, as a new
    version recorded ``now`` (the closed version stays in the history)."""
    attributes = {k: v for k, v in fact.attributes.items() if k != SUPERSEDED_BY}
    return fact.model_copy(
        update={"invalid_at": None, "expired_at": None, "attributes": attributes, "recorded_at": now}
    )
