"""Read queries, each a plain function of a connection and a group's integer id (``gid``)."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from chronomem.domain import Community, Entity, Episode, EpisodeStatus, Fact, FactVersion
from chronomem.filters import SearchFilters
from chronomem.store.base import GroupStats, Scope, WeightedEdge
from chronomem.store.history import versions_of
from chronomem.store.sqlite.codec import (
    COMMUNITY_COLUMNS,
    ENTITY_COLUMNS,
    EPISODE_COLUMNS,
    FACT_COLUMNS,
    VERSION_COLUMNS,
    community_from_row,
    entity_from_row,
    episode_from_row,
    fact_from_row,
    from_us,
    to_us,
)
from chronomem.store.sqlite.timemask import NULL_TIME, TimeOverrides
from chronomem.store.sqlite.where import entity_conditions, fact_conditions
from chronomem.text.names import normalize_name
from chronomem.timeutil import ensure_utc, utc_now

__all__ = [
    "accepted_ids",
    "as_known_at",
    "communities_by_ids",
    "entities_by_ids",
    "entities_by_names",
    "entities_of_episodes",
    "entities_of_facts",
    "entity_edges",
    "episodes_by_ids",
    "episodes_of_entities",
    "fact_history",
    "facts_between",
    "facts_by_ids",
    "facts_of_entities",
    "facts_of_episode",
    "group_stats",
    "list_communities",
    "list_entities",
    "list_episodes",
    "list_facts",
    "vectors_by_ids",
    "versions_in_force",
]

_IN_JSON = "IN (SELECT value FROM json_each(?))"
_MAIN_TABLE = {
    Scope.FACTS: "facts",
    Scope.ENTITIES: "entities",
    Scope.EPISODES: "episodes",
    Scope.COMMUNITIES: "communities",
}


def _ids_param(ids: Sequence[str]) -> str:
    return json.dumps(list(ids))


def _in_given_order(objects: list[Any], ids: Sequence[str]) -> list[Any]:
    by_id = {obj.id: obj for obj in objects}
    return [by_id[i] for i in ids if i in by_id]


def episodes_by_ids(conn: sqlite3.Connection, gid: int, group_id: str, ids: Sequence[str]) -> list[Episode]:
    rows = conn.execute(
        f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE gid = ? AND id {_IN_JSON}", (gid, _ids_param(ids))
    )
    return _in_given_order([episode_from_row(group_id, r) for r in rows], ids)


def entities_by_ids(conn: sqlite3.Connection, gid: int, group_id: str, ids: Sequence[str]) -> list[Entity]:
    rows = conn.execute(
        f"SELECT {ENTITY_COLUMNS} FROM entities WHERE gid = ? AND id {_IN_JSON}", (gid, _ids_param(ids))
    )
    return _in_given_order([entity_from_row(group_id, r) for r in rows], ids)


def facts_by_ids(
    conn: sqlite3.Connection, gid: int, group_id: str, ids: Sequence[str], known_at: datetime | None = None
) -> list[Fact]:
    rows = conn.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE gid = ? AND id {_IN_JSON}", (gid, _ids_param(ids)))
    facts = _in_given_order([fact_from_row(group_id, r) for r in rows], ids)
    return facts if known_at is None else as_known_at(conn, gid, group_id, facts, known_at)


def as_known_at(conn: sqlite3.Connection, gid: int, group_id: str, facts: list[Fact], t: datetime) -> list[Fact]:
    """Each fact as our records held it at ``t`` (in the same order); facts recorded later go."""
    t = ensure_utc(t)
    later = [f.id for f in facts if f.recorded_at > t]
    if not later:
        return facts
    t_us = to_us(t)
    rows = conn.execute(
        f"SELECT {VERSION_COLUMNS} FROM fact_versions WHERE gid = ? AND fact_id {_IN_JSON} "
        "AND recorded_to > ? AND recorded_from <= ?",
        (gid, _ids_param(later), t_us, t_us),
    )
    earlier = {fact.id: fact for fact in (fact_from_row(group_id, r) for r in rows)}
    return [earlier.get(f.id, f) for f in facts if f.recorded_at <= t or f.id in earlier]


def versions_in_force(conn: sqlite3.Connection, gid: int, t: datetime) -> TimeOverrides:
    """The earlier versions in force at ``t``: their fact ids and (valid_at, invalid_at, created_at,
    expired_at) rows, as the in-memory vector index keeps times (a covering index answers it)."""
    t_us = to_us(t)
    rows = conn.execute(
        "SELECT fact_id, valid_at, invalid_at, created_at, expired_at FROM fact_versions "
        "WHERE gid = ? AND recorded_to > ? AND recorded_from <= ?",
        (gid, t_us, t_us),
    ).fetchall()
    if not rows:
        return TimeOverrides([], np.empty((0, 4), dtype=np.int64))
    stamps = np.array([r[1:] for r in rows], dtype=object)
    times = np.where(stamps == None, NULL_TIME, stamps).astype(np.int64)  # noqa: E711 (elementwise)
    return TimeOverrides([r[0] for r in rows], times)


def fact_history(conn: sqlite3.Connection, gid: int, group_id: str, fact_id: str) -> list[FactVersion]:
    """Every version of a fact, oldest first (empty for an unknown fact)."""
    head = facts_by_ids(conn, gid, group_id, [fact_id])
    if not head:
        return []
    rows = conn.execute(
        f"SELECT {VERSION_COLUMNS}, recorded_to FROM fact_versions WHERE gid = ? AND fact_id = ? ORDER BY version",
        (gid, fact_id),
    )
    earlier = [FactVersion(fact=fact_from_row(group_id, r[:-1]), recorded_to=from_us(r[-1])) for r in rows]
    return versions_of(earlier, head[0])


def _members(conn: sqlite3.Connection, gid: int, community_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    members: dict[str, list[str]] = defaultdict(list)
    for community_id, entity_id in conn.execute(
        f"SELECT community_id, entity_id FROM community_members WHERE gid = ? AND community_id {_IN_JSON} "
        "ORDER BY community_id, position",
        (gid, _ids_param(community_ids)),
    ):
        members[community_id].append(entity_id)
    return {k: tuple(v) for k, v in members.items()}


def communities_by_ids(conn: sqlite3.Connection, gid: int, group_id: str, ids: Sequence[str]) -> list[Community]:
    rows = conn.execute(
        f"SELECT {COMMUNITY_COLUMNS} FROM communities WHERE gid = ? AND id {_IN_JSON}", (gid, _ids_param(ids))
    ).fetchall()
    members = _members(conn, gid, [r[0] for r in rows])
    return _in_given_order([community_from_row(group_id, r, members.get(r[0], ())) for r in rows], ids)


def vectors_by_ids(conn: sqlite3.Connection, gid: int, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
    rows = conn.execute(
        f"SELECT id, vec FROM vectors WHERE gid = ? AND scope = ? AND id {_IN_JSON}",
        (gid, scope.value, _ids_param(ids)),
    )
    return {id_: np.frombuffer(blob, dtype=np.float32).copy() for id_, blob in rows}


def list_episodes(
    conn: sqlite3.Connection,
    gid: int,
    group_id: str,
    *,
    limit: int | None,
    before: datetime | None,
    statuses: Sequence[EpisodeStatus] | None,
    newest_first: bool,
) -> list[Episode]:
    where: list[str] = ["gid = ?"]
    params: list[Any] = [gid]
    if before is not None:
        where.append("reference_time < ?")
        params.append(to_us(before))
    if statuses is not None:
        where.append(f"status {_IN_JSON}")
        params.append(json.dumps([EpisodeStatus(s).value for s in statuses]))
    direction = "DESC" if newest_first else "ASC"
    params.append(-1 if limit is None else limit)
    rows = conn.execute(
        f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {' AND '.join(where)} "
        f"ORDER BY reference_time {direction}, created_at {direction}, id {direction} LIMIT ?",
        params,
    )
    return [episode_from_row(group_id, r) for r in rows]


def list_entities(conn: sqlite3.Connection, gid: int, group_id: str, *, limit: int | None, offset: int) -> list[Entity]:
    rows = conn.execute(
        f"SELECT {ENTITY_COLUMNS} FROM entities WHERE gid = ? ORDER BY created_at, id LIMIT ? OFFSET ?",
        (gid, -1 if limit is None else limit, offset),
    )
    return [entity_from_row(group_id, r) for r in rows]


def _select_facts(
    conn: sqlite3.Connection,
    group_id: str,
    conditions: list[str],
    params: list[Any],
    tail: str = "",
    *,
    targeted: bool = False,
) -> list[Fact]:
    columns = ", ".join(f"f.{c.strip()}" for c in FACT_COLUMNS.split(","))
    # A targeted lookup (by pair, entity or episode) selects few rows: the unary "+" keeps the planner
    # from walking the whole group along the created_at index just to avoid sorting them.
    order = "+f.created_at, f.id" if targeted else "f.created_at, f.id"
    sql = f"SELECT {columns} FROM facts f WHERE {' AND '.join(conditions)} ORDER BY {order} {tail}"
    return [fact_from_row(group_id, r) for r in conn.execute(sql, params)]


def list_facts(
    conn: sqlite3.Connection,
    gid: int,
    group_id: str,
    *,
    filters: SearchFilters | None,
    limit: int | None,
    offset: int,
) -> list[Fact]:
    conditions, params = ["f.gid = ?"], [gid]
    if filters is not None:  # None lists every fact, superseded ones included
        extra, extra_params = fact_conditions(filters)
        conditions += extra
        params += extra_params
    facts = _select_facts(
        conn, group_id, conditions, [*params, -1 if limit is None else limit, offset], "LIMIT ? OFFSET ?"
    )
    if filters is not None and filters.known_at is not None:
        return as_known_at(conn, gid, group_id, facts, filters.known_at)
    return facts


def list_communities(conn: sqlite3.Connection, gid: int, group_id: str) -> list[Community]:
    ids = [r[0] for r in conn.execute("SELECT id FROM communities WHERE gid = ? ORDER BY created_at, id", (gid,))]
    return communities_by_ids(conn, gid, group_id, ids)


def entities_by_names(conn: sqlite3.Connection, gid: int, group_id: str, names: Sequence[str]) -> list[Entity]:
    normalized = sorted({normalize_name(n) for n in names} - {""})
    rows = conn.execute(
        f"SELECT {', '.join('e.' + c.strip() for c in ENTITY_COLUMNS.split(','))} FROM entities e "
        f"WHERE e.gid = ? AND e.id IN (SELECT entity_id FROM entity_names WHERE gid = ? AND normalized {_IN_JSON}) "
        "ORDER BY e.created_at, e.id",
        (gid, gid, json.dumps(normalized)),
    )
    return [entity_from_row(group_id, r) for r in rows]


def _current_unless(include_superseded: bool) -> tuple[list[str], list[Any]]:
    return ([], []) if include_superseded else fact_conditions(None)


def facts_between(
    conn: sqlite3.Connection, gid: int, group_id: str, a: str, b: str, *, include_superseded: bool
) -> list[Fact]:
    extra, extra_params = _current_unless(include_superseded)
    conditions = [
        "f.gid = ?",
        "((f.source_id = ? AND f.target_id = ?) OR (f.source_id = ? AND f.target_id = ?))",
        *extra,
    ]
    return _select_facts(conn, group_id, conditions, [gid, a, b, b, a, *extra_params], targeted=True)


def facts_of_entities(
    conn: sqlite3.Connection, gid: int, group_id: str, entity_ids: Sequence[str], *, include_superseded: bool
) -> list[Fact]:
    extra, extra_params = _current_unless(include_superseded)
    conditions = [
        "f.gid = ?",
        f"f.id IN (SELECT fact_id FROM fact_entities WHERE gid = ? AND entity_id {_IN_JSON})",
        *extra,
    ]
    return _select_facts(
        conn, group_id, conditions, [gid, gid, _ids_param(entity_ids), *extra_params], targeted=True
    )


def facts_of_episode(conn: sqlite3.Connection, gid: int, group_id: str, episode_id: str) -> list[Fact]:
    conditions = ["f.gid = ?", "f.id IN (SELECT fact_id FROM fact_episodes WHERE gid = ? AND episode_id = ?)"]
    return _select_facts(conn, group_id, conditions, [gid, gid, episode_id], targeted=True)


def entities_of_episodes(conn: sqlite3.Connection, gid: int, episode_ids: Sequence[str]) -> dict[str, list[str]]:
    result: dict[str, list[str]] = {i: [] for i in dict.fromkeys(episode_ids)}
    for episode_id, entity_id in conn.execute(
        f"SELECT episode_id, entity_id FROM mentions WHERE gid = ? AND episode_id {_IN_JSON} "
        "ORDER BY episode_id, entity_id",
        (gid, _ids_param(episode_ids)),
    ):
        result[episode_id].append(entity_id)
    return result


def entities_of_facts(conn: sqlite3.Connection, gid: int, fact_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    rows = conn.execute(
        f"SELECT id, source_id, target_id, other_entity_ids FROM facts WHERE gid = ? AND id {_IN_JSON}",
        (gid, _ids_param(fact_ids)),
    )
    return {id_: (source, target, *json.loads(others)) for id_, source, target, others in rows}


def episodes_of_entities(conn: sqlite3.Connection, gid: int, entity_ids: Sequence[str]) -> dict[str, list[str]]:
    result: dict[str, list[str]] = {i: [] for i in dict.fromkeys(entity_ids)}
    for entity_id, episode_id in conn.execute(
        f"SELECT entity_id, episode_id FROM mentions WHERE gid = ? AND entity_id {_IN_JSON} "
        "ORDER BY entity_id, episode_id",
        (gid, _ids_param(entity_ids)),
    ):
        result[entity_id].append(episode_id)
    return result


def entity_edges(conn: sqlite3.Connection, gid: int) -> tuple[list[str], list[WeightedEdge]]:
    ids = [r[0] for r in conn.execute("SELECT id FROM entities WHERE gid = ? ORDER BY created_at, id", (gid,))]
    known = set(ids)
    current, params = fact_conditions(None)
    rows = conn.execute(
        "SELECT min(f.source_id, f.target_id) AS a, max(f.source_id, f.target_id) AS b, count(*) FROM facts f "
        f"WHERE f.gid = ? AND f.source_id != f.target_id AND {' AND '.join(current)} GROUP BY a, b ORDER BY a, b",
        (gid, *params),
    )
    edges = [WeightedEdge(a, b, n) for a, b, n in rows if a in known and b in known]
    return ids, edges


def group_stats(conn: sqlite3.Connection, gid: int) -> GroupStats:
    now = to_us(utc_now())
    row = conn.execute(
        "SELECT (SELECT count(*) FROM episodes WHERE gid = :g), (SELECT count(*) FROM entities WHERE gid = :g), "
        "(SELECT count(*) FROM facts WHERE gid = :g), "
        "(SELECT count(*) FROM facts WHERE gid = :g AND expired_at IS NULL "
        "AND (invalid_at IS NULL OR invalid_at > :now)), "
        "(SELECT count(*) FROM communities WHERE gid = :g)",
        {"g": gid, "now": now},
    ).fetchone()
    return GroupStats(*row)


def _scope_conditions(
    scope: Scope, filters: SearchFilters | None, alias: str, time_clauses: bool = True
) -> tuple[list[str], list[Any]]:
    if scope is Scope.FACTS:
        return fact_conditions(filters, alias, time_clauses=time_clauses)
    if scope is Scope.ENTITIES:
        return entity_conditions(filters, alias)
    return [], []


def accepted_ids(
    conn: sqlite3.Connection,
    gid: int,
    scope: Scope,
    filters: SearchFilters | None,
    ids: list[str],
    *,
    time_clauses: bool = True,
) -> set[str] | None:
    """Which of ``ids`` pass the filters (``None``: the scope has no filter to apply)."""
    conditions, params = _scope_conditions(scope, filters, "m", time_clauses)
    if not conditions:
        return None
    where = " AND ".join(["m.gid = ?", f"m.id {_IN_JSON}", *conditions])
    rows = conn.execute(f"SELECT m.id FROM {_MAIN_TABLE[scope]} m WHERE {where}", (gid, _ids_param(ids), *params))
    return {r[0] for r in rows}
