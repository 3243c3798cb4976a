"""From a search request on the wire to the library's ``SearchConfig``, and results back.

Scopes ``edges`` and ``nodes`` are Zep's names for ``facts`` and ``entities``. Each asked-for scope
is searched by cosine similarity and BM25 (plus breadth-first expansion for the ``node_distance``
reranker, which ranks by hops from ``center_node_uuid``), fused and reordered by the reranker.
"""

from __future__ import annotations

from typing import Any

from chronomem.search.config import Method, Reranker, ScopeConfig, SearchConfig
from chronomem.service.schemas import (
    CommunityOut,
    EntityOut,
    EpisodeOut,
    FactOut,
    SearchRequest,
    SearchResponse,
)

__all__ = ["render_results", "search_config", "search_options"]

_ALIASES = {"edges": "facts", "nodes": "entities"}


def search_config(request: SearchRequest) -> SearchConfig:
    reranker = Reranker(request.reranker)
    methods: tuple[Method, ...] = (Method.COSINE, Method.BM25)
    if reranker is Reranker.NODE_DISTANCE:
        methods = (*methods, Method.BFS)
    scope = ScopeConfig(
        methods=methods, reranker=reranker, limit=request.limit,
        candidates=max(50, request.limit), mmr_lambda=request.mmr_lambda,
    )
    wanted = {_ALIASES.get(s, s) for s in request.scopes}

    def pick(name: str) -> ScopeConfig | None:
        return scope if name in wanted else None

    return SearchConfig(facts=pick("facts"), entities=pick("entities"), episodes=pick("episodes"),
                        communities=pick("communities"))


def search_options(request: SearchRequest) -> dict[str, Any]:
    """Keyword arguments for ``Chronomem.search``."""
    return {
        "config": search_config(request),
        "filters": request.filters.to_domain() if request.filters is not None else None,
        "center_entity_id": request.center_node_uuid,
    }


def render_results(results: Any) -> SearchResponse:
    """A ``SearchResults`` (lists of (object, score) per scope) as the wire response."""
    return SearchResponse(
        facts=[FactOut.from_domain(f, s) for f, s in results.facts],
        entities=[EntityOut.from_domain(e, s) for e, s in results.entities],
        episodes=[EpisodeOut.from_domain(e) for e, _ in results.episodes],
        communities=[CommunityOut.from_domain(c, s) for c, s in results.communities],
    )
