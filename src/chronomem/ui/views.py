"""What the explorer page shows, read from a :class:`~chronomem.memory.Chronomem`: one function per
view, each bounded however large the group is.

- :func:`graph_snapshot`: a page of the group's entities, most mentioned first, and the facts among
  them that are *true at t as known at t′* (``as_of``/``known_at``; neither = current facts). Pages
  follow one fixed ranking, so the page loads the graph progressively: page *k* brings its entities
  and the facts joining them to the entities of pages ≤ *k*.
- :func:`timeline`: the moments where something changes on each timeline (T: ``valid_at`` and
  ``invalid_at``; T′: ``created_at`` and ``expired_at``), the slider stops.
- :func:`entity_detail` and :func:`episode_provenance`: provenance both ways (an entity's facts and
  the episodes they came from; an episode's text and what it produced).
- :func:`ingestion_status`: the group's queue (pending, processing, failed).
- :func:`explain_search`: ``search`` and ``context`` with a recipe and filters, each hit with its
  score and the retrieval methods that found it.

The models here are the explorer's view of the data, not domain objects.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from chronomem.domain import Community, Entity, Episode, EpisodeStatus, Fact, is_current
from chronomem.filters import SearchFilters, fact_matches
from chronomem.search.config import Method, Reranker, ScopeConfig, SearchConfig, recipe
from chronomem.store.base import WeightedEdge

if TYPE_CHECKING:
    from chronomem.memory import Chronomem

__all__ = [
    "MAX_PAGE",
    "TIMELINE_STOPS",
    "CommunityView",
    "EdgeView",
    "EntityDetail",
    "EpisodeProvenance",
    "EpisodeView",
    "GraphSnapshot",
    "Hit",
    "IngestionStatus",
    "NodeView",
    "SearchExplained",
    "TimeView",
    "Timeline",
    "entity_detail",
    "episode_provenance",
    "explain_search",
    "graph_snapshot",
    "ingestion_status",
    "retry_episode",
    "timeline",
]

MAX_PAGE = 2_000  # entities per snapshot page: what a browser draws and lays out without stalling
TIMELINE_STOPS = 1_000  # slider stops per timeline; a busier timeline is sampled evenly
_DETAIL_EPISODES = 50  # episodes listed on an entity's card
_QUEUE_ROWS = 50  # episodes listed per status in the ingestion panel
_SCOPES = ("facts", "entities", "episodes", "communities")


class _View(BaseModel):
    model_config = ConfigDict(frozen=True)


class TimeView(_View):
    """Where on both timelines the page stands: true at ``as_of`` (T) as known at ``known_at`` (T′).
    Neither set: what is current now. ``include_superseded`` also shows facts no longer current."""

    as_of: datetime | None = None
    known_at: datetime | None = None
    include_superseded: bool = False

    def filters(self) -> SearchFilters:
        """The selection itself (``include_superseded`` only decides whether the rest is shown too)."""
        return SearchFilters(as_of=self.as_of, known_at=self.known_at)

    def shows_entity(self, entity: Entity) -> bool:
        """An entity exists as known at t′ once it was created."""
        return self.known_at is None or entity.created_at <= self.known_at


class NodeView(_View):
    id: str
    name: str
    labels: tuple[str, ...]
    mentions: int  # episodes that mention it
    community: str | None


class EdgeView(_View):
    id: str
    source: str
    target: str
    others: tuple[str, ...]  # further participants of a hyperedge
    relation_type: str
    fact: str
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    episode_ids: tuple[str, ...]
    current: bool  # neither superseded nor ended now
    in_view: bool  # true at t as known at t′ (what the sliders select)

    @classmethod
    def of(cls, fact: Fact, view: TimeView, in_view: bool | None = None) -> EdgeView:
        """``in_view``: whether the fact is in the view, when the caller knows already."""
        return cls(
            id=fact.id, source=fact.source_id, target=fact.target_id, others=fact.other_entity_ids,
            relation_type=fact.relation_type, fact=fact.fact, valid_at=fact.valid_at, invalid_at=fact.invalid_at,
            created_at=fact.created_at, expired_at=fact.expired_at, episode_ids=fact.episode_ids,
            current=is_current(fact), in_view=_in_view(fact, view) if in_view is None else in_view,
        )


class CommunityView(_View):
    id: str
    name: str
    summary: str
    size: int


class GraphSnapshot(_View):
    nodes: list[NodeView]
    edges: list[EdgeView]
    communities: list[CommunityView]
    total_entities: int  # in the group, as known at t′
    offset: int
    next_offset: int | None  # None: this was the last page


class Timeline(_View):
    world: list[datetime]  # T: where facts start or stop being true
    system: list[datetime]  # T′: where facts were learned or superseded
    episodes: list[datetime]  # when the episodes happened (reference_time), for orientation


class EpisodeView(_View):
    id: str
    kind: str
    text: str
    reference_time: datetime
    created_at: datetime
    source_description: str
    status: str
    attempts: int
    last_error: str | None

    @classmethod
    def of(cls, episode: Episode) -> EpisodeView:
        return cls(
            id=episode.id, kind=episode.kind.value, text=episode.text, reference_time=episode.reference_time,
            created_at=episode.created_at, source_description=episode.source_description,
            status=episode.status.value, attempts=episode.attempts, last_error=episode.last_error,
        )


class EntityDetail(_View):
    id: str
    name: str
    labels: tuple[str, ...]
    summary: str
    aliases: tuple[str, ...]
    attributes: dict[str, Any]
    created_at: datetime
    community: CommunityView | None
    facts: list[EdgeView]  # every fact it takes part in, superseded included; in_view marks the selection
    names: dict[str, str]  # entity id → name, for the facts' other participants
    episodes: list[EpisodeView]  # the episodes that mention it or that its facts came from, newest first


class EpisodeProvenance(_View):
    episode: EpisodeView
    entities: list[NodeView]  # the entities it mentions
    facts: list[EdgeView]  # the facts that cite it
    names: dict[str, str]


class IngestionStatus(_View):
    counts: dict[str, int]  # pending, processing, failed: how many are listed (at most _QUEUE_ROWS each)
    more: dict[str, bool]  # whether more than that wait with the status
    episodes: list[EpisodeView]  # those episodes, failed first
    recent: list[EpisodeView]  # the group's latest episodes, whatever their status


class Hit(_View):
    scope: str
    id: str
    text: str
    score: float
    reranker: str
    found_by: tuple[str, ...]  # the retrieval methods whose candidates held it


class SearchExplained(_View):
    recipe: str
    hits: list[Hit]
    context: str  # exactly what Chronomem.context returns: the block an agent puts in its prompt


# -- the graph ---------------------------------------------------------------------------------------


async def graph_snapshot(
    memory: Chronomem, group_id: str, view: TimeView, *, limit: int, offset: int = 0
) -> GraphSnapshot:
    """Entities ranked ``offset`` … ``offset + limit`` (by mentions, then current facts, then id) and
    the facts that join them to each other or to earlier pages: those in view, and with
    ``include_superseded`` the others too, marked.

    Only the page is loaded: the ranking reads ids, mention counts and fact counts, never whole rows,
    so a page costs the same in a group of 100 entities or of 100,000. An entity not yet known at
    ``known_at`` is left out of its page (pages keep their ranks, so the page can tell what it has).
    """
    store = memory.store
    ids, weighted = await store.entity_edges(group_id)
    mentions = await _mention_counts(memory, group_id, ids)
    ranked = _rank(ids, mentions, weighted)
    page_ids = ranked[offset:offset + limit]
    shown = set(ranked[:offset + limit])
    page = [e for e in await store.get_entities(group_id, page_ids) if view.shows_entity(e)]
    fresh = {e.id for e in page}
    selection = view.filters()
    facts = await store.facts_of_entities(group_id, sorted(fresh), include_superseded=True)
    edges = [
        EdgeView.of(f, view, in_view)
        for f in await _as_known(memory, group_id, facts, view)
        if (in_view := fact_matches(f, selection)) or view.include_superseded
        if _joins(f, shown, fresh)
    ]
    communities = await store.list_communities(group_id)
    community_of = {member: c.id for c in communities for member in c.member_ids if member in fresh}
    end = offset + len(page_ids)
    return GraphSnapshot(
        nodes=[_node(e, mentions, community_of) for e in page],
        edges=edges,
        communities=[_community(c) for c in communities if fresh.intersection(c.member_ids)],
        total_entities=len(ranked), offset=offset, next_offset=end if end < len(ranked) else None,
    )


async def _mention_counts(memory: Chronomem, group_id: str, entity_ids: Sequence[str]) -> dict[str, int]:
    return {i: len(eps) for i, eps in (await memory.store.episodes_of_entities(group_id, entity_ids)).items()}


def _rank(ids: Sequence[str], mentions: dict[str, int], edges: Sequence[WeightedEdge]) -> list[str]:
    degree: Counter[str] = Counter()
    for edge in edges:
        degree[edge.a] += edge.weight
        degree[edge.b] += edge.weight
    return sorted(ids, key=lambda i: (-mentions.get(i, 0), -degree[i], i))


async def _as_known(memory: Chronomem, group_id: str, facts: Sequence[Fact], view: TimeView) -> list[Fact]:
    """Each fact as our records held it at the view's ``known_at`` (its version in force then: an
    end date learned later is not in it), without the facts recorded after; without ``known_at``,
    the facts as they stand. The sliders' filter then judges the right version."""
    if view.known_at is None:
        return list(facts)
    return await memory.store.get_facts(group_id, [f.id for f in facts], known_at=view.known_at)


