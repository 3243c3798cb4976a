"""Read queries of the FalkorDB backend: listings, lookups, full-text, vector search and BFS.

Functions here build (query text, parameters) pairs or run small loops of queries through a
``read(group_id, text, params)`` callable; the store class stays a thin map of the port.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from chronomem.domain import EpisodeStatus
from chronomem.errors import StoreError
from chronomem.filters import SearchFilters
from chronomem.store.base import BfsResult, Scope, ScoredId, WeightedEdge
from chronomem.store.falkordb.cypher import LABELS, FactFilter, columns, entity_label_condition, vector_label
from chronomem.store.falkordb.fulltext import fulltext_words
from chronomem.store.falkordb.records import to_micros
from chronomem.timeutil import utc_now

__all__ = [
    "ALL_WORDS_BONUS",
    "CURRENT_PAIRS",
    "ENTITIES_BY_NAMES",
    "RESET_PROCESSING",
    "STATS",
    "bfs",
    "facts_between",
    "facts_of_entities",
    "fulltext_search",
    "list_episodes",
    "list_facts",
    "now",
    "paged",
    "vector_search",
    "weighted_edges",
]

Read = Callable[[str, str, dict[str, Any]], Awaitable[list[list[Any]]]]

_CURRENT = "f.expired_at IS NULL AND (f.invalid_at IS NULL OR f.invalid_at > $now)"
STATS = (
    "OPTIONAL MATCH (e:Episode) WITH count(e) AS episodes "
    "OPTIONAL MATCH (n:Entity) WITH episodes, count(n) AS entities "
    "OPTIONAL MATCH (f:Fact) WITH episodes, entities, count(f) AS facts, "
    f"sum(CASE WHEN f IS NOT NULL AND {_CURRENT} THEN 1 ELSE 0 END) AS current "
    "OPTIONAL MATCH (c:Community) RETURN episodes, entities, facts, current, count(c)"
)
RESET_PROCESSING = "MATCH (e:Episode {status: 'processing'}) SET e.status = 'pending' RETURN e.id"
CURRENT_PAIRS = f"MATCH (f:Fact) WHERE {_CURRENT} RETURN f.source_id, f.target_id, count(*)"
ENTITIES_BY_NAMES = (
    "UNWIND $names AS name MATCH (n:Entity) WHERE name IN n.norm_names WITH DISTINCT n "
    f"RETURN {columns('Entity', 'n')} ORDER BY n.created_at, n.id"
)
_FACT_ORDER = "ORDER BY f.created_at, f.id"


def now() -> datetime:
    return utc_now()


def paged(text: str, limit: int | None, offset: int) -> tuple[str, dict[str, Any]]:
    """Append SKIP/LIMIT (as parameters) to a query that ends with ORDER BY."""
    params: dict[str, Any] = {}
    if offset:
        text += " SKIP $offset"
        params["offset"] = int(offset)
    if limit is not None:
        text += " LIMIT $limit"
        params["limit"] = max(int(limit), 0)
    return text, params


def list_episodes(
    *, limit: int | None, before: datetime | None, statuses: Sequence[EpisodeStatus] | None, newest_first: bool
) -> tuple[str, dict[str, Any]]:
    conditions: list[str] = ["true"]
    params: dict[str, Any] = {}
    if before is not None:
        conditions.append("e.reference_time < $before")
        params["before"] = to_micros(before)
    if statuses is not None:
        conditions.append("e.status IN $statuses")
        params["statuses"] = [EpisodeStatus(s).value for s in statuses]
    way = "DESC" if newest_first else "ASC"
    text = (f"MATCH (e:Episode) WHERE {' AND '.join(conditions)} RETURN {columns('Episode', 'e')} "
            f"ORDER BY e.reference_time {way}, e.created_at {way}, e.id {way}")
    text, page = paged(text, limit, 0)
    return text, {**params, **page}


def list_facts(filters: SearchFilters | None, limit: int | None, offset: int) -> tuple[str, dict[str, Any]]:
    flt = FactFilter(filters, default_current=False)
    text = (f"MATCH (f:Fact) WHERE {flt.condition()}{flt.label_clause('f')} "
            f"RETURN {columns('Fact', 'f')} {_FACT_ORDER}")
    text, page = paged(text, limit, offset)
    return text, {**flt.params, **page}


def facts_between(a: str, b: str, include_superseded: bool) -> tuple[str, dict[str, Any]]:
    flt = FactFilter(None, default_current=not include_superseded)
    text = ("MATCH (f:Fact) WHERE $a IN f.entity_ids AND ((f.source_id = $a AND f.target_id = $b) OR "
            f"(f.source_id = $b AND f.target_id = $a)) AND {flt.condition()} "
            f"RETURN {columns('Fact', 'f')} {_FACT_ORDER}")
    return text, {**flt.params, "a": a, "b": b}


def facts_of_entities(entity_ids: list[str], include_superseded: bool) -> tuple[str, dict[str, Any]]:
    flt = FactFilter(None, default_current=not include_superseded)
    text = (f"UNWIND $ids AS x MATCH (f:Fact) WHERE x IN f.entity_ids AND {flt.condition()} WITH DISTINCT f "
            f"RETURN {columns('Fact', 'f')} {_FACT_ORDER}")
    return text, {**flt.params, "ids": entity_ids}


def weighted_edges(rows: list[list[Any]], entity_ids: set[str]) -> list[WeightedEdge]:
    """Fold directed (source, target, count) rows into undirected weights between known entities."""
    weights: Counter[tuple[str, str]] = Counter()
    for source, target, count in rows:
        if source != target and source in entity_ids and target in entity_ids:
            weights[(min(source, target), max(source, target))] += count
    return [WeightedEdge(a, b, w) for (a, b), w in sorted(weights.items())]


def _scope_filter(scope: Scope, filters: SearchFilters | None, alias: str, carry: str) -> tuple[str, str, dict]:
    """(WHERE condition, trailing clauses, parameters) that filter hits of one scope."""
    if scope is Scope.FACTS:
        flt = FactFilter(filters, alias=alias)
        return flt.condition(), flt.label_clause(carry), flt.params
    params: dict[str, Any] = {}
    if scope is Scope.ENTITIES:
        return entity_label_condition(filters, alias, params), "", params
    return "true", "", params


ALL_WORDS_BONUS = 1000.0  # ranks documents holding every query word above the rest (see fulltext_search)


async def fulltext_search(
    read: Read, group_id: str, scope: Scope, query: str, limit: int, filters: SearchFilters | None
) -> list[ScoredId]:
    """Documents holding every word of the query first, then documents holding any of them.

    FalkorDB hands back every match unsorted, and sorting tens of thousands of matches of a common
    word costs tens of milliseconds; documents holding *all* the words are few, so that tier is
    cheap, and the any-word query runs only when it does not fill ``limit``. Within a tier, the
    engine's TF-IDF orders; the all-words tier's scores carry ``ALL_WORDS_BONUS`` so scores fall
    monotonically down the list.
    """
    words = fulltext_words(query)
    if not words or limit <= 0:
        return []
    condition, clauses, params = _scope_filter(scope, filters, "n", "n, score")
    text = (f"CALL db.idx.fulltext.queryNodes('{LABELS[scope]}', $q) YIELD node AS n, score "
            f"WITH n, score WHERE {condition} AND NOT n.id IN $seen{clauses} "
            "RETURN n.id, score ORDER BY score DESC, n.id LIMIT $limit")
    hits: list[ScoredId] = []
    if len(words) > 1:
        rows = await read(group_id, text, {**params, "q": " ".join(words), "seen": [], "limit": limit})
        hits = [ScoredId(row[0], float(row[1]) + ALL_WORDS_BONUS) for row in rows]
    if len(hits) < limit:
        seen = [h.id for h in hits]
        rows = await read(group_id, text, {**params, "q": "|".join(words), "seen": seen, "limit": limit - len(hits)})
        hits += [ScoredId(row[0], float(row[1])) for row in rows]
    return hits


async def vector_search(
    read: Read,
    group_id: str,
    scope: Scope,
    vector: np.ndarray,
    limit: int,
    filters: SearchFilters | None,
    min_score: float | None,
) -> list[ScoredId]:
    """Approximate nearest neighbours, filtered after the index: over-fetch, and widen until enough
    hits pass the filters or the index has no more candidates."""
    if limit <= 0:
        return []
    label = LABELS[scope]
    condition, clauses, params = _scope_filter(scope, filters, "n", "n, sim")
    if min_score is not None:
        condition += " AND sim >= $min_score"
        params["min_score"] = float(min_score)
    text = (f"CALL db.idx.vector.queryNodes('{vector_label(label)}', 'emb', $k, vecf32($v)) YIELD node AS h, score "
            f"MATCH (n:{label} {{id: h.id}}) WITH n, 1.0 - score AS sim WHERE {condition}{clauses} "
            "RETURN n.id, sim ORDER BY sim DESC, n.id LIMIT $limit")
    filtered = condition != "true" or bool(clauses)
    k = max(limit * 4, 40) if filtered else limit + 8  # deleted holders can take a few of the k slots
    base = {**params, "v": np.asarray(vector, dtype=np.float32), "limit": limit}
    total: int | None = None
    while True:
        rows = await _vector_rows(read, group_id, text, {**base, "k": k})
        if len(rows) >= limit:
            break
        if total is None:
            counted = await read(group_id, f"MATCH (h:{vector_label(label)}) RETURN count(h)", {})
            total = counted[0][0] if counted else 0
        if k >= total:
            break  # every stored vector was a candidate
        k *= 8
    return [ScoredId(row[0], min(1.0, max(-1.0, float(row[1])))) for row in rows]


async def _vector_rows(read: Read, group_id: str, text: str, params: dict[str, Any]) -> list[list[Any]]:
    try:
        return await read(group_id, text, params)
    except StoreError as exc:
        if "db.idx.vector.queryNodes" in str(exc):  # no vector of this scope was ever written
            return []
        raise


async def bfs(
    read: Read,
    group_id: str,
    seeds: list[str],
    episode_seeds: list[str],
    max_hops: int,
    filters: SearchFilters | None,
    limit: int | None,
) -> BfsResult:
    """Level by level: one query per hop finds the matching facts touching the frontier."""
    entities: dict[str, int] = dict.fromkeys(seeds, 0)
    for entity_id in episode_seeds:
        entities.setdefault(entity_id, 1)
    facts: dict[str, int] = {}
    flt = FactFilter(filters)
    text = (f"UNWIND $frontier AS x MATCH (f:Fact) WHERE x IN f.entity_ids AND {flt.condition()}"
            f"{flt.label_clause('f')} RETURN DISTINCT f.id, f.entity_ids")
    for hop in range(max_hops):
        frontier = [e for e, h in entities.items() if h == hop]
        if not frontier:
            continue
        for fact_id, entity_ids in await read(group_id, text, {**flt.params, "frontier": frontier}):
            if fact_id not in facts:
                facts[fact_id] = hop + 1
                for entity_id in entity_ids:
                    entities.setdefault(entity_id, hop + 1)
    if limit is not None:
        entities = dict(sorted(entities.items(), key=lambda kv: (kv[1], kv[0]))[:limit])
        facts = dict(sorted(facts.items(), key=lambda kv: (kv[1], kv[0]))[:limit])
    return BfsResult(entities=entities, facts=facts)
