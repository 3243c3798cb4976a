"""Append-only fact history, the part every backend shares (docs/design.md §1 "History is append-only").

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

An import restores a history as it was (``GraphWrite.fact_history``): :func:`check_restored`
admits only a whole, gapless one, so the restored versions answer "known at t'" exactly as the
exported store did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise

from chronomem.domain import Fact, FactVersion
from chronomem.errors import InvalidInputError
from chronomem.timeutil import utc_now

__all__ = ["Revision", "check_restored", "in_force", "revise", "says_the_same", "versions_of"]

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


def check_restored(heads: Sequence[Fact], earlier: Sequence[FactVersion]) -> None:
    """Refuse (``InvalidInputError``) earlier versions that are not, with their heads, each fact's
    whole history: versions 1 … head.version - 1, each closed exactly when the next took force, so
    every instant of T' from the first recording on has one version in force, as :func:`revise`
    leaves it. Facts without earlier versions are not checked (an export made before versions were
    exported carries heads only)."""
    by_fact: dict[str, list[FactVersion]] = {}
    for version in earlier:
        by_fact.setdefault(version.fact.id, []).append(version)
    heads_by_id = {head.id: head for head in heads}
    for fact_id, versions in by_fact.items():
        head = heads_by_id.get(fact_id)
        if head is None:
            raise InvalidInputError(f"earlier versions of fact {fact_id!r}, which the write does not hold")
        chain = [*sorted(versions, key=lambda v: v.fact.version), FactVersion(fact=head)]
        if [v.fact.version for v in chain] != list(range(1, head.version + 1)):
            raise InvalidInputError(
                f"fact {fact_id!r} (version {head.version}) needs versions 1-{head.version - 1} exactly, "
                f"got {[v.fact.version for v in chain[:-1]]}"
            )
        for version, following in pairwise(chain):
            ends = version.recorded_to
            if ends is None or not version.recorded_from < ends == following.recorded_from:
                raise InvalidInputError(
                    f"version {version.fact.version} of fact {fact_id!r} must end on T' when version "
                    f"{following.fact.version} was recorded ({following.recorded_from.isoformat()})"
                )
