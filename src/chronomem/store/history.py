"""Append-only fact history, the part every backend shares (DESIGN §1 "History is append-only").

A store keeps the latest version of each fact where its indexes serve it, and earlier versions
beside it, each unchanged. An upsert of a stored fact goes through :func:`revise`: when what the
fact *says* changed (text, participants, relation type, attributes, any of its four timestamps)
the stored version is closed at the new version's transaction time and kept; when only its
provenance changed (a restatement adds a source or an evidence span, a deleted episode leaves it)
the latest version is updated in place, since provenance is evidence for the fact rather than part
of what it says.

Transaction time belongs to the records, so it only moves forward: a new version's
``recorded_at`` is the caller's when it is later than the stored version's (the pipeline passes
its clock, so tests control it), else the store's clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from chronomem.domain import Fact, FactVersion
from chronomem.timeutil import utc_now

__all__ = ["Revision", "in_force", "revise", "says_the_same", "versions_of"]

_ONE_US = timedelta(microseconds=1)
# What is not part of what a fact says: its identity, its evidence and its place in the history.
_NOT_VERSIONED = frozenset({"id", "group_id", "episode_ids", "sources", "evidence", "version", "recorded_at"})
_VERSIONED = tuple(name for name in Fact.model_fields if name not in _NOT_VERSIONED)


def says_the_same(a: Fact, b: Fact) -> bool:
    """Do two versions of a fact state the same thing (provenance aside)?"""
    return all(getattr(a, name) == getattr(b, name) for name in _VERSIONED)


@dataclass(frozen=True, slots=True)
class Revision:
    head: Fact  # what the store keeps as the fact's latest version
    closed: FactVersion | None  # the version it replaces, with its end on T'; None if updated in place


def revise(stored: Fact | None, incoming: Fact, *, now: datetime | None = None) -> Revision:
    """How an upsert of ``incoming`` lands on the ``stored`` latest version of the same fact."""
    if stored is None:
        return Revision(incoming, None)
    if says_the_same(stored, incoming):
        in_place = incoming.model_copy(update={"version": stored.version, "recorded_at": stored.recorded_at})
        return Revision(in_place, None)
    recorded = incoming.recorded_at
    if recorded <= stored.recorded_at:
        recorded = max(now or utc_now(), stored.recorded_at + _ONE_US)
    head = incoming.model_copy(update={"version": stored.version + 1, "recorded_at": recorded})
    return Revision(head, FactVersion(fact=stored, recorded_to=recorded))


def in_force(versions: list[FactVersion], t: datetime) -> Fact | None:
    """The version our records held at ``t`` (``None`` before the fact was recorded)."""
    for version in versions:
        if version.recorded_from <= t and (version.recorded_to is None or t < version.recorded_to):
            return version.fact
    return None


def versions_of(earlier: list[FactVersion], head: Fact) -> list[FactVersion]:
    """A fact's whole history, oldest first: its closed versions, then the latest."""
    return [*sorted(earlier, key=lambda v: v.fact.version), FactVersion(fact=head)]
