"""Zep's ``graph.search`` onto chronomem's search.

- ``scope``: ``edges`` (facts, the default), ``nodes`` (entities) or ``episodes``.
- ``reranker``: the same five rerankers chronomem has; ``node_distance`` needs ``center_node_uuid``.
- ``bfs_origin_node_uuids``: the seeds of breadth-first search, which then joins cosine and BM25.
- ``search_filters``: ``node_labels`` and ``edge_types`` go to the store's filters. Zep's date
  filters (``[[{op, date}, …], …]``: OR of ANDs) and its exclusion and uuid lists are checked on
  the candidates (:func:`edge_passes`, :func:`node_passes`), which are drawn three times as many
  as asked for so the page stays full. With a date filter, superseded facts are candidates too: a
  filter on ``invalid_at`` or ``expired_at`` asks about them. ``property_filters`` and
  ``episode_metadata_filters`` are refused with 501.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from chronomem.app.tenancy import GraphRef, ProjectSpace
from chronomem.domain import Entity, Episode, Fact
from chronomem.errors import InvalidInputError
from chronomem.filters import SearchFilters
from chronomem.memory import Chronomem
from chronomem.search.config import Method, Reranker, ScopeConfig, SearchConfig
from chronomem.service.compat.errors import NotImplementedCallError, refuse_unsupported
from chronomem.service.compat.models import DateFilterIn, SearchFiltersIn, SearchRequest

__all__ = [
    "DEFAULT_LIMIT",
    "Hits",
    "Plan",
    "date_filters_pass",
    "edge_passes",
    "node_passes",
    "plan_search",
    "run_search",
]

DEFAULT_LIMIT = 10
_OVERFETCH = 3
_SCOPES = {"edges": "facts", "nodes": "entities", "episodes": "episodes"}
_DATE_FIELDS = ("valid_at", "invalid_at", "created_at", "expired_at")


@dataclass(frozen=True, slots=True)
class Plan:
    """What to ask chronomem's searcher, and what to check on what it returns."""

    scope: str  # facts | entities | episodes
    limit: int
    config: SearchConfig
    filters: SearchFilters | None
    center_entity_id: str | None
    seed_entity_ids: tuple[str, ...]
    post: SearchFiltersIn | None


def plan_search(request: SearchRequest) -> Plan:
    scope = request.scope or "edges"
    if scope not in _SCOPES:
        raise NotImplementedCallError(f"graph.search: chronomem does not implement scope {scope!r}")
    wanted = request.search_filters
    if wanted is not None:
        refuse_unsupported("graph.search", property_filters=wanted.property_filters,
                           episode_metadata_filters=wanted.episode_metadata_filters)
    refuse_unsupported("graph.search", max_characters=request.max_characters)
    reranker = Reranker(request.reranker or "rrf")
    if reranker is Reranker.NODE_DISTANCE and request.center_node_uuid is None:
        raise InvalidInputError("the node_distance reranker needs center_node_uuid")
    limit = request.limit or DEFAULT_LIMIT
    post = wanted if wanted is not None and _needs_post_filter(wanted) else None
    seeds = tuple(request.bfs_origin_node_uuids or ())
    methods: tuple[Method, ...] = (Method.COSINE, Method.BM25)
    if seeds or reranker is Reranker.NODE_DISTANCE:
        methods = (*methods, Method.BFS)
    pool = min(limit * _OVERFETCH, 100) if post is not None else limit
    scope_config = ScopeConfig(methods=methods, reranker=reranker, limit=pool, candidates=max(50, pool),
                               mmr_lambda=request.mmr_lambda if request.mmr_lambda is not None else 0.5)
    name = _SCOPES[scope]
    config = SearchConfig(facts=scope_config if name == "facts" else None,
                          entities=scope_config if name == "entities" else None,
                          episodes=scope_config if name == "episodes" else None, communities=None)
    return Plan(name, limit, config, _store_filters(wanted), request.center_node_uuid, seeds, post)


def _needs_post_filter(wanted: SearchFiltersIn) -> bool:
    return any(getattr(wanted, name) for name in (
        *_DATE_FIELDS, "exclude_node_labels", "exclude_edge_types", "edge_uuids", "episode_uuids",
        "source_node_uuids", "target_node_uuids", "connected_node_uuids",
    ))


def _store_filters(wanted: SearchFiltersIn | None) -> SearchFilters | None:
    if wanted is None:
        return None
    dated = any(getattr(wanted, name) for name in _DATE_FIELDS)
    if not (wanted.node_labels or wanted.edge_types or dated):
        return None
    return SearchFilters(
        labels=tuple(wanted.node_labels) if wanted.node_labels else None,
        relation_types=tuple(wanted.edge_types) if wanted.edge_types else None,
        include_superseded=dated,
    )