def _in_view(fact: Fact, view: TimeView) -> bool:
    return fact_matches(fact, view.filters())


def _joins(fact: Fact, shown: set[str], fresh: set[str]) -> bool:
    """Both ends are on the pages so far and one of them is on this page: the fact comes with the
    later of its two ends, so no two pages send it. (A hyperedge's further participants are drawn
    when they are on the page; they do not decide the page.)"""
    ends = (fact.source_id, fact.target_id)
    return all(e in shown for e in ends) and any(e in fresh for e in ends)


def _node(entity: Entity, mentions: dict[str, int], community_of: dict[str, str]) -> NodeView:
    return NodeView(id=entity.id, name=entity.name, labels=entity.labels, mentions=mentions.get(entity.id, 0),
                    community=community_of.get(entity.id))


def _community(community: Community) -> CommunityView:
    return CommunityView(id=community.id, name=community.name, summary=community.summary,
                         size=len(community.member_ids))


async def timeline(memory: Chronomem, group_id: str) -> Timeline:
    """The slider stops of both timelines, sorted, at most :data:`TIMELINE_STOPS` each."""
    facts = await memory.list_facts(group_id)
    episodes = await memory.list_episodes(group_id, limit=TIMELINE_STOPS)
    return Timeline(
        world=_stops(t for f in facts for t in (f.valid_at, f.invalid_at)),
        system=_stops(t for f in facts for t in (f.created_at, f.expired_at)),
        episodes=_stops(e.reference_time for e in episodes),
    )


