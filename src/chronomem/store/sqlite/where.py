"""SearchFilters as SQL conditions over the ``facts`` and ``entities`` tables.

With ``known_at`` a fact is judged as the version our records held at t': its latest version in
``facts`` when that was recorded by t', else its earlier version in force at t' in
``fact_versions`` (same column names, so one translation serves both).

The translation mirrors :func:`chronomem.filters.fact_matches` clause by clause (the contract
suite compares the two on randomized facts). Lists travel as one JSON parameter (``json_each``),
so no filter ever changes the query's shape with its size or splices a value into SQL.
"""

from __future__ import annotations

import json
from typing import Any

from chronomem.filters import SearchFilters, TimeRange
from chronomem.store.sqlite.codec import to_us
from chronomem.timeutil import utc_now

__all__ = ["entity_conditions", "fact_conditions"]

_TIME_COLUMNS = ("valid_at", "invalid_at", "created_at", "expired_at")


def _current(alias: str, now_us: int | None) -> tuple[str, list[Any]]:
    return (
        f"{alias}.expired_at IS NULL AND ({alias}.invalid_at IS NULL OR {alias}.invalid_at > ?)",
        [now_us],
    )


def _time_range(column: str, time_range: TimeRange) -> tuple[str, list[Any]]:
    parts, params = [], []
    if time_range.start is not None:
        parts.append(f"{column} >= ?")
        params.append(to_us(time_range.start))
    if time_range.end is not None:
        parts.append(f"{column} < ?")
        params.append(to_us(time_range.end))
    bounded = " AND ".join(parts) if parts else f"{column} IS NOT NULL"
    if time_range.include_null:
        return f"({column} IS NULL OR ({bounded}))", params
    return f"({bounded})", params


def _labels(alias: str, entity_expr: str, labels: tuple[str, ...]) -> tuple[str, list[Any]]:
    return (
        f"EXISTS (SELECT 1 FROM entity_labels l WHERE l.gid = {alias}.gid AND l.entity_id IN ({entity_expr})"
        " AND l.label IN (SELECT value FROM json_each(?)))",
        [json.dumps(list(labels))],
    )


def fact_conditions(
    filters: SearchFilters | None, alias: str = "f", *, time_clauses: bool = True
) -> tuple[list[str], list[Any]]:
    """SQL conditions (AND-ed by the caller) and their parameters; ``None`` means current facts.
    ``time_clauses=False`` leaves out every timestamp condition (checked elsewhere, in memory)."""
    if not time_clauses:
        filters = SearchFilters(
            labels=filters.labels if filters else None,
            relation_types=filters.relation_types if filters else None,
            include_superseded=True,
        )
    if filters is None:
        sql, now_params = _current(alias, to_us(utc_now()))
        return [sql], now_params
    if filters.known_at is None:
        return _conditions(filters, alias)
    t = to_us(filters.known_at)
    latest, latest_params = _conditions(filters, alias)
    earlier, earlier_params = _conditions(filters, "v")
    sql = (
        f"(({alias}.recorded_at <= ? AND {' AND '.join(latest)}) OR EXISTS (SELECT 1 FROM fact_versions v "
        f"WHERE v.gid = {alias}.gid AND v.fact_id = {alias}.id AND v.recorded_to > ? AND v.recorded_from <= ? "
        f"AND {' AND '.join(earlier)}))"
    )
    return [sql], [t, *latest_params, t, t, *earlier_params]


def _conditions(filters: SearchFilters, alias: str) -> tuple[list[str], list[Any]]:
    conditions: list[str] = []
    params: list[Any] = []

    def add(sql: str, values: list[Any]) -> None:
        conditions.append(sql)
        params.extend(values)

    if filters.relation_types is not None:
        add(f"{alias}.relation_type IN (SELECT value FROM json_each(?))", [json.dumps(list(filters.relation_types))])
    if filters.labels is not None:
        add(*_labels(alias, f"{alias}.source_id, {alias}.target_id", filters.labels))
    for name in _TIME_COLUMNS:
        time_range: TimeRange | None = getattr(filters, name)
        if time_range is not None:
            add(*_time_range(f"{alias}.{name}", time_range))
    if filters.as_of is not None:
        t = to_us(filters.as_of)
        add(
            f"({alias}.valid_at IS NULL OR {alias}.valid_at <= ?) "
            f"AND ({alias}.invalid_at IS NULL OR ? < {alias}.invalid_at)",
            [t, t],
        )
    if filters.known_at is not None:
        t = to_us(filters.known_at)
        if filters.as_of is None:  # alone, known_at keeps what was current then (see filters)
            add(f"{alias}.created_at <= ? AND ({alias}.expired_at IS NULL OR ? < {alias}.expired_at)", [t, t])
        else:
            add(f"{alias}.created_at <= ?", [t])
    if filters.current_only:
        add(*_current(alias, to_us(filters.effective_now())))
    return conditions, params


def entity_conditions(filters: SearchFilters | None, alias: str = "e") -> tuple[list[str], list[Any]]:
    """Only ``labels`` filters entities; every other filter concerns facts."""
    if filters is None or filters.labels is None:
        return [], []
    sql, params = _labels(alias, f"{alias}.id", filters.labels)
    return [sql], params