def _compare(value: datetime | None, check: DateFilterIn) -> bool:
    op = check.comparison_operator
    if op in ("IS NULL", "is_null"):
        return value is None
    if op == "IS NOT NULL":
        return value is not None
    if check.date is None:
        raise InvalidInputError(f"the date filter {op!r} needs a date")
    if value is None:
        return False
    match op:
        case "=":
            return value == check.date
        case "<>":
            return value != check.date
        case ">":
            return value > check.date
        case "<":
            return value < check.date
        case ">=":
            return value >= check.date
        case "<=":
            return value <= check.date
    raise NotImplementedCallError(f"graph.search: chronomem does not implement the date operator {op!r}")


def date_filters_pass(value: datetime | None, groups: Sequence[Sequence[DateFilterIn]] | None) -> bool:
    """Zep's date filter: any inner group (OR) whose every comparison (AND) holds."""
    if not groups:
        return True
    return any(all(_compare(value, check) for check in group) for group in groups)


def edge_passes(fact: Fact, wanted: SearchFiltersIn, labels: Mapping[str, Sequence[str]]) -> bool:
    """Whether a fact passes the filters chronomem's store does not apply; ``labels`` are its
    endpoints' labels (entity id → labels)."""
    if not all(date_filters_pass(getattr(fact, name), getattr(wanted, name)) for name in _DATE_FIELDS):
        return False
    if wanted.exclude_edge_types and fact.relation_type in wanted.exclude_edge_types:
        return False
    if wanted.edge_uuids and fact.id not in wanted.edge_uuids:
        return False
    if wanted.episode_uuids and not set(fact.episode_ids) & set(wanted.episode_uuids):
        return False
    if wanted.source_node_uuids and fact.source_id not in wanted.source_node_uuids:
        return False
    if wanted.target_node_uuids and fact.target_id not in wanted.target_node_uuids:
        return False
    connected = wanted.connected_node_uuids
    if connected and fact.source_id not in connected and fact.target_id not in connected:
        return False
    excluded = set(wanted.exclude_node_labels or ())
    return not any(excluded & set(labels.get(e, ())) for e in (fact.source_id, fact.target_id))


def node_passes(entity: Entity, wanted: SearchFiltersIn, mentioned_by: set[str] | None) -> bool:
    """Whether an entity passes the filters the store does not apply; ``mentioned_by`` are the
    episodes that mention it (needed only with ``episode_uuids``)."""
    if not date_filters_pass(entity.created_at, wanted.created_at):
        return False
    if wanted.exclude_node_labels and set(entity.labels) & set(wanted.exclude_node_labels):
        return False
    return not (wanted.episode_uuids and not (mentioned_by or set()) & set(wanted.episode_uuids))


@dataclass(slots=True)
class Hits:
    """What a search found in its one scope (``facts``, ``entities`` or ``episodes``), filtered and
    cut to the limit, with the names of the facts' entities."""

    scope: str
    facts: list[tuple[Fact, float]] = field(default_factory=list)
    entities: list[tuple[Entity, float]] = field(default_factory=list)
    episodes: list[tuple[Episode, float]] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)


async def run_search(space: ProjectSpace, memory: Chronomem, ref: GraphRef, group_id: str,
                     request: SearchRequest) -> Hits:
    """Zep's search of one graph (``group_id`` is ``ref``'s store group), both API versions."""
    plan = plan_search(request)
    results = await space.search(ref, request.query, config=plan.config, filters=plan.filters,
                                 center_entity_id=plan.center_entity_id, seed_entity_ids=plan.seed_entity_ids)
    if plan.scope == "facts":
        facts = await _passing_facts(memory, group_id, plan, results.facts)
        ids = sorted({i for f, _ in facts for i in f.entity_ids})
        names = {e.id: e.name for e in await memory.store.get_entities(group_id, ids)}
        return Hits("facts", facts=facts, names=names)
    if plan.scope == "entities":
        return Hits("entities", entities=await _passing_entities(memory, group_id, plan, results.entities))
    return Hits("episodes", episodes=results.episodes[: plan.limit])


async def _passing_facts(memory: Chronomem, group_id: str, plan: Plan,
                         found: list[tuple[Fact, float]]) -> list[tuple[Fact, float]]:
    if plan.post is None:
        return found[: plan.limit]
    labels: dict[str, tuple[str, ...]] = {}
    if plan.post.exclude_node_labels:
        ids = sorted({i for f, _ in found for i in (f.source_id, f.target_id)})
        labels = {e.id: e.labels for e in await memory.store.get_entities(group_id, ids)}
    return [(f, s) for f, s in found if edge_passes(f, plan.post, labels)][: plan.limit]


async def _passing_entities(memory: Chronomem, group_id: str, plan: Plan,
                            found: list[tuple[Entity, float]]) -> list[tuple[Entity, float]]:
    if plan.post is None:
        return found[: plan.limit]
    mentions: dict[str, set[str]] = {}
    if plan.post.episode_uuids:
        by_episode = await memory.store.entities_of_episodes(group_id, plan.post.episode_uuids)
        for episode_id, entity_ids in by_episode.items():
            for entity_id in entity_ids:
                mentions.setdefault(entity_id, set()).add(episode_id)
    return [(e, s) for e, s in found if node_passes(e, plan.post, mentions.get(e.id))][: plan.limit]
