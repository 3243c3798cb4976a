"""The retrieval entry points: ``Searcher.search`` and ``Searcher.context`` — f(α) = χ(ρ(φ(α))).

For each group (the store is per group; several groups fan out and merge), one search:

1. parses time expressions in the query against ``now`` (the question's date, or the clock);
2. runs the configured φ methods of every scope concurrently — cosine and BM25 first, and BFS from
   the given seeds, or else from the entities of their hits, or else from the entities of the
   group's latest episodes;
3. fuses each scope's rankings with RRF (plus, in ``boost`` time mode, a ranking of the candidates
   dated inside the query's window), applies the scope's ρ reranker, the minimum-score cut and the
   limit;
4. loads the objects. ``context`` then renders them with χ.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from chronomem.crossencoder.base import CrossEncoder
from chronomem.domain import Community, Entity, Episode, Fact
from chronomem.embed.base import Embedder
from chronomem.errors import InvalidInputError
from chronomem.filters import SearchFilters
from chronomem.search import asking, hops, lists, methods, signals
from chronomem.search.config import RECIPES, Method, Reranker, ScopeConfig, SearchConfig, TimeMode
from chronomem.search.context import DEFAULT_TOKEN_BUDGET, build_context, evidence_quotes
from chronomem.search.decompose import event_queries, focus_query
from chronomem.search.perspective import perspective_query
from chronomem.search.rerank import (
    Ranked,
    cut_below,
    entity_distances_to_fact_distances,
    episode_mentions,
    lead_with_each,
    mmr,
    node_distance,
    order_by_scores,
    rrf,
)
from chronomem.store.base import Scope, ScoredId
from chronomem.telemetry import metrics, span
from chronomem.text import wordforms
from chronomem.text.timeparse import ParsedTime, TimeWindow, parse_time
from chronomem.timeutil import ensure_utc

__all__ = ["SearchResults", "Searcher"]

_SCOPES = {s.value: s for s in Scope}
_Hits = dict[Scope, dict[Method, list[ScoredId]]]


@dataclass(frozen=True, slots=True)
class SearchResults:
    """Ranked results per scope, best first, each with the score of the reranker that ordered it."""

    facts: list[tuple[Fact, float]] = field(default_factory=list)
    entities: list[tuple[Entity, float]] = field(default_factory=list)
    episodes: list[tuple[Episode, float]] = field(default_factory=list)
    communities: list[tuple[Community, float]] = field(default_factory=list)
    time: ParsedTime = field(default_factory=ParsedTime)  # what the query said about time


@dataclass(frozen=True, slots=True)
class _Request:
    query: str
    bm25_query: str
    vector: asyncio.Future[np.ndarray | None]  # embedding runs while BM25 does: awaited by cosine and MMR
    config: SearchConfig
    filters: SearchFilters
    time: ParsedTime
    center_entity_id: str | None
    seed_entity_ids: tuple[str, ...]
    seed_episode_ids: tuple[str, ...]
    events: tuple[str, ...] = ()  # the events the query names (or its focus), each searched on its own


def _groups(group_ids: str | Sequence[str]) -> list[str]:
    groups = [group_ids] if isinstance(group_ids, str) else list(dict.fromkeys(group_ids))
    if not groups or any(not g for g in groups):
        raise InvalidInputError("search needs at least one non-empty group id")
    return groups


def _with_now(filters: SearchFilters | None, now: datetime | None, include_superseded: bool) -> SearchFilters:
    update: dict[str, Any] = {}
    if now is not None:
        update["now"] = ensure_utc(now)
    if include_superseded:
        update["include_superseded"] = True
    return (filters or SearchFilters()).model_copy(update=update)


def _fuse(
    scope: Scope, rankings: list[list[str]], weights: list[float], objects: dict[str, Any],
    windows: Sequence[TimeWindow], request: _Request, rrf_k: float,
) -> Ranked:
    """RRF of the methods' rankings, then once more with the signals that apply (each at its weight).
    In ``filter`` time mode, candidates dated outside the query's windows are dropped instead."""
    config = request.config
    fused = rrf(rankings, k=rrf_k, weights=weights)
    extra: list[tuple[list[str], float]] = []
    near: list[str] | None = None  # the candidates in or near the query's windows, those inside first
    if windows and config.time_mode is not TimeMode.OFF and scope in (Scope.FACTS, Scope.EPISODES):
        inside = signals.dated_inside([i for i, _ in fused], objects, windows)
        if config.time_mode is TimeMode.FILTER:
            keep = set(inside)
            rankings = [[i for i in ranking if i in keep] for ranking in rankings]
            fused = [(i, s) for i, s in fused if i in keep]
        else:
            near = signals.dated_near([i for i, _ in fused], objects, windows, margin=config.time_margin)
            extra.append((near, config.time_boost))
    if scope is Scope.EPISODES and fused:
        coverage, covered = config.coverage_boost, fused
        named = signals.speaker_named([i for i, _ in fused], objects, request.query)
        if config.list_coverage_boost > 0 and lists.is_list_question(request.query):
            # the answer is spread over sessions: each session's best as well as the best session's
            # turns (measured: turning the conversation signal down for them lost recall)
            coverage = max(coverage, config.list_coverage_boost)
            if config.list_coverage_own_turns and named:
                # "What activities does Melanie partake in?": each session's best turn of hers
                spoken = set(named)
                covered = [(i, score) for i, score in fused if i in spoken]
        extra.append((named, config.speaker_boost))
        extra.append((signals.by_conversation(fused, objects), config.conversation_boost))
        extra.append((signals.replies_to_top(fused, objects), config.reply_boost))
        if config.report_boost > 0:
            # a report of the event in the time asked about first: "I got back from a trip" told
            # a year before "the trips I took in the past three months" is another trip
            order = near if near is not None else [i for i, _ in fused]
            extra.append((signals.reporting(order, objects, request.query), config.report_boost))
        if coverage > 0:
            extra.append((signals.across_conversations(covered, objects), coverage))
    extra = [(ranking, weight) for ranking, weight in extra if ranking and weight > 0]
    if extra:
        fused = rrf(
            [*rankings, *(ranking for ranking, _ in extra)], k=rrf_k, weights=[*weights, *(w for _, w in extra)]
        )
    if scope is Scope.EPISODES and config.asking_last:
        fused = asking.asking_last(fused, objects)  # a question tells nothing
    if scope is Scope.EPISODES and config.unnamed_speaker_offset:
        fused = signals.unnamed_speakers_down(fused, objects, request.query, config.unnamed_speaker_offset)
    return fused


