"""Search filters (docs/design.md §4): plain data that every store backend translates to its query language.

Semantics, shared by all backends (the store contract suite pins them):

- ``labels``: entities carrying any of these labels; for facts, facts whose source or target does.
- ``relation_types``: facts of any of these types.
- ``valid_at`` / ``invalid_at`` / ``created_at`` / ``expired_at``: a :class:`TimeRange` on that
  timestamp of facts (``start <= value < end``); a fact whose timestamp is null matches only when the
  range says ``include_null``.
- ``as_of`` (T): facts true at t, ``valid_at <= t < invalid_at`` (null bounds open), superseded or not.
- ``known_at`` (T'): the records as they stood at t'. Each fact is judged, and returned, as the
  version our records held at t' (history is append-only: a later invalidation or correction is a
  later version, invisible at t'); facts recorded after t' are absent. Alone, it keeps the facts
  held as current at t', ``created_at <= t' < expired_at``; with ``as_of``, the facts true at t as
  known at t' (a fact superseded before t' may still have been true at an earlier t).
- With neither ``as_of`` nor ``known_at`` and ``include_superseded`` false, only *current* facts:
  ``expired_at`` null and ``invalid_at`` null or later than ``now``.

Filters on facts only affect fact results and the edges BFS may traverse; ``labels`` also filters
entities. Episodes and communities are filtered by group only.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, model_validator

from chronomem.domain import Fact, is_current, known_at, true_at
from chronomem.timeutil import UTCDateTime, utc_now

__all__ = ["SearchFilters", "TimeRange", "fact_matches"]


class TimeRange(BaseModel):
    """``start <= value < end``; either bound may be open."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: UTCDateTime | None = None
    end: UTCDateTime | None = None
    include_null: bool = False

    @model_validator(mode="after")
    def _ordered(self) -> TimeRange:
        if self.start and self.end and self.end < self.start:
            raise ValueError("time range end is before its start")
        return self

    def contains(self, value: datetime | None) -> bool:
        if value is None:
            return self.include_null
        return (self.start is None or self.start <= value) and (self.end is None or value < self.end)


class SearchFilters(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    labels: tuple[str, ...] | None = None
    relation_types: tuple[str, ...] | None = None
    valid_at: TimeRange | None = None
    invalid_at: TimeRange | None = None
    created_at: TimeRange | None = None
    expired_at: TimeRange | None = None
    as_of: UTCDateTime | None = None
    known_at: UTCDateTime | None = None
    include_superseded: bool = False
    now: UTCDateTime | None = None  # "current" is judged at this time (default: the wall clock)

    @property
    def current_only(self) -> bool:
        return self.as_of is None and self.known_at is None and not self.include_superseded

    def effective_now(self) -> datetime:
        return self.now or utc_now()


def _known(fact: Fact, filters: SearchFilters) -> bool:
    """The ``known_at`` clause, on the version held at that time."""
    assert filters.known_at is not None
    if filters.as_of is not None:
        return fact.created_at <= filters.known_at
    return known_at(fact, filters.known_at)


def fact_matches(fact: Fact, filters: SearchFilters | None, *, endpoint_labels: set[str] | None = None) -> bool:
    """Reference implementation of the fact filters, for tests and for in-memory post-filtering.

    ``fact`` is the version being judged: with ``known_at``, the one our records held then.

    ``endpoint_labels`` are the labels of the fact's source and target (needed only when
    ``filters.labels`` is set).
    """
    if filters is None:
        return is_current(fact)
    if filters.relation_types is not None and fact.relation_type not in filters.relation_types:
        return False
    if filters.labels is not None and not (endpoint_labels or set()) & set(filters.labels):
        return False
    for name in ("valid_at", "invalid_at", "created_at", "expired_at"):
        time_range: TimeRange | None = getattr(filters, name)
        if time_range is not None and not time_range.contains(getattr(fact, name)):
            return False
    if filters.as_of is not None and not true_at(fact, filters.as_of):
        return False
    if filters.known_at is not None and not _known(fact, filters):
        return False
    return not (filters.current_only and not is_current(fact, filters.effective_now()))
