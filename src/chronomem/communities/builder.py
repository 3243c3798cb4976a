"""The community tier of the graph (paper §2.3): full builds, dynamic extension, refresh on drift.

* :meth:`CommunityBuilder.build` — label propagation over the group's entities (one read of every
  weighted edge), summaries through the model, names embedded, and the group's communities replaced
  in one atomic write.
* :meth:`CommunityBuilder.extend` — after ingestion writes new entities: one propagation step puts
  each where its neighbours are, and the communities it joined get their summary and name updated
  (one batched model call, or without a model a line appended to the summary).
* :meth:`CommunityBuilder.drift` / :meth:`CommunityBuilder.maybe_refresh` — how far extension has
  taken the communities from a full build, and a rebuild once that passes the configured threshold.

Everything goes through the store port (:class:`CommunityStore`: graph reads and writes), so every
backend works. The builder keeps a per-group membership index and drift counter in memory (see
:mod:`chronomem.communities.state`); hold one builder per process and per store. Extensions of
one group are serialised; a build takes the group's lock only for its final write, so ingestion
goes on while it waits for the model. Different groups run concurrently.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from chronomem.communities.config import CommunityConfig
from chronomem.communities.drift import DriftCounter, partition_disagreement
from chronomem.communities.extension import apply_moves, assign_batch, membership_moves, neighbour_weights
from chronomem.communities.graph import WeightedGraph
from chronomem.communities.labelprop import Propagation, clusters, detect_communities, internal_degrees
from chronomem.communities.naming import append_members, member_name, member_summary
from chronomem.communities.prompts import CommunityAbout, CommunityChange, MemberText, topics_to_name
from chronomem.communities.state import GroupState, GroupStates
from chronomem.communities.summaries import summarize, update_summaries
from chronomem.domain import Community, Entity, new_id
from chronomem.embed.base import Embedder
from chronomem.llm.base import LanguageModel
from chronomem.store.base import GraphReader, GraphWrite, GraphWriter, Scope

__all__ = ["BuildReport", "CommunityBuilder", "CommunityStore", "Extension"]


class CommunityStore(GraphReader, GraphWriter, Protocol):
    """What communities use of the store: the entity graph and memberships to read, community
    writes."""

_FALLBACK_READ = 12  # central members read to name and describe a community without a model
_EMBED_BATCH = 256
_MIN_LINE = 8  # shortest summary line worth adding ("name: x")


@dataclass(frozen=True, slots=True)
class BuildReport:
    """What the last full build did and cost."""

    group_id: str
    entities: int
    communities: int
    unassigned: int  # entities in no community (isolated, or in a group smaller than min_size)
    rounds: int
    converged: bool
    reused: int  # communities whose members did not change: summary kept, no model call
    model_calls: int
    failed_calls: int
    detect_s: float  # label propagation alone
    total_s: float


@dataclass(frozen=True, slots=True)
class Extension:
    """Where dynamic extension put a batch of entities."""

    assigned: dict[str, str]  # entity id → community id
    unassigned: tuple[str, ...]  # no neighbour in any community: waits for the next build
    moved: tuple[str, ...]  # were members of another community
    updated: tuple[str, ...]  # community ids rewritten
    model_calls: int = 0


@dataclass(frozen=True, slots=True)
class _Detected:
    graph: WeightedGraph
    propagation: Propagation
    ranked: list[list[str]]  # member ids of each community, most central first


class CommunityBuilder:
    def __init__(
        self,
        store: CommunityStore,
        embedder: Embedder,
        llm: LanguageModel | None = None,
        *,
        config: CommunityConfig | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.llm = llm
        self.config = config or CommunityConfig()
        self.last_build: BuildReport | None = None
        self._states = GroupStates(self.config.cached_groups)
        # Per group: one lock for the membership index and community writes (held briefly), one
        # for builds (held through the model calls), and who arrived while a build was running.
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._build_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._arrivals: dict[str, list[str]] = {}

    @staticmethod
    def _lock_in(locks: weakref.WeakValueDictionary[str, asyncio.Lock], group_id: str) -> asyncio.Lock:
        lock = locks.get(group_id)
        if lock is None:
            lock = locks[group_id] = asyncio.Lock()
        return lock

    def _lock(self, group_id: str) -> asyncio.Lock:
        return self._lock_in(self._locks, group_id)

    def forget(self, group_id: str) -> None:
        """Drop what this process remembers of the group (e.g. after another process rebuilt it)."""
        self._states.drop(group_id)

    # -- full build --------------------------------------------------------------------------------

    async def build(self, group_id: str, *, resummarize: bool = False) -> list[Community]:
        """Recompute the group's communities and replace the stored ones atomically.

        A community whose member set is unchanged keeps its id, and (unless ``resummarize``) its
        summary and name, so a refresh pays model calls only where membership changed.

        Extensions of the group keep running while the build waits for the model; entities they
        placed are placed again, by the same step, right after the new communities are written.
        """
        async with self._lock_in(self._build_locks, group_id):
            arrivals = self._arrivals[group_id] = []
            try:
                return await self._build(group_id, arrivals, resummarize=resummarize)
            finally:
                self._arrivals.pop(group_id, None)

    async def _detect(self, group_id: str) -> _Detected:
        ids, edges = await self.store.entity_edges(group_id)
        graph = WeightedGraph.from_edges(ids, edges)
        # CPU-bound: off the event loop, so a large group does not stall other requests.
        return await asyncio.to_thread(self._propagate, graph)

    def _propagate(self, graph: WeightedGraph) -> _Detected:
        cfg = self.config
        result = detect_communities(graph, max_rounds=cfg.max_rounds, merge_levels=cfg.merge_levels)
        inner, degree = internal_degrees(graph, result.labels), graph.degrees()
        ranked = []
        for group in clusters(result.labels, min_size=cfg.min_size):
            order = group[np.lexsort((group, -degree[group], -inner[group]))]
            ranked.append([graph.ids[i] for i in order.tolist()])
        return _Detected(graph, result, ranked)

    async def _build(self, group_id: str, arrivals: list[str], *, resummarize: bool) -> list[Community]:
        started = time.perf_counter()
        detected = await self._detect(group_id)
        detect_s = time.perf_counter() - started
        built, reused, calls, failed = await self._assemble(group_id, detected, resummarize=resummarize)
        vectors = await self._vectors(group_id, built, reuse=reused)
        async with self._lock(group_id):
            await self.store.write(
                GraphWrite(group_id, communities=built, community_vectors=vectors, replace_communities=True)
            )
            counter = DriftCounter.after_build(detected.graph.size)
            self._states.put(group_id, GroupState.from_communities(built, counter))
            if arrivals:  # extended against the old communities while the model was busy
                await self._extend_or_forget(group_id, list(dict.fromkeys(arrivals)))
                built = await self.store.get_communities(group_id, [c.id for c in built])
        self.last_build = BuildReport(
            group_id=group_id,
            entities=detected.graph.size,
            communities=len(built),
            unassigned=detected.graph.size - sum(len(c.member_ids) for c in built),
            rounds=detected.propagation.rounds,
            converged=detected.propagation.converged,
            reused=len(reused),
            model_calls=calls,
            failed_calls=failed,
            detect_s=detect_s,
            total_s=time.perf_counter() - started,
        )
        return built

    async def _assemble(
        self, group_id: str, detected: _Detected, *, resummarize: bool
    ) -> tuple[list[Community], list[str], int, int]:
        """Communities for the detected groups: (communities, ids whose summary was reused, model
        calls, failed calls). Same member set as a stored community: same id; its summary too
        unless asked to resummarize or an extension left it pending."""
        previous = {frozenset(c.member_ids): c for c in await self.store.list_communities(group_id)}
        state = self._states.get(group_id)
        pending = set(state.pending) if state else set()
        reusable = self.config.reuse_summaries and not resummarize
        communities: dict[int, Community] = {}
        for i, members in enumerate(detected.ranked):
            before = previous.get(frozenset(members))
            if reusable and before is not None and before.id not in pending:
                communities[i] = before.model_copy(update={"member_ids": tuple(members)})
        reused = [c.id for c in communities.values()]
        fresh = [i for i in range(len(detected.ranked)) if i not in communities]
        described, calls, failed = await self._describe(group_id, [detected.ranked[i] for i in fresh])
        for i, (name, summary) in zip(fresh, described, strict=True):
            before = previous.get(frozenset(detected.ranked[i]))
            communities[i] = Community(
                id=before.id if before is not None else new_id(),
                group_id=group_id,
                name=name,
                summary=summary,
                member_ids=tuple(detected.ranked[i]),
            )
        return [communities[i] for i in range(len(detected.ranked))], reused, calls, failed

    async def _describe(self, group_id: str, ranked: list[list[str]]) -> tuple[list[tuple[str, str]], int, int]:
        """(name, summary) of each community, and the model calls made (total, failed)."""
        cfg = self.config
        read = cfg.members_per_call * cfg.max_map_calls if self.llm else max(_FALLBACK_READ, cfg.name_members)
        wanted = [m for members in ranked for m in members[:read]]
        found = {e.id: e for e in await self.store.get_entities(group_id, wanted)} if wanted else {}
        members = [[found[m] for m in ms[:read] if m in found] for ms in ranked]
        abouts: list[CommunityAbout | None] = [None] * len(ranked)
        calls = failed = 0
        if self.llm is not None and ranked:
            texts = [[self._member_text(e) for e in ms] for ms in members]
            run = await summarize(self.llm, texts, cfg)
            abouts, calls, failed = run.results, run.calls, run.failed_calls
        described = [self._name_and_summary(about, ms) for about, ms in zip(abouts, members, strict=True)]
        return described, calls, failed

    def _member_text(self, entity: Entity) -> MemberText:
        return MemberText(entity.name, " ".join(entity.summary.split())[: self.config.member_summary_chars])

    def _name_and_summary(self, about: CommunityAbout | None, ranked: Sequence[Entity]) -> tuple[str, str]:
        if about is not None:
            return topics_to_name(about.topics), about.summary
        return member_name(ranked, self.config.name_members), member_summary(ranked, self.config.summary_chars)

    async def _vectors(
        self, group_id: str, communities: Sequence[Community], *, reuse: Sequence[str] = ()
    ) -> dict[str, np.ndarray]:
        """Name embeddings: stored ones for ``reuse`` ids when present, the rest embedded in batches."""
        vectors = await self.store.get_vectors(group_id, Scope.COMMUNITIES, list(reuse)) if reuse else {}
        todo = [c for c in communities if c.id not in vectors and c.name]
        for start in range(0, len(todo), _EMBED_BATCH):
            chunk = todo[start : start + _EMBED_BATCH]
            embedded = await self.embedder.embed([c.name for c in chunk])
            vectors.update({c.id: embedded[i] for i, c in enumerate(chunk)})
        return vectors

    # -- dynamic extension -------------------------------------------------------------------------

    async def extend(self, group_id: str, entity_ids: Sequence[str]) -> Extension:
        """Place entities the ingestion pipeline just wrote (or entities that gained facts).

        Call after the episode's write, with the ids of its new (and optionally its touched)
        entities. Cheap: three reads and one write, plus one model call when a model is configured
        and ``config.summarize_on_extend`` is on.
        """
        ids = list(dict.fromkeys(entity_ids))
        if not ids:
            return Extension({}, (), (), ())
        async with self._lock(group_id):
            if group_id in self._arrivals:
                self._arrivals[group_id].extend(ids)
            return await self._extend_or_forget(group_id, ids)

    async def _extend_or_forget(self, group_id: str, ids: list[str]) -> Extension:
        try:
            return await self._extend(group_id, ids, retry=True)
        except BaseException:
            self._states.drop(group_id)  # the index may be half-updated: reload it next time
            raise

    async def _load_state(self, group_id: str) -> GroupState:
        state = self._states.get(group_id)
        if state is None:
            state = GroupState.from_communities(await self.store.list_communities(group_id))
            self._states.put(group_id, state)
        return state

    async def _extend(self, group_id: str, ids: list[str], *, retry: bool) -> Extension:
        state = await self._load_state(group_id)
        facts = await self.store.facts_of_entities(group_id, ids)
        assignment = assign_batch(ids, neighbour_weights(ids, facts), state.membership, sizes=state.sizes)
        moves = membership_moves(assignment, state.membership)
        stored = await self.store.get_communities(group_id, moves.communities) if moves.communities else []
        if len(stored) != len(moves.communities):
            # A community this process knew is gone: the group was rebuilt elsewhere.
            self._states.drop(group_id)
            if retry:
                return await self._extend(group_id, ids, retry=False)
        known = {c.id for c in stored}
        self._count(state, ids, assignment.assigned, assignment.moved)
        for community_id in known:
            for entity_id in moves.joined.get(community_id, []):
                state.move(entity_id, community_id)
        updated = [apply_moves(c, moves.joined.get(c.id, []), moves.left.get(c.id, [])) for c in stored]
        if self.llm is not None:
            for c in updated:
                if moves.joined.get(c.id):
                    state.mark_pending(c.id, moves.joined[c.id])
        written, calls = await self._refresh_descriptions(group_id, state, updated, moves.joined)
        if written:
            vectors = await self._vectors(group_id, [c for c in written if c.name != _name_of(stored, c.id)])
            await self.store.write(GraphWrite(group_id, communities=written, community_vectors=vectors))
        placed = {e: c for e, c in assignment.assigned.items() if c in known}
        return Extension(
            assigned=placed,
            unassigned=tuple(e for e in ids if e not in placed),
            moved=tuple(e for e in assignment.moved if e in placed),
            updated=tuple(c.id for c in written),
            model_calls=calls,
        )

    @staticmethod
    def _count(state: GroupState, ids: Sequence[str], assigned: dict[str, str], moved: Sequence[str]) -> None:
        """Drift bookkeeping: first sightings count as added (placed or not), moves as moved."""
        added = [e for e in ids if e not in state.membership and e not in state.seen_unassigned]
        state.seen_unassigned.update(e for e in ids if e not in state.membership and e not in assigned)
        if state.counter is not None:
            state.counter = state.counter.record(added=len(added), moved=len(moved))

    async def _refresh_descriptions(
        self, group_id: str, state: GroupState, updated: list[Community], joined: dict[str, list[str]]
    ) -> tuple[list[Community], int]:
        """New names and summaries for communities that gained members: one model call, or, without
        a model, the newcomers appended to the summary (the name, from central members, stays)."""
        if self.llm is None or not self.config.summarize_on_extend:
            limit = self.config.summary_chars
            # A summary written without a model is usually full already: read newcomers only if there is room.
            roomy = [c for c in updated if len(c.summary) + _MIN_LINE < limit]
            newcomers = await self._entities(group_id, [e for c in roomy for e in joined.get(c.id, [])])
            return [
                c.model_copy(update={"summary": append_members(c.summary, _pick(newcomers, joined.get(c.id)), limit)})
                for c in updated
            ], 0
        return await self._summarize_pending(group_id, state, updated)

    async def _summarize_pending(
        self, group_id: str, state: GroupState, updated: list[Community]
    ) -> tuple[list[Community], int]:
        """One model call updating pending communities (those just changed first)."""
        assert self.llm is not None
        by_id = {c.id: c for c in updated}
        chosen = list(dict.fromkeys([*by_id, *state.pending]))[: self.config.max_updates_per_call]
        extra = [cid for cid in chosen if cid not in by_id]
        by_id.update({c.id: c for c in await self.store.get_communities(group_id, extra)} if extra else {})
        chosen = [cid for cid in chosen if cid in by_id and state.pending.get(cid)]
        newcomers = await self._entities(group_id, [e for cid in chosen for e in state.pending[cid]])
        changes = [
            CommunityChange(
                f"c{i + 1}", by_id[cid].name, by_id[cid].summary,
                tuple(self._member_text(e) for e in _pick(newcomers, state.pending[cid])),
            )
            for i, cid in enumerate(chosen)
        ]
        run = await update_summaries(self.llm, changes, self.config) if changes else None
        for cid, about in zip(chosen, run.results if run else [], strict=True):
            if about is not None:
                renamed = {"name": topics_to_name(about.topics), "summary": about.summary}
                by_id[cid] = by_id[cid].model_copy(update=renamed)
                state.pending.pop(cid, None)
        written = [by_id[cid] for cid in dict.fromkeys([*(c.id for c in updated), *chosen])]
        return written, run.calls if run else 0

    async def _entities(self, group_id: str, ids: Sequence[str]) -> dict[str, Entity]:
        return {e.id: e for e in await self.store.get_entities(group_id, list(dict.fromkeys(ids)))} if ids else {}

    async def summarize_pending(self, group_id: str) -> int:
        """Update names and summaries of communities extended without a model call
        (``summarize_on_extend=False``); returns how many were updated."""
        if self.llm is None:
            return 0
        async with self._lock(group_id):
            state = await self._load_state(group_id)
            written, _ = await self._summarize_pending(group_id, state, [])
            if written:
                vectors = await self._vectors(group_id, written)
                await self.store.write(GraphWrite(group_id, communities=written, community_vectors=vectors))
            return sum(1 for c in written if c.id not in state.pending)

    # -- drift and refresh -------------------------------------------------------------------------

    async def drift(self, group_id: str) -> float:
        """Share of the group's entities placed or moved by extension since the last full build.

        Counted in memory; a process that has not seen the group's last build measures it once
        instead (:meth:`measure_drift`, the cost of a propagation without summaries).
        """
        return (await self._drift_counter(group_id)).drift

    async def _drift_counter(self, group_id: str) -> DriftCounter:
        async with self._lock(group_id):
            state = await self._load_state(group_id)
            if state.counter is None:
                detected = await self._detect(group_id)
                disagreement = self._disagreement(detected, state)
                state.counter = DriftCounter.from_measure(detected.graph.size, disagreement)
            return state.counter

    async def measure_drift(self, group_id: str) -> float:
        """Exact drift: share of entities whose stored community differs from a fresh propagation's."""
        stored = GroupState.from_communities(await self.store.list_communities(group_id))
        return self._disagreement(await self._detect(group_id), stored)

    @staticmethod
    def _disagreement(detected: _Detected, stored: GroupState) -> float:
        fresh = {e: str(k) for k, members in enumerate(detected.ranked) for e in members}
        return partition_disagreement(detected.graph.ids, stored.membership, fresh)

    async def maybe_refresh(self, group_id: str) -> bool:
        """Rebuild when drift has reached ``config.refresh_threshold``; returns whether it did.

        A group smaller than ``config.refresh_min_entities`` is left to extension alone: while a
        group is young nearly every episode moves its partition, and rebuilding (and re-summarising)
        on each one would cost more than the communities are worth.
        """
        counter = await self._drift_counter(group_id)
        if counter.baseline + counter.added < self.config.refresh_min_entities:
            return False
        if counter.drift < self.config.refresh_threshold:
            return False
        await self.build(group_id)
        return True


def _pick(entities: dict[str, Entity], ids: Sequence[str] | None) -> list[Entity]:
    return [entities[e] for e in ids or () if e in entities]


def _name_of(communities: Sequence[Community], community_id: str) -> str | None:
    return next((c.name for c in communities if c.id == community_id), None)
