"""φ: the three search methods (paper §3.1), each returning scored candidate ids for one scope.

Cosine and BM25 delegate to the store's indexes. Breadth-first expansion walks the graph from seed
entities (and seed episodes) and scores what it reaches by closeness: ``1 / (1 + hops)``. For the
episode and community scopes, BFS returns the episodes mentioning, and the communities holding, the
entities it reached.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from chronomem.filters import SearchFilters
from chronomem.store.base import BfsResult, GraphReader, Scope, ScoredId, SearchIndex

__all__ = [
    "SearchStore",
    "bfs_search",
    "bm25_search",
    "cosine_search",
    "entities_of_hits",
    "entities_of_recent_episodes",
    "hits_from_bfs",
]


class SearchStore(GraphReader, SearchIndex, Protocol):
    """What retrieval uses of the store: its search indexes, and graph reads to seed, expand and
    hydrate what they find."""


async def cosine_search(
    store: SearchIndex,
    group_id: str,
    scope: Scope,
    vector: np.ndarray,
    *,
    limit: int,
    filters: SearchFilters | None,
    min_score: float | None = None,
) -> list[ScoredId]:
    """Nearest neighbours of the query vector; score = cosine similarity."""
    return await store.vector_search(group_id, scope, vector, limit=limit, filters=filters, min_score=min_score)


async def bm25_search(
    store: SearchIndex, group_id: str, scope: Scope, query: str, *, limit: int, filters: SearchFilters | None
) -> list[ScoredId]:
    """Full-text hits; score = the engine's relevance (BM25 on SQLite). An empty query finds nothing."""
    if not query.strip():
        return []
    return await store.fulltext_search(group_id, scope, query, limit=limit, filters=filters)


def _closeness(hops: int) -> float:
    return 1.0 / (1.0 + hops)


def _by_hops(hops: Mapping[str, int], limit: int, max_hops: int | None = None) -> list[ScoredId]:
    ordered = sorted(
        ((i, h) for i, h in hops.items() if max_hops is None or h <= max_hops), key=lambda item: (item[1], item[0])
    )
    return [ScoredId(i, _closeness(h)) for i, h in ordered[:limit]]


async def hits_from_bfs(
    store: GraphReader, group_id: str, scope: Scope, reached: BfsResult, *, limit: int, max_hops: int | None = None
) -> list[ScoredId]:
    """Turn one expansion into candidates of ``scope`` (no farther than ``max_hops``)."""
    if scope is Scope.FACTS:
        return _by_hops(reached.facts, limit, max_hops)
    if scope is Scope.ENTITIES:
        return _by_hops(reached.entities, limit, max_hops)
    entity_hops = {e: h for e, h in reached.entities.items() if max_hops is None or h < max_hops}
    if scope is Scope.EPISODES:
        mentions = await store.episodes_of_entities(group_id, list(entity_hops))
        hops: dict[str, int] = {}
        for entity_id, episode_ids in mentions.items():
            for episode_id in episode_ids:
                # an episode is one hop beyond the nearest entity it mentions
                hops[episode_id] = min(hops.get(episode_id, 1 << 30), entity_hops[entity_id] + 1)
        return _by_hops(hops, limit)
    communities = await store.list_communities(group_id)
    community_hops = {
        c.id: min(entity_hops[m] for m in c.member_ids if m in entity_hops) + 1
        for c in communities
        if any(m in entity_hops for m in c.member_ids)
    }
    return _by_hops(community_hops, limit)


async def bfs_search(
    store: SearchStore,
    group_id: str,
    scope: Scope,
    *,
    seed_entity_ids: Sequence[str],
    seed_episode_ids: Sequence[str] = (),
    max_hops: int,
    limit: int,
    filters: SearchFilters | None,
) -> list[ScoredId]:
    """Breadth-first expansion from the seeds; score = 1 / (1 + hops)."""
    if not seed_entity_ids and not seed_episode_ids:
        return []
    reached = await store.bfs(
        group_id, list(seed_entity_ids), max_hops=max_hops, seed_episode_ids=list(seed_episode_ids),
        filters=filters, limit=limit,  # the store stops walking once it holds this many facts, nearest first
    )
    return await hits_from_bfs(store, group_id, scope, reached, limit=limit)


async def entities_of_hits(
    store: GraphReader,
    group_id: str,
    hits: Mapping[Scope, Sequence[str]],
    *,
    limit: int = 20,
) -> list[str]:
    """BFS seeds from other methods' hits: the entities themselves, the endpoints of the facts, the
    entities mentioned by the episodes, best ranked first.

    Each source is read only while the seeds are short of ``limit``: the entity hits of a context
    search (cosine and BM25, 50 each) usually fill the 20 seeds alone, and the endpoints of ~100 fact
    hits, read to be cut away, were one more round trip before BFS could start."""
    seeds: dict[str, None] = dict.fromkeys(hits.get(Scope.ENTITIES, ()))
    fact_ids = list(dict.fromkeys(hits.get(Scope.FACTS, ())))
    if fact_ids and len(seeds) < limit:
        endpoints = await store.entities_of_facts(group_id, fact_ids)
        for fact_id in fact_ids:
            seeds.update(dict.fromkeys(endpoints.get(fact_id, ())))
    episode_ids = list(hits.get(Scope.EPISODES, ()))
    if episode_ids and len(seeds) < limit:
        mentioned = await store.entities_of_episodes(group_id, episode_ids)
        for episode_id in episode_ids:
            seeds.update(dict.fromkeys(mentioned.get(episode_id, ())))
    return list(seeds)[:limit]


async def entities_of_recent_episodes(store: GraphReader, group_id: str, count: int) -> list[str]:
    """BFS seeds when nothing else gives one: entities mentioned by the group's latest episodes."""
    if count <= 0:
        return []
    recent = await store.list_episodes(group_id, limit=count, newest_first=True)
    mentioned = await store.entities_of_episodes(group_id, [e.id for e in recent])
    seeds: dict[str, None] = {}
    for episode in recent:
        seeds.update(dict.fromkeys(mentioned.get(episode.id, ())))
    return list(seeds)