def _fuse_queries(
    per_query: Sequence[SearchResults], weights: Sequence[float], request: _Request, events: int
) -> SearchResults:
    """Each scope's rankings for the whole query and for each sub-query, fused by RRF at
    ``weights`` (the whole query at ``whole_query_weight``, each event at 1, the speaker's voice
    at ``perspective_weight``): every event's best hits reach the top. With ``event_leaders`` the
    own best of each of the ``events`` (those after the whole query) follows the fused first,
    whatever RRF made of it."""
    config = request.config
    fused: dict[str, list[tuple[Any, float]]] = {}
    for name, sc in config.scopes().items():
        rankings = [getattr(results, name) for results in per_query]
        objects = {obj.id: obj for ranking in rankings for obj, _ in ranking}
        ids = [[obj.id for obj, _ in ranking] for ranking in rankings]
        order = rrf(ids, k=sc.rrf_k, weights=list(weights))
        if config.event_leaders:
            order = lead_with_each(order, ids[1 : 1 + events])
        fused[name] = [(objects[i], score) for i, score in order[: sc.limit]]
    return SearchResults(**fused, time=request.time)


def _sub_queries(query: str, config: SearchConfig) -> tuple[str, ...]:
    """What is searched beside the whole query: each event it names, else the focus of a counting,
    totalling or ordering question, else nothing."""
    events = event_queries(query) if config.event_queries else []
    if not events and config.focus_query and (focus := focus_query(query)):
        events = [focus]
    return tuple(events)


