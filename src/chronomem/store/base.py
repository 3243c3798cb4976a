"""The store port: the graph, its indexes and the ingestion queue (docs/design.md §5).

Every method takes one ``group_id``: a group is one graph and never sees another's data. Group ids
and query texts are arbitrary strings (UUIDs, quotes, unicode, full-text operators); a backend
passes them as parameters and escapes them, never splices them into query text.

Embeddings are unit-normalized float32 vectors; they travel in :class:`GraphWrite` beside the domain
objects and come back through :meth:`GraphReader.get_vectors`. Scores are "higher is better": cosine
similarity for vector search, a positive relevance (BM25 where the engine has it) for full text.

The port is split into roles sized to their consumers; :class:`Store` is their union, and what a
backend implements::

    GroupAdmin      close, list_groups, delete_group, stats                  service, CLI
    EpisodeReader   get_episodes, list_episodes                              (shared by the two below)
    EpisodeQueue    + insert_episode, set_episode_status, set_episode_metadata, ingestion, worker pool,
                      reset_processing, pending_groups, queue_depth           episode edits, metrics
    GraphReader     + objects by id, listings, lookups, entity_edges         resolution, search, communities
    GraphWriter     write                                                    ingestion, communities, removal
    BulkLoader      bulk_load                                                import, benchmarks
    SearchIndex     fulltext_search, vector_search, bfs                      search
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from chronomem.domain import Community, Entity, Episode, EpisodeStatus, EvidenceSpan, Fact, FactVersion, Mention
from chronomem.filters import SearchFilters

__all__ = [
    "BfsResult",
    "BulkLoader",
    "EpisodeQueue",
    "EpisodeReader",
    "GraphReader",
    "GraphWrite",
    "GraphWriter",
    "GroupAdmin",
    "GroupStats",
    "QueueDepth",
    "Scope",
    "ScoredId",
    "SearchIndex",
    "Store",
    "WeightedEdge",
    "fact_attributes_column",
    "split_fact_attributes",
]


class Scope(StrEnum):
    FACTS = "facts"
    ENTITIES = "entities"
    EPISODES = "episodes"
    COMMUNITIES = "communities"


class ScoredId(NamedTuple):
    id: str
    score: float


class WeightedEdge(NamedTuple):
    """Two entities and the number of current facts between them (either direction)."""

    a: str
    b: str
    weight: int


@dataclass(frozen=True, slots=True)
class BfsResult:
    """Breadth-first expansion: hop distance of every reached entity and of every traversed fact."""

    entities: dict[str, int]
    facts: dict[str, int]


@dataclass(frozen=True, slots=True)
class GroupStats:
    episodes: int
    entities: int
    facts: int
    current_facts: int
    communities: int


@dataclass(frozen=True, slots=True)
class QueueDepth:
    """The episodes in one state of the ingestion queue: how many, and when the oldest was ingested."""

    episodes: int
    oldest_created_at: datetime


@dataclass(slots=True)
class GraphWrite:
    """One atomic write to one group: everything lands, or nothing does.

    Objects are upserted by id. A fact is versioned (``chronomem.store.history.revise``): re-sent
    with a change to what it says (text, participants, attributes, timestamps) it becomes a new
    version and the stored one is kept in its history; re-sent with new provenance only, its latest
    version is updated in place. An episode re-sent keeps the metadata stored with it (only
    :meth:`EpisodeQueue.set_episode_metadata` changes that). Deletions run before upserts. A
    deleted entity takes its mentions, its vector and its community memberships with it; a deleted
    episode its mentions (facts keep other provenance: the caller rewrites or deletes them
    explicitly). ``replace_communities`` drops every community of the group not in
    ``communities``.

    ``fact_history`` restores earlier versions as they were (an import, :mod:`chronomem.archive`):
    each belongs to a fact of ``facts`` that the group does not hold yet, which is then written
    as given, and with it forms the fact's whole history (``chronomem.store.history.check_restored``);
    anything else is refused (``InvalidInputError``) and nothing is written.
    """

    group_id: str
    episodes: list[Episode] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    communities: list[Community] = field(default_factory=list)
    fact_history: list[FactVersion] = field(default_factory=list)
    entity_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    fact_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    community_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    episode_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    delete_episode_ids: list[str] = field(default_factory=list)
    delete_entity_ids: list[str] = field(default_factory=list)
    delete_fact_ids: list[str] = field(default_factory=list)
    delete_community_ids: list[str] = field(default_factory=list)
    delete_mentions: list[Mention] = field(default_factory=list)
    replace_communities: bool = False

    def is_empty(self) -> bool:
        return not any(
            (
                self.episodes, self.entities, self.facts, self.mentions, self.communities, self.fact_history,
                self.entity_vectors, self.fact_vectors, self.community_vectors, self.episode_vectors,
                self.delete_episode_ids, self.delete_entity_ids, self.delete_fact_ids,
                self.delete_community_ids, self.delete_mentions, self.replace_communities,
            )
        )


@runtime_checkable
class GroupAdmin(Protocol):
    """Groups as wholes: listing, counting and deleting them, and releasing the store."""

    async def close(self) -> None:
        """Release connections and background resources. Idempotent."""

    async def list_groups(self) -> list[str]:
        """Every group that holds at least one object, sorted."""

    async def delete_group(self, group_id: str) -> None:
        """Remove a group and everything in it. Unknown groups are a no-op."""

    async def stats(self, group_id: str) -> GroupStats:
        """Object counts of one group."""


@runtime_checkable
class EpisodeReader(Protocol):
    """Episodes by id and in time order: what the queue's consumers and the graph's readers both need."""

    async def get_episodes(self, group_id: str, ids: Sequence[str]) -> list[Episode]:
        """The episodes with these ids, in the order given; unknown ids are skipped."""

    async def list_episodes(
        self,
        group_id: str,
        *,
        limit: int | None = None,
        before: datetime | None = None,
        statuses: Sequence[EpisodeStatus] | None = None,
        newest_first: bool = True,
    ) -> list[Episode]:
        """Episodes ordered by (reference_time, created_at, id); ``before`` keeps those whose
        reference_time is strictly earlier."""


@runtime_checkable
class EpisodeQueue(EpisodeReader, Protocol):
    """The durable ingestion queue: an episode's ``status`` is its place in it (``pending`` →
    ``processing`` → ``done``/``unextracted``/``failed``). Used by the ingestion pipeline and the worker pool."""

    async def insert_episode(self, episode: Episode) -> tuple[Episode, bool]:
        """Store an episode unless one with its id exists in its group.

        Returns the stored episode and whether it was inserted now (re-adding an id is a no-op that
        returns the original). Durable on return.
        """

    async def set_episode_status(
        self, group_id: str, episode_id: str, status: EpisodeStatus, *, error: str | None = None
    ) -> Episode:
        """Move an episode through the queue. Entering ``processing`` counts an attempt; ``error``
        is recorded as ``last_error`` (cleared on ``done``). Raises ``NotFoundError``."""

    async def set_episode_metadata(self, group_id: str, episode_id: str, metadata: dict[str, Any]) -> Episode:
        """Replace an episode's metadata whole (its text stays as it was: the root of provenance)
        and return the episode as stored. This is the only way stored metadata changes: ``write``
        re-sending a stored episode (a worker finishing it) keeps the metadata it holds. Raises
        ``NotFoundError``; ``InvalidInputError`` for metadata that is not JSON."""

    async def reset_processing(self) -> int:
        """Return every ``processing`` episode of every group to ``pending`` (crash recovery at
        start-up); returns how many. Called by the process that starts consuming the queue; a store
        whose queue takes one consumer process (SQLite) raises ``StoreError`` while another has it."""

    async def pending_groups(self) -> list[str]:
        """Groups with at least one ``pending`` episode."""

    async def queue_depth(self) -> dict[EpisodeStatus, QueueDepth]:
        """The queue across every group: for ``pending`` and ``processing``, how many episodes are
        in that state and the oldest one's ``created_at`` (a state no episode is in is left out)."""


