"""The FalkorDB store: one graph per group, on one server or sharded over a Redis Cluster.

Layout of a group's graph (links between objects are id properties, so a fact may outlive an
endpoint and a mention may arrive before its entity, exactly as the port allows; the one
relationship joins a fact to its own vector holder):

    (:Episode   {id, kind, content, text_ft, speaker, role, reference_time, created_at, status, …})
    (:Entity    {id, name, name_ft, labels, summary, summary_ft, aliases, norm_names, attributes, created_at})
    (:Fact      {id, source_id, target_id, other_entity_ids, entity_ids, relation_type, fact, fact_ft,
                 episode_ids, sources, attributes, valid_at, invalid_at, created_at, expired_at, valid_from,
                 version, recorded_at})
    (:Community {id, name, name_ft, summary, summary_ft, member_ids, created_at})
    (:Mention   {episode_id, entity_id})
    (:EpisodeVec|EntityVec|FactVec|CommunityVec {id, emb})   one per embedded object, never updated
    (:Fact)-[:HAS_VECTOR]->(:FactVec)                         created and deleted with the holder
    (:Fact)-[:HAS_VERSION]->(:FactVersion {the Fact's properties as they were, recorded_to})
                                                              earlier versions, never updated

``*_ft`` are accent-folded copies for the full-text indexes; ``emb`` is HNSW-indexed per holder label;
``valid_from`` is ``valid_at`` with null as the earliest time (an index bound for ``as_of``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any, cast

import numpy as np

from chronomem.domain import Community, Entity, Episode, EpisodeStatus, Fact, FactVersion
from chronomem.errors import InvalidInputError, NotFoundError
from chronomem.filters import SearchFilters
from chronomem.store.base import BfsResult, GraphWrite, GroupStats, QueueDepth, Scope, ScoredId, WeightedEdge
from chronomem.store.falkordb import graph_reads as reads
from chronomem.store.falkordb.connection import FalkorConnection, MissingGraphError, parse_url
from chronomem.store.falkordb.cypher import LABELS, VERSION_LINK, columns, vector_label
from chronomem.store.falkordb.keys import GroupKeys
from chronomem.store.falkordb.records import (
    community_from_row,
    entity_from_row,
    episode_from_row,
    episode_props,
    fact_from_row,
    from_micros,
    metadata_text,
    to_micros,
)
from chronomem.store.falkordb.schema import SchemaManager
from chronomem.store.falkordb.writes import batch_vectors, compose_write, vector_dimensions
from chronomem.store.history import revise, versions_of
from chronomem.text.names import normalize_name
from chronomem.timeutil import ensure_utc

__all__ = ["FalkorDBStore"]

# FalkorDB scores full text with TF-IDF, and a word found in every document of a group gets idf 0:
# a real hit would score 0.0. The floor keeps every hit's relevance positive, as the port promises.
FULLTEXT_SCORE_FLOOR = 1e-6

_DECODERS = {"Episode": episode_from_row, "Entity": entity_from_row, "Fact": fact_from_row,
             "Community": community_from_row}

# MERGE, and the reply's "Nodes created", tell whether the episode is new. (The shape
# `OPTIONAL MATCH (old …) WITH old WHERE old IS NULL CREATE …` creates duplicates on FalkorDB 4.16.3:
# the planner moves the filter inside the optional match.)
_INSERT_EPISODE = "MERGE (e:Episode {id: $row.id}) ON CREATE SET e += $row"
_SET_STATUS = (
    "MATCH (e:Episode {id: $id}) SET e.status = $status, e.attempts = e.attempts + $attempt, "
    "e.last_error = CASE WHEN $clear_error THEN null WHEN $error IS NULL THEN e.last_error ELSE $error END "
    f"RETURN {columns('Episode', 'e')}"
)

_SET_METADATA = f"MATCH (e:Episode {{id: $id}}) SET e.metadata = $metadata RETURN {columns('Episode', 'e')}"


class FalkorDBStore:
    """The :class:`~chronomem.store.Store` port on FalkorDB. Open with :meth:`connect`."""

    def __init__(self, connection: FalkorConnection, keys: GroupKeys) -> None:
        self._connection = connection
        self._keys = keys
        self._schema = SchemaManager(connection)
        self._closed = False
        # (group, scope) whose last full-text search needed the any-word tier (graph_reads.fulltext_search)
        self._common_words: set[tuple[str, Scope]] = set()

    @classmethod
    async def connect(cls, url: str) -> FalkorDBStore:
        """``falkordb://host:port`` or ``falkordb+cluster://host:port`` (options: see ``parse_url``).

        Checks that the server answers and has the graph module loaded."""
        settings = parse_url(url)
        connection = FalkorConnection.open(settings)
        store = cls(connection, GroupKeys(settings.namespace))
        try:
            await connection.on_every_primary("GRAPH.LIST")
        except BaseException:
            await connection.close()
            raise
        return store

    @property
    def connection(self) -> FalkorConnection:
        return self._connection

    async def memory_used_mb(self) -> float:
        """Memory the server(s) use, summed over cluster primaries (INFO memory ``used_memory``)."""
        replies = await self._connection.on_every_primary("INFO", "memory")
        return sum(float(reply["used_memory"]) for reply in replies) / 1e6

    def graph_key(self, group_id: str) -> str:
        """The Redis key holding a group's graph."""
        return self._keys.graph(group_id)

    # -- helpers ---------------------------------------------------------------------------------

    async def _read(self, group_id: str, text: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        try:
            return await self._connection.query(self._keys.graph(group_id), text, params, read_only=True)
        except MissingGraphError:
            return []

    async def _objects(self, group_id: str, label: str, text: str, params: dict[str, Any]) -> list[Any]:
        decode = _DECODERS[label]
        return [decode(group_id, row) for row in await self._read(group_id, text, params)]

    async def _all_groups_run(self, text: str) -> dict[str, list[list[Any]]]:
        groups = await self._graph_groups()
        results = await asyncio.gather(*(self._read(g, text) for g in groups))
        return dict(zip(groups, results, strict=True))

    async def _graph_groups(self) -> list[str]:
        names: set[str] = set()
        for listing in await self._connection.on_every_primary("GRAPH.LIST"):
            names.update(listing or [])
        groups = (self._keys.group_of(name) for name in names)
        return sorted(g for g in groups if g is not None)

    # -- lifecycle -------------------------------------------------------------------------------

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._connection.close()

    async def list_groups(self) -> list[str]:
        counts = await self._all_groups_run("MATCH (n) WHERE NOT n:Mention RETURN count(n)")
        return [group for group, rows in counts.items() if rows and rows[0][0] > 0]

    async def delete_group(self, group_id: str) -> None:
        key = self._keys.graph(group_id)
        with contextlib.suppress(MissingGraphError):  # an unknown group is a no-op
            await self._connection.execute("GRAPH.DELETE", key)
        self._schema.forget(key)

    async def stats(self, group_id: str) -> GroupStats:
        rows = await self._read(group_id, reads.STATS, {"now": to_micros(reads.now())})
        if not rows:
            return GroupStats(episodes=0, entities=0, facts=0, current_facts=0, communities=0)
        episodes, entities, facts, current, communities = rows[0]
        return GroupStats(episodes=episodes, entities=entities, facts=facts, current_facts=int(current or 0),
                          communities=communities)

    # -- writes ----------------------------------------------------------------------------------

    async def insert_episode(self, episode: Episode) -> tuple[Episode, bool]:
        key = self._keys.graph(episode.group_id)
        await self._schema.ensure(key, {})
        stats = await self._connection.update(key, _INSERT_EPISODE, {"row": episode_props(episode)})
        if stats.get("Nodes created", 0) > 0:
            return episode, True
        stored = await self.get_episodes(episode.group_id, [episode.id])
        return stored[0], False

    async def write(self, batch: GraphWrite) -> None:
        dimensions = vector_dimensions(batch)
        batch, versions = await self._revise_facts(batch)
        text, params = compose_write(batch, versions)
        if not text:
            return
        key = self._keys.graph(batch.group_id)
        adds = any((batch.episodes, batch.entities, batch.facts, batch.mentions, batch.communities))
        if not adds and not await self._connection.execute("EXISTS", key):
            if dimensions:
                raise InvalidInputError("vectors for objects that are not in the group")
            return  # deleting from a group that holds nothing: do not create its graph
        await self._schema.ensure(key, dimensions)
        self._schema.check_dimensions(key, dimensions)
        await self._check_vector_owners(batch)
        await self._connection.query(key, text, params)

    @contextlib.asynccontextmanager
    async def bulk_load(self, group_id: str) -> AsyncIterator[None]:
        """Writes in the block create no HNSW index for a label the group has none for yet; the
        block's end builds each once, over all the holders written, and waits for it. A vector search
        of such a label finds nothing until then. Measured in docs/results/falkordb_build.md."""
        key = self._keys.graph(group_id)
        self._schema.defer_vector_indexes(key)
        try:
            yield
        finally:
            await self._schema.build_deferred(key)

    async def _revise_facts(self, batch: GraphWrite) -> tuple[GraphWrite, list[FactVersion]]:
        """The batch with each stored fact's next version, and the versions those replace.

        Read before the write query: the group's writers are serialized by the ingestion lock,
        and a fact is revised by one of them at a time."""
        if not batch.facts or any(f.group_id != batch.group_id for f in batch.facts):
            return batch, []  # nothing to revise, or refused by compose_write
        stored = {f.id: f for f in await self.get_facts(batch.group_id, [f.id for f in batch.facts])}
        deleted = set(batch.delete_fact_ids)  # the write deletes them before it upserts
        stored = {i: f for i, f in stored.items() if i not in deleted}
        if clash := sorted({v.fact.id for v in batch.fact_history} & set(stored)):
            # a restored history is a fact's only one: beside a stored one, two would interleave
            raise InvalidInputError(f"earlier versions restored for facts the group already holds: {clash}")
        revisions = [revise(stored.get(f.id), f) for f in batch.facts]
        closed = [r.closed for r in revisions if r.closed is not None]
        return dataclasses.replace(batch, facts=[r.head for r in revisions]), closed

    async def _check_vector_owners(self, batch: GraphWrite) -> None:
        """Every vector must belong to an object of this batch or already in the group."""
        in_batch: dict[str, set[str]] = {
            "Episode": {e.id for e in batch.episodes}, "Entity": {e.id for e in batch.entities},
            "Fact": {f.id for f in batch.facts}, "Community": {c.id for c in batch.communities},
        }
        for label, vectors in batch_vectors(batch).items():
            others = sorted(set(vectors) - in_batch[label])
            if not others:
                continue
            text = f"UNWIND $ids AS id MATCH (n:{label} {{id: id}}) RETURN n.id"
            found = {row[0] for row in await self._read(batch.group_id, text, {"ids": others})}
            if missing := [i for i in others if i not in found]:
                raise InvalidInputError(f"vectors for {label.lower()}s not in group {batch.group_id!r}: {missing}")

    async def set_episode_status(
        self, group_id: str, episode_id: str, status: EpisodeStatus, *, error: str | None = None
    ) -> Episode:
        params = {
            "id": episode_id, "status": status.value, "attempt": int(status is EpisodeStatus.PROCESSING),
            "clear_error": status is EpisodeStatus.DONE, "error": error,
        }
        try:
            rows = await self._connection.query(self._keys.graph(group_id), _SET_STATUS, params)
        except MissingGraphError:
            rows = []
        if not rows:
            raise NotFoundError(f"episode {episode_id!r} not found in group {group_id!r}")
        return episode_from_row(group_id, rows[0])

    async def set_episode_metadata(self, group_id: str, episode_id: str, metadata: dict[str, Any]) -> Episode:
        params = {"id": episode_id, "metadata": metadata_text(metadata)}
        try:
            rows = await self._connection.query(self._keys.graph(group_id), _SET_METADATA, params)
        except MissingGraphError:
            rows = []
        if not rows:
            raise NotFoundError(f"episode {episode_id!r} not found in group {group_id!r}")
        return episode_from_row(group_id, rows[0])

    async def reset_processing(self) -> int:
        total = 0
        for group_id in await self._graph_groups():
            total += len(await self._connection.query(self._keys.graph(group_id), reads.RESET_PROCESSING))
        return total

    async def pending_groups(self) -> list[str]:
        found = await self._all_groups_run("MATCH (e:Episode {status: 'pending'}) RETURN e.id LIMIT 1")
        return [group for group, rows in found.items() if rows]

    async def queue_depth(self) -> dict[EpisodeStatus, QueueDepth]:
        found = await self._all_groups_run(
            "MATCH (e:Episode) WHERE e.status IN ['pending', 'processing'] "
            "RETURN e.status, count(e), min(e.created_at)")
        counts: dict[EpisodeStatus, int] = {}
        oldest: dict[EpisodeStatus, int] = {}
        for status_value, count, first in (row for rows in found.values() for row in rows):
            status = EpisodeStatus(status_value)
            counts[status] = counts.get(status, 0) + count
            oldest[status] = min(oldest.get(status, first), first)
        # every episode has a created_at, so a state with episodes has an oldest one
        return {status: QueueDepth(n, cast(datetime, from_micros(oldest[status]))) for status, n in counts.items()}

    # -- reads by id -----------------------------------------------------------------------------

    async def _by_ids(self, group_id: str, label: str, ids: Sequence[str]) -> list[Any]:
        if not ids:
            return []
        text = f"UNWIND $ids AS id MATCH (n:{label} {{id: id}}) RETURN {columns(label, 'n')}"
        found = {obj.id: obj for obj in await self._objects(group_id, label, text, {"ids": list(dict.fromkeys(ids))})}
        return [found[i] for i in ids if i in found]

    async def get_episodes(self, group_id: str, ids: Sequence[str]) -> list[Episode]:
        return await self._by_ids(group_id, "Episode", ids)

    async def get_entities(self, group_id: str, ids: Sequence[str]) -> list[Entity]:
        return await self._by_ids(group_id, "Entity", ids)

    async def get_facts(self, group_id: str, ids: Sequence[str], *, known_at: datetime | None = None) -> list[Fact]:
        facts: list[Fact] = await self._by_ids(group_id, "Fact", ids)
        return facts if known_at is None else await self._as_known_at(group_id, facts, ensure_utc(known_at))

    async def _as_known_at(self, group_id: str, facts: list[Fact], t: datetime) -> list[Fact]:
        """Each fact as our records held it at ``t`` (same order); facts recorded later go."""
        later = [f.id for f in facts if f.recorded_at > t]
        if not later:
            return facts
        text = (f"UNWIND $ids AS x MATCH (:Fact {{id: x}})-[:{VERSION_LINK}]->(v:FactVersion) "
                f"WHERE v.recorded_to > $t AND v.recorded_at <= $t RETURN {columns('Fact', 'v')}")
        rows = await self._objects(group_id, "Fact", text, {"ids": later, "t": to_micros(t)})
        earlier = {f.id: f for f in rows}
        return [earlier.get(f.id, f) for f in facts if f.recorded_at <= t or f.id in earlier]

    async def fact_history(self, group_id: str, fact_id: str) -> list[FactVersion]:
        head = await self._by_ids(group_id, "Fact", [fact_id])
        if not head:
            return []
        text = (f"MATCH (:Fact {{id: $id}})-[:{VERSION_LINK}]->(v:FactVersion) "
                f"RETURN {columns('Fact', 'v')}, v.recorded_to ORDER BY v.version")
        rows = await self._read(group_id, text, {"id": fact_id})
        earlier = [FactVersion(fact=fact_from_row(group_id, r[:-1]), recorded_to=from_micros(r[-1])) for r in rows]
        return versions_of(earlier, head[0])

    async def get_communities(self, group_id: str, ids: Sequence[str]) -> list[Community]:
        return await self._by_ids(group_id, "Community", ids)

    async def get_vectors(self, group_id: str, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        text = f"UNWIND $ids AS id MATCH (v:{vector_label(LABELS[scope])} {{id: id}}) RETURN v.id, v.emb"
        rows = await self._read(group_id, text, {"ids": list(dict.fromkeys(ids))})
        return {row[0]: np.asarray(row[1], dtype=np.float32) for row in rows}

    # -- listings --------------------------------------------------------------------------------

    async def list_episodes(
        self,
        group_id: str,
        *,
        limit: int | None = None,
        before: datetime | None = None,
        statuses: Sequence[EpisodeStatus] | None = None,
        newest_first: bool = True,
    ) -> list[Episode]:
        text, params = reads.list_episodes(limit=limit, before=before, statuses=statuses, newest_first=newest_first)
        return await self._objects(group_id, "Episode", text, params)

    async def list_entities(self, group_id: str, *, limit: int | None = None, offset: int = 0) -> list[Entity]:
        text, params = reads.paged(f"MATCH (n:Entity) RETURN {columns('Entity', 'n')} ORDER BY n.created_at, n.id",
                                   limit, offset)
        return await self._objects(group_id, "Entity", text, params)

    async def list_facts(
        self, group_id: str, *, filters: SearchFilters | None = None, limit: int | None = None, offset: int = 0
    ) -> list[Fact]:
        text, params = reads.list_facts(filters, limit, offset)
        facts: list[Fact] = await self._objects(group_id, "Fact", text, params)
        if filters is not None and filters.known_at is not None:
            return await self._as_known_at(group_id, facts, filters.known_at)
        return facts

    async def list_communities(self, group_id: str) -> list[Community]:
        text = f"MATCH (c:Community) RETURN {columns('Community', 'c')} ORDER BY c.created_at, c.id"
        return await self._objects(group_id, "Community", text, {})

    # -- lookups ---------------------------------------------------------------------------------

    async def find_entities_by_names(self, group_id: str, names: Sequence[str]) -> list[Entity]:
        wanted = sorted({normalize_name(n) for n in names} - {""})
        if not wanted:
            return []
        return await self._objects(group_id, "Entity", reads.ENTITIES_BY_NAMES, {"names": wanted})

    async def facts_between(self, group_id: str, a: str, b: str, *, include_superseded: bool = False) -> list[Fact]:
        text, params = reads.facts_between(a, b, include_superseded)
        return await self._objects(group_id, "Fact", text, params)

    async def facts_of_entities(
        self, group_id: str, entity_ids: Sequence[str], *, include_superseded: bool = False
    ) -> list[Fact]:
        if not entity_ids:
            return []
        text, params = reads.facts_of_entities(list(dict.fromkeys(entity_ids)), include_superseded)
        return await self._objects(group_id, "Fact", text, params)

    async def facts_of_episode(self, group_id: str, episode_id: str) -> list[Fact]:
        text = (f"MATCH (f:Fact) WHERE $episode IN f.episode_ids RETURN {columns('Fact', 'f')} "
                "ORDER BY f.created_at, f.id")
        return await self._objects(group_id, "Fact", text, {"episode": episode_id})

    async def entities_of_episodes(self, group_id: str, episode_ids: Sequence[str]) -> dict[str, list[str]]:
        return await self._mentions(group_id, "episode_id", "entity_id", episode_ids)

    async def episodes_of_entities(self, group_id: str, entity_ids: Sequence[str]) -> dict[str, list[str]]:
        return await self._mentions(group_id, "entity_id", "episode_id", entity_ids)

    async def entities_of_facts(self, group_id: str, fact_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        if not fact_ids:
            return {}
        text = "UNWIND $ids AS x MATCH (f:Fact {id: x}) RETURN f.id, f.source_id, f.target_id, f.other_entity_ids"
        rows = await self._read(group_id, text, {"ids": list(dict.fromkeys(fact_ids))})
        return {id_: (source, target, *(others or ())) for id_, source, target, others in rows}

    async def _mentions(self, group_id: str, by: str, other: str, ids: Sequence[str]) -> dict[str, list[str]]:
        if not ids:
            return {}
        text = (f"UNWIND $ids AS x MATCH (m:Mention {{{by}: x}}) WITH x, m.{other} AS y ORDER BY y "
                "RETURN x, collect(y)")
        rows = await self._read(group_id, text, {"ids": list(dict.fromkeys(ids))})
        return {x: ys for x, ys in rows}

    async def entity_edges(self, group_id: str) -> tuple[list[str], list[WeightedEdge]]:
        ids = [row[0] for row in await self._read(group_id, "MATCH (n:Entity) RETURN n.id ORDER BY n.id")]
        rows = await self._read(group_id, reads.CURRENT_PAIRS, {"now": to_micros(reads.now())})
        return ids, reads.weighted_edges(rows, set(ids))

    # -- search ----------------------------------------------------------------------------------

    async def fulltext_search(
        self, group_id: str, scope: Scope, query: str, *, limit: int = 10, filters: SearchFilters | None = None
    ) -> list[ScoredId]:
        hits = await reads.fulltext_search(self._read, group_id, scope, query, limit, filters, self._common_words)
        return [ScoredId(h.id, h.score + FULLTEXT_SCORE_FLOOR) for h in hits]

    async def vector_search(
        self,
        group_id: str,
        scope: Scope,
        vector: np.ndarray,
        *,
        limit: int = 10,
        filters: SearchFilters | None = None,
        min_score: float | None = None,
    ) -> list[ScoredId]:
        key = self._keys.graph(group_id)

        async def indexed(prop: str) -> bool:
            return await self._schema.has_range_index(key, LABELS[scope], prop)

        return await reads.vector_search(self._read, group_id, scope, vector, limit, filters, min_score, indexed)

    async def bfs(
        self,
        group_id: str,
        seed_entity_ids: Sequence[str],
        *,
        max_hops: int = 2,
        seed_episode_ids: Sequence[str] = (),
        filters: SearchFilters | None = None,
        limit: int | None = None,
    ) -> BfsResult:
        seeds_from_episodes: list[str] = []
        if seed_episode_ids and max_hops >= 1:
            mentioned = await self.entities_of_episodes(group_id, seed_episode_ids)
            seeds_from_episodes = [e for ids in mentioned.values() for e in ids]
        return await reads.bfs(self._read, group_id, list(seed_entity_ids), seeds_from_episodes, max_hops, filters,
                               limit)