def _stops(moments: Iterable[datetime | None]) -> list[datetime]:
    distinct = sorted({m for m in moments if m is not None})
    if len(distinct) <= TIMELINE_STOPS:
        return distinct
    step = (len(distinct) - 1) / (TIMELINE_STOPS - 1)
    return [distinct[round(i * step)] for i in range(TIMELINE_STOPS)]


# -- provenance --------------------------------------------------------------------------------------


async def entity_detail(memory: Chronomem, group_id: str, entity_id: str, view: TimeView) -> EntityDetail:
    """The entity, every fact it takes part in (``in_view`` marks the sliders' selection) and the
    episodes behind it."""
    store = memory.store
    entity = await memory.get_entity(group_id, entity_id)
    stored = await store.facts_of_entities(group_id, [entity_id], include_superseded=True)
    facts = await _as_known(memory, group_id, stored, view)
    facts.sort(key=lambda f: (f.valid_at or f.created_at, f.created_at, f.id))
    mentioned = (await store.episodes_of_entities(group_id, [entity_id])).get(entity_id, [])
    episode_ids = list(dict.fromkeys([*mentioned, *(e for f in facts for e in f.episode_ids)]))
    episodes = await memory.get_episodes(group_id, episode_ids)
    episodes.sort(key=lambda e: (e.reference_time, e.id), reverse=True)
    community = next((c for c in await store.list_communities(group_id) if entity_id in c.member_ids), None)
    return EntityDetail(
        id=entity.id, name=entity.name, labels=entity.labels, summary=entity.summary, aliases=entity.aliases,
        attributes=entity.attributes, created_at=entity.created_at,
        community=_community(community) if community is not None else None,
        facts=[EdgeView.of(f, view) for f in facts],
        names=await _names(memory, group_id, facts),
        episodes=[EpisodeView.of(e) for e in episodes[:_DETAIL_EPISODES]],
    )


async def episode_provenance(memory: Chronomem, group_id: str, episode_id: str, view: TimeView) -> EpisodeProvenance:
    """The episode and what it produced: the entities it mentions and the facts that cite it."""
    store = memory.store
    episode = await memory.get_episode(group_id, episode_id)
    mentioned = (await store.entities_of_episodes(group_id, [episode_id])).get(episode_id, [])
    entities = await store.get_entities(group_id, mentioned)
    facts = await _as_known(memory, group_id, await store.facts_of_episode(group_id, episode_id), view)
    mentions = await _mention_counts(memory, group_id, mentioned)
    return EpisodeProvenance(
        episode=EpisodeView.of(episode),
        entities=[_node(e, mentions, {}) for e in entities],
        facts=[EdgeView.of(f, view) for f in facts],
        names=await _names(memory, group_id, facts),
    )