@runtime_checkable
class GraphReader(EpisodeReader, Protocol):
    """Reads of the graph: objects by id, listings, and the lookups resolution, provenance and
    communities rely on."""

    async def get_entities(self, group_id: str, ids: Sequence[str]) -> list[Entity]:
        """The entities with these ids, in the order given; unknown ids are skipped."""

    async def get_facts(self, group_id: str, ids: Sequence[str], *, known_at: datetime | None = None) -> list[Fact]:
        """The facts with these ids, in the order given; unknown ids are skipped. With ``known_at``,
        each fact as our records held it then (its version in force at that time); facts recorded
        later are skipped too."""

    async def get_communities(self, group_id: str, ids: Sequence[str]) -> list[Community]:
        """The communities with these ids, in the order given; unknown ids are skipped."""

    async def get_vectors(self, group_id: str, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored embeddings (of any scope) of these ids; ids without one are absent."""

    async def list_entities(self, group_id: str, *, limit: int | None = None, offset: int = 0) -> list[Entity]:
        """Entities ordered by (created_at, id)."""

    async def list_facts(
        self,
        group_id: str,
        *,
        filters: SearchFilters | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Fact]:
        """Facts matching ``filters`` (``None`` = every fact, superseded included), ordered by
        (created_at, id)."""

    async def list_communities(self, group_id: str) -> list[Community]:
        """Every community of the group."""

    async def find_entities_by_names(self, group_id: str, names: Sequence[str]) -> list[Entity]:
        """Entities whose name or an alias has the same :func:`normalize_name` form as one of
        ``names``."""

    async def facts_between(
        self, group_id: str, a: str, b: str, *, include_superseded: bool = False
    ) -> list[Fact]:
        """Facts whose source and target are ``a`` and ``b`` in either direction."""

    async def facts_of_entities(
        self, group_id: str, entity_ids: Sequence[str], *, include_superseded: bool = False
    ) -> list[Fact]:
        """Facts with any of ``entity_ids`` as source, target or further participant."""

    async def facts_of_episode(self, group_id: str, episode_id: str) -> list[Fact]:
        """Facts that cite the episode in their provenance."""

    async def entities_of_episodes(self, group_id: str, episode_ids: Sequence[str]) -> dict[str, list[str]]:
        """Episode id → ids of the entities it mentions."""

    async def entities_of_facts(self, group_id: str, fact_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Fact id → ``Fact.entity_ids`` (source, target, others), for the facts that exist; what
        BFS seeding needs, without loading whole facts."""

    async def episodes_of_entities(self, group_id: str, entity_ids: Sequence[str]) -> dict[str, list[str]]:
        """Entity id → ids of the episodes that mention it (its mention count is the length)."""

    async def entity_edges(self, group_id: str) -> tuple[list[str], list[WeightedEdge]]:
        """All entity ids and the weighted edges between them (current facts), in one pass."""

    async def fact_history(self, group_id: str, fact_id: str) -> list[FactVersion]:
        """Every version of a fact, oldest first, each with the interval of T' in which our records
        held it; the last is the latest (``recorded_to`` None). Empty for an unknown fact."""


@runtime_checkable
class GraphWriter(Protocol):
    """Atomic writes of the graph (objects, vectors, deletions)."""

    async def write(self, batch: GraphWrite) -> None:
        """Apply a :class:`GraphWrite` atomically. Objects of another group are refused
        (``InvalidInputError``) and nothing is written."""


@runtime_checkable
class BulkLoader(Protocol):
    """Many writes that fill a group at once (an import, a benchmark's group)."""

    def bulk_load(self, group_id: str) -> AbstractAsyncContextManager[None]:
        """A block for many :meth:`GraphWriter.write` calls to ``group_id``: the backend may defer
        index work for the group until the block ends, when it does it in one go and waits for it.
        Each write stays atomic and readable at once; only searches of the group may miss what the
        block wrote until the block has ended (its exit, error or not, completes the indexes)."""


@runtime_checkable
class SearchIndex(Protocol):
    """The search functions φ of the paper: full text, vector similarity and breadth-first expansion."""

    async def fulltext_search(
        self, group_id: str, scope: Scope, query: str, *, limit: int = 10, filters: SearchFilters | None = None
    ) -> list[ScoredId]:
        """Full-text (BM25 where available) over fact text, entity name and summary, episode content,
        community name and summary. Any query string is safe: operators are treated as text.
        ``filters=None`` means current facts only (for the facts scope)."""

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
        """Nearest neighbours by cosine similarity in one scope (facts, entities, episodes or
        communities); ``min_score`` drops weaker hits."""

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
        """Breadth-first expansion over facts matching ``filters`` (default: current) up to
        ``max_hops`` from the seeds. Seed entities are at hop 0; entities mentioned by seed episodes
        at hop 1. A fact's hop is the hop of the nearer endpoint plus one."""


@runtime_checkable
class Store(GroupAdmin, EpisodeQueue, GraphReader, GraphWriter, BulkLoader, SearchIndex, Protocol):
    """A graph store: every role at once (what a backend implements and ``open_store`` returns). All
    methods are coroutines; all of them are scoped to one group. Consumers are typed against the
    role(s) they use."""


# -- how backends keep a fact's evidence spans: in its attributes column, under a reserved key ---------

_EVIDENCE_KEY = "_evidence"


def fact_attributes_column(fact: Fact) -> dict[str, Any]:
    """What a backend stores in a fact's attributes column: the attributes, and its evidence spans."""
    if not fact.evidence:
        return fact.attributes
    spans = [[span.episode_id, span.start, span.end] for span in fact.evidence]
    return {**fact.attributes, _EVIDENCE_KEY: spans}


def split_fact_attributes(stored: dict[str, Any]) -> tuple[dict[str, Any], tuple[EvidenceSpan, ...]]:
    """The inverse of :func:`fact_attributes_column`: (attributes, evidence)."""
    if _EVIDENCE_KEY not in stored:
        return stored, ()
    attributes = {k: v for k, v in stored.items() if k != _EVIDENCE_KEY}
    # validated when the fact was built; facts are decoded by the dozen on every search
    spans = tuple(EvidenceSpan.model_construct(episode_id=e, start=a, end=b) for e, a, b in stored[_EVIDENCE_KEY])
    return attributes, spans