def _ranks_on_objects(scope: Scope, sc: ScopeConfig, windows: Sequence[TimeWindow], request: _Request) -> bool:
    """Does ranking this scope read the candidates themselves (dates, speakers, labels, text), or
    only their ids?"""
    return (
        sc.reranker not in (Reranker.RRF, Reranker.MMR)
        or scope is Scope.EPISODES  # speaker, conversation and reply signals
        or (scope is Scope.FACTS and bool(windows) and request.config.time_mode is not TimeMode.OFF)
        or (scope is Scope.ENTITIES and request.filters.labels is not None)
    )


def _passage(obj: Any) -> str:
    """What a cross-encoder reads for each kind of result."""
    if isinstance(obj, Fact):
        return obj.fact
    if isinstance(obj, Episode):
        return obj.text
    return f"{obj.name}: {obj.summary}" if obj.summary else obj.name


class Searcher:
    """Search and context over a store. ``cross_encoder`` is needed only by the cross-encoder reranker."""

    def __init__(
        self, store: methods.SearchStore, embedder: Embedder, cross_encoder: CrossEncoder | None = None
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.cross_encoder = cross_encoder

    # -- public API ------------------------------------------------------------------------------

    async def search(
        self,
        group_ids: str | Sequence[str],
        query: str,
        *,
        config: SearchConfig | None = None,
        filters: SearchFilters | None = None,
        now: datetime | None = None,
        center_entity_id: str | None = None,
        seed_entity_ids: Sequence[str] = (),
        seed_episode_ids: Sequence[str] = (),
    ) -> SearchResults:
        """Search one or more groups (default config: the ``hybrid_rrf`` recipe).

        ``now`` is when the question is asked: relative dates in ``query`` resolve against it and
        "current" facts are judged at it (default: the clock). ``filters`` narrows facts by type,
        labels, the four timestamps, ``as_of`` and ``known_at``. ``center_entity_id`` is required by
        the node-distance reranker; seeds steer BFS.
        """
        with _operation("search"):
            groups = _groups(group_ids)
            request = await self._request(
                query, config or RECIPES["hybrid_rrf"], _with_now(filters, now, False),
                center_entity_id, seed_entity_ids, seed_episode_ids,
            )
            return await self._fan_out(groups, request)

    async def context(
        self,
        group_ids: str | Sequence[str],
        query: str,
        *,
        config: SearchConfig | None = None,
        filters: SearchFilters | None = None,
        now: datetime | None = None,
        center_entity_id: str | None = None,
        seed_entity_ids: Sequence[str] = (),
        seed_episode_ids: Sequence[str] = (),
        token_budget: int = DEFAULT_TOKEN_BUDGET,
        include_superseded: bool = False,
        include_episodes: bool = False,
        include_evidence: bool = False,
    ) -> str:
        """The paper's context block for ``query`` (default config: the ``context`` recipe, 20 facts
        and 20 entities). Current facts only unless ``include_superseded`` (superseded ones are
        marked with when they stopped being true); raw episodes only with ``include_episodes``; each
        fact followed by the words of the episode that state it with ``include_evidence``."""
        with _operation("context"):
            return await self._context(
                group_ids, query, config, filters, now, center_entity_id, seed_entity_ids, seed_episode_ids,
                token_budget, include_superseded, include_episodes, include_evidence,
            )

    async def _context(
        self, group_ids: str | Sequence[str], query: str, config: SearchConfig | None, filters: SearchFilters | None,
        now: datetime | None, center_entity_id: str | None, seed_entity_ids: Sequence[str],
        seed_episode_ids: Sequence[str], token_budget: int, include_superseded: bool, include_episodes: bool,
        include_evidence: bool,
    ) -> str:
        config = config or RECIPES["context"]
        if include_episodes and config.episodes is None:
            config = config.model_copy(update={"episodes": ScopeConfig(limit=5)})
        elif not include_episodes:
            config = config.model_copy(update={"episodes": None})
        filters = _with_now(filters, now, include_superseded)
        groups = _groups(group_ids)
        request = await self._request(
            query, config, filters, center_entity_id, seed_entity_ids, seed_episode_ids
        )
        results = await self._fan_out(groups, request)
        facts = [f for f, _ in results.facts]
        return build_context(
            facts,
            [e for e, _ in results.entities],
            [c for c, _ in results.communities],
            [e for e, _ in results.episodes],
            token_budget=token_budget,
            now=filters.known_at or filters.effective_now(),
            quotes=await self._quotes(facts) if include_evidence else None,
            names=await self._participant_names(facts),
        )

    async def _quotes(self, facts: Sequence[Fact]) -> dict[str, str]:
        """fact id -> the words of its first evidence span, read from the episode (one read per group)."""
        wanted: dict[str, set[str]] = {}
        for fact in facts:
            if fact.evidence:
                wanted.setdefault(fact.group_id, set()).add(fact.evidence[0].episode_id)
        episodes = await asyncio.gather(*(self.store.get_episodes(g, sorted(ids)) for g, ids in wanted.items()))
        return evidence_quotes(facts, [e for found in episodes for e in found])

    async def _participant_names(self, facts: Sequence[Fact]) -> dict[str, str]:
        """Names of every participant of the hyperedges among ``facts`` (the context names them all)."""
        wanted: dict[str, set[str]] = {}
        for fact in facts:
            if fact.other_entity_ids:
                wanted.setdefault(fact.group_id, set()).update(fact.entity_ids)
        found = await asyncio.gather(*(self.store.get_entities(g, sorted(ids)) for g, ids in wanted.items()))
        return {e.id: e.name for entities in found for e in entities}

    # -- one search -------------------------------------------------------------------------------

    async def _fan_out(self, groups: list[str], request: _Request) -> SearchResults:
        """The whole query, and each event it names on its own (see :mod:`.decompose`), then the
        question in the voice of the speaker it names (see :mod:`.perspective`), fused."""
        config = request.config
        per_query = list(await asyncio.gather(
            self._fan_out_groups(groups, request),
            *(self._fan_out_groups(groups, self._event_request(request, event)) for event in request.events),
        ))
        weights = [config.whole_query_weight, *[1.0] * len(request.events)]
        # after the whole query: its hits tell who the speakers are
        voiced = await self._perspective(groups, request, per_query[0]) if config.perspective_weight > 0 else None
        if voiced is not None:
            per_query.append(voiced)
            weights.append(config.perspective_weight)
        if len(per_query) == 1:
            return per_query[0]
        return _fuse_queries(per_query, weights, request, events=len(request.events))

    async def _perspective(
        self, groups: list[str], request: _Request, whole: SearchResults
    ) -> SearchResults | None:
        """The search of the question in the voice of the one speaker it names, or ``None``. Its
        own words and embedding are searched; the signals still judge the question as asked (who
        it names, whether it asks for a list). With ``perspective_own_turns`` only that speaker's
        messages rank in it."""
        speakers = {e.speaker for e, _ in whole.episodes if e.speaker}
        voiced = perspective_query(request.query, speakers)
        if voiced is None:
            return None
        own = parse_time(voiced.query, request.filters.effective_now())
        sub = replace(
            request, bm25_query=self._bm25_query(own.remainder or voiced.query, request.config), events=(),
            vector=asyncio.ensure_future(self._embed(voiced.query)),
        )
        found = await self._fan_out_groups(groups, sub)
        if not request.config.perspective_own_turns:
            return found
        return replace(found, episodes=[(e, score) for e, score in found.episodes if e.speaker == voiced.speaker])

    def _event_request(self, request: _Request, event: str) -> _Request:
        """One event of the query: its own words and embedding, the whole query's time."""
        own = parse_time(event, request.filters.effective_now())
        return replace(
            request, query=event, bm25_query=self._bm25_query(own.remainder or event, request.config), events=(),
            vector=asyncio.ensure_future(self._embed(event)),
        )

    async def _fan_out_groups(self, groups: list[str], request: _Request) -> SearchResults:
        """One search per group (the store is per group), merged; the query embedding is shared."""
        try:
            per_group = await asyncio.gather(*(self._search_group(g, request) for g in groups))
        finally:
            if not request.vector.done():
                request.vector.cancel()  # a failed search must not leave the embedding running
        return self._merge(per_group, request)

    async def _request(
        self,
        query: str,
        config: SearchConfig,
        filters: SearchFilters,
        center_entity_id: str | None,
        seed_entity_ids: Sequence[str],
        seed_episode_ids: Sequence[str],
    ) -> _Request:
        time = parse_time(query, filters.effective_now()) if config.time_mode is not TimeMode.OFF else ParsedTime()
        scopes = config.scopes().values()
        needs_vector = any(Method.COSINE in s.methods or s.reranker is Reranker.MMR for s in scopes)
        vector: asyncio.Future[np.ndarray | None]
        if needs_vector and query.strip():
            vector = asyncio.ensure_future(self._embed(query))
        else:
            vector = asyncio.get_running_loop().create_future()
            vector.set_result(None)
        return _Request(
            events=_sub_queries(query, config),
            query=query,
            bm25_query=self._bm25_query(time.remainder or query, config),  # "May" the month is not "may" the verb
            vector=vector,
            config=config,
            filters=filters,
            time=time,
            center_entity_id=center_entity_id,
            seed_entity_ids=tuple(seed_entity_ids),
            seed_episode_ids=tuple(seed_episode_ids),
        )

    @staticmethod
    def _bm25_query(text: str, config: SearchConfig) -> str:
        """What full-text search reads: the words, and with ``word_forms`` their other forms."""
        return wordforms.expand_query(text) if config.word_forms else text

    async def _embed(self, query: str) -> np.ndarray | None:
        vectors: np.ndarray = await self.embedder.embed([query])
        first: np.ndarray = vectors[0]
        return first

    async def _cosine(self, group_id: str, scope: Scope, sc: ScopeConfig, request: _Request) -> list[ScoredId]:
        vector = await request.vector
        if vector is None:
            return []
        return await methods.cosine_search(
            self.store, group_id, scope, vector, limit=sc.candidates, filters=request.filters,
            min_score=sc.cosine_min_score,
        )

    async def _search_group(self, group_id: str, request: _Request) -> dict[Scope, list[tuple[Any, float]]]:
        windows = [*request.time.windows, *await self._anchor_windows(group_id, request)]
        hits = await self._run_methods(group_id, request)
        scopes = {_SCOPES[name]: sc for name, sc in request.config.scopes().items()}
        ranked = await asyncio.gather(
            *(self._rank_scope(group_id, scope, sc, hits[scope], request, windows) for scope, sc in scopes.items())
        )
        return dict(zip(scopes, ranked, strict=True))

    async def _run_methods(self, group_id: str, request: _Request) -> _Hits:
        """Cosine and BM25 (and BFS from explicit seeds) concurrently; then BFS from their hits."""
        scopes = {_SCOPES[name]: sc for name, sc in request.config.scopes().items()}
        jobs: dict[tuple[Scope, Method], Any] = {}
        for scope, sc in scopes.items():
            if Method.COSINE in sc.methods:
                jobs[scope, Method.COSINE] = _timed(Method.COSINE, scope, self._cosine(group_id, scope, sc, request))
            if Method.BM25 in sc.methods:
                jobs[scope, Method.BM25] = _timed(Method.BM25, scope, methods.bm25_search(
                    self.store, group_id, scope, request.bm25_query, limit=sc.candidates, filters=request.filters
                ))
        bfs_scopes = {scope: sc for scope, sc in scopes.items() if Method.BFS in sc.methods}
        explicit_seeds = bool(request.seed_entity_ids or request.seed_episode_ids)
        walk = (
            self._bfs(group_id, bfs_scopes, request, request.seed_entity_ids, request.seed_episode_ids)
            if bfs_scopes and explicit_seeds else asyncio.sleep(0, {})
        )
        found, by_bfs = await asyncio.gather(asyncio.gather(*jobs.values()), walk)
        hits: _Hits = {scope: {} for scope in scopes}
        for (scope, method), result in zip(jobs, found, strict=True):
            hits[scope][method] = result
        if bfs_scopes and not explicit_seeds:
            seeds = await self._seeds_from_hits(group_id, request, hits)
            by_bfs = await self._bfs(group_id, bfs_scopes, request, seeds)
        for scope, result in by_bfs.items():
            hits[scope][Method.BFS] = result
        return hits

    async def _bfs(
        self, group_id: str, scopes: dict[Scope, ScopeConfig], request: _Request,
        entity_ids: Sequence[str], episode_ids: Sequence[str] = (),
    ) -> dict[Scope, list[ScoredId]]:
        """One walk serves every scope that asked for BFS (as deep and as long as the greediest)."""
        if not entity_ids and not episode_ids:
            return {}
        started = time.perf_counter()
        reached = await self.store.bfs(
            group_id, list(entity_ids), seed_episode_ids=list(episode_ids), filters=request.filters,
            max_hops=max(sc.bfs_max_hops for sc in scopes.values()),
            limit=max(sc.candidates for sc in scopes.values()),  # facts kept, nearest first
        )
        found = await asyncio.gather(*(
            methods.hits_from_bfs(self.store, group_id, scope, reached, limit=sc.candidates, max_hops=sc.bfs_max_hops)
            for scope, sc in scopes.items()
        ))
        metrics.record_search_method(Method.BFS.value, "all", time.perf_counter() - started)  # one walk, every scope
        return dict(zip(scopes, found, strict=True))

    async def _seeds_from_hits(self, group_id: str, request: _Request, hits: _Hits) -> list[str]:
        found = {scope: [h.id for by in hits[scope].values() for h in by] for scope in hits}
        seeds = await methods.entities_of_hits(self.store, group_id, found)
        if not seeds:
            seeds = await methods.entities_of_recent_episodes(
                self.store, group_id, request.config.recent_episodes_for_bfs
            )
        return seeds

    async def _anchor_windows(self, group_id: str, request: _Request) -> list[TimeWindow]:
        """Date "two weeks before the trip" by the best full-text hit for "the trip"."""
        windows = []
        for anchored in request.time.anchored:
            anchor_time = await self._time_of(group_id, anchored.anchor, request.filters)
            if anchor_time is not None:
                windows.append(anchored.window_around(anchor_time))
        return windows

    async def _time_of(self, group_id: str, text: str, filters: SearchFilters) -> datetime | None:
        facts = await methods.bm25_search(self.store, group_id, Scope.FACTS, text, limit=1, filters=filters)
        if facts:
            found_facts = await self.store.get_facts(group_id, [facts[0].id], known_at=filters.known_at)
            if found_facts and found_facts[0].valid_at is not None:
                return found_facts[0].valid_at
        episodes = await methods.bm25_search(self.store, group_id, Scope.EPISODES, text, limit=1, filters=filters)
        if episodes:
            found = await self.store.get_episodes(group_id, [episodes[0].id])
            return found[0].reference_time if found else None
        return None

    # -- ρ per scope -------------------------------------------------------------------------------

    async def _rank_scope(
        self, group_id: str, scope: Scope, sc: ScopeConfig, hits: dict[Method, list[ScoredId]],
        request: _Request, windows: Sequence[TimeWindow],
    ) -> list[tuple[Any, float]]:
        rankings = [[h.id for h in found] for found in hits.values()]
        weights = [sc.method_weights.get(method, 1.0) for method in hits]
        if not _ranks_on_objects(scope, sc, windows, request):
            # Fusion and reranking need only the ids (MMR: and vectors): load just the winners.
            ranked = await self._rerank(group_id, scope, sc, rrf(rankings, k=sc.rrf_k, weights=weights), {}, request)
            return await self._load_best(group_id, scope, cut_below(ranked, sc.min_score), sc.limit, request)
        pool = list(dict.fromkeys(i for ranking in rankings for i in ranking))
        objects = await self._load(group_id, scope, pool, request)
        rankings = [[i for i in ranking if i in objects] for ranking in rankings]
        if scope is Scope.EPISODES and request.config.hop_boost > 0:
            hopped = await self._hop(group_id, sc, request, rrf(rankings, k=sc.rrf_k, weights=weights), objects)
            if hopped:
                rankings.append(hopped)
                weights.append(request.config.hop_boost)
        fused = _fuse(scope, rankings, weights, objects, windows, request, sc.rrf_k)
        ranked = await self._rerank(group_id, scope, sc, fused, objects, request)
        return [(objects[i], score) for i, score in cut_below(ranked, sc.min_score)[: sc.limit]]

    async def _hop(
        self, group_id: str, sc: ScopeConfig, request: _Request, fused: Ranked, objects: dict[str, Any]
    ) -> list[str]:
        """The messages one hop from the best ones over the names and keywords they mention (one
        full-text query per seed, see :mod:`.hops`); what the pool lacked is loaded into ``objects``."""
        if request.config.asking_last:  # a question names little to hop through
            fused = asking.asking_last(fused, objects)
        seeds = hops.hop_seeds([objects[i] for i, _ in fused], request.config.hop_seeds)
        speakers = {e.speaker for e in objects.values() if isinstance(e, Episode) and e.speaker}
        queries = hops.hop_queries(seeds, request.query, speakers)
        found = await asyncio.gather(*(
            methods.bm25_search(self.store, group_id, Scope.EPISODES, q, limit=sc.candidates, filters=request.filters)
            for q in queries
        ))
        hopped = hops.fuse_hops([[h.id for h in hits] for hits in found], {s.id for s in seeds}, k=sc.rrf_k)
        objects.update(await self._load(group_id, Scope.EPISODES, [i for i in hopped if i not in objects], request))
        return hops.keep_hops([i for i in hopped if i in objects], objects, seeds)

    async def _load_best(
        self, group_id: str, scope: Scope, ranked: Ranked, limit: int, request: _Request
    ) -> list[tuple[Any, float]]:
        """The first ``limit`` of ``ranked`` that still exist (one was perhaps deleted since it was
        found: the next in line takes its place)."""
        best: list[tuple[Any, float]] = []
        start = 0
        while len(best) < limit and start < len(ranked):
            batch = ranked[start : start + limit - len(best)]
            start += len(batch)
            objects = await self._load(group_id, scope, [i for i, _ in batch], request)
            best += [(objects[i], score) for i, score in batch if i in objects]
        return best

    async def _load(self, group_id: str, scope: Scope, ids: list[str], request: _Request) -> dict[str, Any]:
        if not ids:
            return {}
        known_at = request.filters.known_at  # facts as our records held them then (their versions)
        getters: dict[Scope, Callable[[str, Sequence[str]], Awaitable[Sequence[Any]]]] = {
            Scope.FACTS: functools.partial(self.store.get_facts, known_at=known_at),
            Scope.ENTITIES: self.store.get_entities,
            Scope.EPISODES: self.store.get_episodes,
            Scope.COMMUNITIES: self.store.get_communities,
        }
        found = {o.id: o for o in await getters[scope](group_id, ids)}
        objects = {i: found[i] for i in ids if i in found}  # keep the pool's order
        filters = request.filters
        if scope is Scope.ENTITIES and filters.labels is not None:
            wanted = set(filters.labels)
            objects = {i: e for i, e in objects.items() if wanted & set(e.labels)}
        return objects

    async def _rerank(
        self, group_id: str, scope: Scope, sc: ScopeConfig, fused: Ranked, objects: dict[str, Any], request: _Request
    ) -> Ranked:
        ids = [i for i, _ in fused][: sc.rerank_pool] if sc.reranker is not Reranker.RRF else []
        if sc.reranker is Reranker.RRF:
            return fused
        if sc.reranker is Reranker.MMR:
            query_vector = await request.vector
            if query_vector is None:
                return fused
            vectors = await self.store.get_vectors(group_id, scope, ids)
            return mmr(query_vector, ids, vectors, lambda_=sc.mmr_lambda, limit=sc.limit)
        if sc.reranker is Reranker.EPISODE_MENTIONS:
            return episode_mentions(ids, await self._mention_counts(group_id, scope, ids, objects))
        if sc.reranker is Reranker.NODE_DISTANCE:
            return node_distance(ids, await self._hops_from_center(group_id, scope, sc, ids, objects, request))
        return await self._cross_encode(request.query, ids, objects)

    async def _mention_counts(
        self, group_id: str, scope: Scope, ids: list[str], objects: dict[str, Any]
    ) -> dict[str, int]:
        if scope is Scope.FACTS:
            return {i: len(objects[i].episode_ids) for i in ids}
        if scope is Scope.ENTITIES:
            return {i: len(eps) for i, eps in (await self.store.episodes_of_entities(group_id, ids)).items()}
        return {}

    async def _hops_from_center(
        self, group_id: str, scope: Scope, sc: ScopeConfig, ids: list[str], objects: dict[str, Any],
        request: _Request,
    ) -> dict[str, int]:
        if request.center_entity_id is None:
            raise InvalidInputError("the node_distance reranker needs center_entity_id")
        reached = await self.store.bfs(
            group_id, [request.center_entity_id], max_hops=sc.distance_max_hops, filters=request.filters
        )
        if scope is Scope.ENTITIES:
            return {i: reached.entities[i] for i in ids if i in reached.entities}
        if scope is Scope.FACTS:
            return entity_distances_to_fact_distances({i: objects[i].entity_ids for i in ids}, reached.entities)
        if scope is Scope.COMMUNITIES:
            members = {i: objects[i].member_ids for i in ids}
        else:
            members = await self.store.entities_of_episodes(group_id, ids)
        # an episode or community is one hop beyond its nearest entity
        return {i: d + 1 for i, d in entity_distances_to_fact_distances(members, reached.entities).items()}

    async def _cross_encode(self, query: str, ids: list[str], objects: dict[str, Any]) -> Ranked:
        if self.cross_encoder is None:
            # the caller asked for what this memory was not set up with: a 4xx that says what to set
            raise InvalidInputError(
                "the cross_encoder reranker is not configured here: set CHRONOMEM_CROSS_ENCODER "
                "(or cross_encoder in the config file) to llm or local:<model dir>, or pick another reranker"
            )
        scores = await self.cross_encoder.score(query, [_passage(objects[i]) for i in ids])
        return order_by_scores(ids, dict(zip(ids, scores, strict=True)))

    # -- merge groups ------------------------------------------------------------------------------

    @staticmethod
    def _merge(per_group: Sequence[dict[Scope, list[tuple[Any, float]]]], request: _Request) -> SearchResults:
        merged: dict[str, list[tuple[Any, float]]] = {}
        for name, sc in request.config.scopes().items():
            rows = [row for group in per_group for row in group.get(_SCOPES[name], [])]
            if len(per_group) > 1:
                rows.sort(key=lambda row: -row[1])  # stable: ties keep group order
            merged[name] = rows[: sc.limit]
        return SearchResults(**merged, time=request.time)


async def _timed(method: Method, scope: Scope, run: Awaitable[list[ScoredId]]) -> list[ScoredId]:
    """One φ method's hits, its time recorded (``chronomem_search_method_duration_seconds``)."""
    started = time.perf_counter()
    try:
        return await run
    finally:
        metrics.record_search_method(method.value, scope.value, time.perf_counter() - started)


@contextmanager
def _operation(name: str) -> Iterator[None]:
    """A ``search``/``context`` span and its time in ``chronomem_search_duration_seconds``."""
    started = time.perf_counter()
    try:
        with span(name):
            yield
    finally:
        metrics.record_search(name, time.perf_counter() - started)
