"""Where a fact comes from (docs/design.md §1 "Every fact has sources"), and corrections that cite one.

A source is an episode (by id) or a named source outside the episodes (:class:`FactSource`: a CRM
record, a file and line). Citing a source a fact already has changes nothing, so restating a fact
adds its source once and never makes a copy.
"""

from __future__ import annotations

from datetime import datetime
from types import EllipsisType

from chronomem.domain import Fact, FactSource
from chronomem.errors import InvalidInputError
from chronomem.timeutil import ensure_utc

__all__ = ["CORRECTION", "DIRECT", "Provenance", "cite", "correct"]

Provenance = str | FactSource  # an episode id, or a named external source

# What a fact added directly (add_fact, no episode, no named source) cites: the call itself.
DIRECT = FactSource(name="add_fact")
# What a correction (update_fact) cites when the caller names no source.
CORRECTION = FactSource(name="update_fact")


def cite(fact: Fact, provenance: Provenance) -> Fact:
    """``fact`` with ``provenance`` among its sources (unchanged if it already was)."""
    if isinstance(provenance, FactSource):
        if provenance in fact.sources:
            return fact
        return fact.model_copy(update={"sources": (*fact.sources, provenance)})
    if provenance in fact.episode_ids:
        return fact
    return fact.model_copy(update={"episode_ids": (*fact.episode_ids, provenance)})


def correct(
    fact: Fact,
    *,
    text: str | None = None,
    valid_at: datetime | EllipsisType | None = ...,
    invalid_at: datetime | EllipsisType | None = ...,
    now: datetime,
) -> Fact:
    """``fact`` with a corrected text or time range, as the next version recorded ``now``
    (``...`` keeps a field; ``None`` clears a date). Unchanged when nothing differs."""
    update: dict[str, object] = {}
    if text is not None:
        text = " ".join(text.split())
        if not text:
            raise InvalidInputError("a corrected fact needs a text")
        update["fact"] = text
    if not isinstance(valid_at, EllipsisType):
        update["valid_at"] = ensure_utc(valid_at) if valid_at else None
    if not isinstance(invalid_at, EllipsisType):
        update["invalid_at"] = ensure_utc(invalid_at) if invalid_at else None
    start, end = update.get("valid_at", fact.valid_at), update.get("invalid_at", fact.invalid_at)
    if isinstance(start, datetime) and isinstance(end, datetime) and end < start:
        raise InvalidInputError("invalid_at is before valid_at")
    changed = {k: v for k, v in update.items() if getattr(fact, k) != v}
    return fact.model_copy(update={**changed, "recorded_at": now}) if changed else fact