async def _names(memory: Chronomem, group_id: str, facts: Sequence[Fact]) -> dict[str, str]:
    ids = list(dict.fromkeys(i for f in facts for i in f.entity_ids))
    return {e.id: e.name for e in await memory.store.get_entities(group_id, ids)}


# -- ingestion ---------------------------------------------------------------------------------------


_QUEUED = (EpisodeStatus.FAILED, EpisodeStatus.PROCESSING, EpisodeStatus.PENDING)


async def ingestion_status(memory: Chronomem, group_id: str) -> IngestionStatus:
    """The group's queue: failed, processing and pending episodes, and its latest episodes."""
    queued: list[Episode] = []
    counts: dict[str, int] = {}
    more: dict[str, bool] = {}
    for status in _QUEUED:
        found = await memory.list_episodes(group_id, limit=_QUEUE_ROWS + 1, statuses=[status])
        counts[status.value], more[status.value] = min(len(found), _QUEUE_ROWS), len(found) > _QUEUE_ROWS
        queued.extend(found[:_QUEUE_ROWS])
    recent = await memory.list_episodes(group_id, limit=20)
    return IngestionStatus(counts=counts, more=more, episodes=[EpisodeView.of(e) for e in queued],
                           recent=[EpisodeView.of(e) for e in recent])


async def retry_episode(memory: Chronomem, group_id: str, episode_id: str) -> EpisodeView:
    """Queue a failed episode again (``NotFoundError`` for an unknown id; any other status is left
    as it is)."""
    episode = await memory.get_episode(group_id, episode_id)
    retried = await memory.retry(group_id, [episode.id])
    return EpisodeView.of(retried[0] if retried else episode)


# -- search ------------------------------------------------------------------------------------------


async def explain_search(
    memory: Chronomem, group_id: str, query: str, *, recipe_name: str, filters: SearchFilters | None,
    center_entity_id: str | None = None,
) -> SearchExplained:
    """Run ``search`` and ``context`` with the recipe and filters, and say which methods found each hit.

    Attribution runs the recipe once more per method, that method alone with the recipe's candidate
    pool as its limit: a hit is credited to each method whose own candidates hold it. Graph expansion
    grows from the other methods' hits, so it cannot run alone: a hit no other method found is
    credited to ``bfs`` when the recipe uses it.
    """
    config = recipe(recipe_name)
    options: dict[str, Any] = {"config": config, "filters": filters, "center_entity_id": center_entity_id}
    results = await memory.search([group_id], query, **options)
    context = await memory.context([group_id], query, **options)
    found = {m: await _found_by(memory, group_id, query, config, m, options) for m in (Method.COSINE, Method.BM25)}
    hits: list[Hit] = []
    for scope in _SCOPES:
        scope_config: ScopeConfig | None = getattr(config, scope)
        if scope_config is None:
            continue
        for obj, score in getattr(results, scope):
            methods = tuple(m.value for m in (Method.COSINE, Method.BM25)
                            if m in scope_config.methods and obj.id in found[m].get(scope, set()))
            if not methods and Method.BFS in scope_config.methods:
                methods = (Method.BFS.value,)
            hits.append(Hit(scope=scope, id=obj.id, text=_hit_text(obj), score=score,
                            reranker=scope_config.reranker.value, found_by=methods))
    return SearchExplained(recipe=recipe_name, hits=hits, context=context)


async def _found_by(
    memory: Chronomem, group_id: str, query: str, config: SearchConfig, method: Method, options: dict[str, Any]
) -> dict[str, set[str]]:
    alone: dict[str, ScopeConfig | None] = {}
    for scope in _SCOPES:
        scope_config: ScopeConfig | None = getattr(config, scope)
        uses = scope_config is not None and method in scope_config.methods
        alone[scope] = scope_config.model_copy(update={
            "methods": (method,), "limit": scope_config.candidates, "reranker": Reranker.RRF, "min_score": None,
        }) if uses and scope_config is not None else None
    if not any(alone.values()):
        return {}
    results = await memory.search([group_id], query, **{**options, "config": config.model_copy(update=alone)})
    return {scope: {obj.id for obj, _ in getattr(results, scope)} for scope in _SCOPES}


def _hit_text(obj: Fact | Entity | Episode | Community) -> str:
    if isinstance(obj, Fact):
        return obj.fact
    if isinstance(obj, Episode):
        return obj.text
    return f"{obj.name}: {obj.summary}" if obj.summary else obj.name
