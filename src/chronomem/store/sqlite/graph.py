"""Breadth-first expansion over facts, one indexed query per hop.

Going hop by hop (rather than one recursive CTE) gives true shortest distances by construction:
an entity or fact keeps the hop at which it was first reached.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from chronomem.filters import SearchFilters
from chronomem.store.base import BfsResult
from chronomem.store.sqlite.where import fact_conditions

__all__ = ["breadth_first"]

_IN_JSON = "IN (SELECT value FROM json_each(?))"


def _seeds(
    conn: sqlite3.Connection, gid: int, entity_ids: Sequence[str], episode_ids: Sequence[str], max_hops: int
) -> dict[str, int]:
    """Seed entities of this group at hop 0, entities their seed episodes mention at hop 1."""
    hops = {
        row[0]: 0
        for row in conn.execute(
            f"SELECT id FROM entities WHERE gid = ? AND id {_IN_JSON}", (gid, json.dumps(list(entity_ids)))
        )
    }
    if episode_ids and max_hops >= 1:
        for (entity_id,) in conn.execute(
            f"SELECT DISTINCT m.entity_id FROM mentions m JOIN entities e ON e.gid = m.gid AND e.id = m.entity_id "
            f"WHERE m.gid = ? AND m.episode_id {_IN_JSON} ORDER BY m.entity_id",
            (gid, json.dumps(list(episode_ids))),
        ):
            hops.setdefault(entity_id, 1)
    return hops


def breadth_first(
    conn: sqlite3.Connection,
    gid: int,
    seed_entity_ids: Sequence[str],
    *,
    max_hops: int,
    seed_episode_ids: Sequence[str],
    filters: SearchFilters | None,
    limit: int | None,
) -> BfsResult:
    """``limit`` caps the facts returned (nearest first); entities are the seeds and those reached
    through the facts kept."""
    entity_hops = _seeds(conn, gid, seed_entity_ids, seed_episode_ids, max_hops)
    fact_hops: dict[str, int] = {}
    conditions, params = fact_conditions(filters)
    # The frontier's participation rows drive the join (CROSS JOIN fixes that order: otherwise the
    # planner may walk the whole group in created_at order); rows of one fact come out adjacent.
    sql = (
        "SELECT f.id, p.entity_id FROM fact_entities s CROSS JOIN facts f CROSS JOIN fact_entities p "
        f"WHERE s.gid = ? AND s.entity_id {_IN_JSON} AND f.gid = s.gid AND f.id = s.fact_id "
        f"AND p.gid = f.gid AND p.fact_id = f.id {''.join(' AND ' + c for c in conditions)} "
        "ORDER BY f.created_at, f.id"
    )
    for hop in range(max_hops):
        frontier = [e for e, h in entity_hops.items() if h == hop]
        if not frontier:
            continue  # episode seeds may start the walk at hop 1
        full = _expand(conn.execute(sql, (gid, json.dumps(frontier), *params)), hop + 1, entity_hops, fact_hops, limit)
        if full:
            break
    return BfsResult(entities=entity_hops, facts=fact_hops)


def _expand(
    rows: sqlite3.Cursor, hop: int, entity_hops: dict[str, int], fact_hops: dict[str, int], limit: int | None
) -> bool:
    """Record the facts and participants first reached at ``hop``; True once ``limit`` facts are held."""
    for fact_id, entity_id in rows:
        if fact_id not in fact_hops:
            if limit is not None and len(fact_hops) >= limit:
                return True
            fact_hops[fact_id] = hop
        if fact_hops[fact_id] == hop:
            entity_hops.setdefault(entity_id, hop)
    return limit is not None and len(fact_hops) >= limit
