"""HTTP request and response models, named after Zep's v3 API where it has a name for the thing.

They are separate from the domain models on purpose: the wire format can keep its names (``uuid``,
``fact_name``, ``source_node_uuid``) and its limits while the library evolves. Conversions from
domain objects are the ``from_domain`` class methods; conversions to library calls live in the
routers. Every datetime must carry a timezone (a naive one is a 422).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationInfo, field_validator, model_validator

from chronomem.controlplane import GraphRecord, ThreadRecord, UserRecord
from chronomem.domain import Community, Entity, Episode, Fact, FactSource, FactVersion
from chronomem.filters import SearchFilters, TimeRange
from chronomem.service.limits import Identifier, JsonObject, StoredJson, check_json_document
from chronomem.timeutil import UTCDateTime

__all__ = [
    "AddEpisodeRequest",
    "AddEpisodeResponse",
    "AddFactRequest",
    "AddMessagesRequest",
    "AddMessagesResponse",
    "CommunityOut",
    "ContextResponse",
    "EntityOut",
    "EntityPage",
    "EntityUpdate",
    "EpisodeList",
    "EpisodeMetadataUpdate",
    "EpisodeOut",
    "EvidenceOut",
    "FactOut",
    "FactPage",
    "FactUpdate",
    "GraphCreate",
    "GraphList",
    "GraphOut",
    "Health",
    "LookupOut",
    "MessageIn",
    "MessageList",
    "MessageOut",
    "NeighborList",
    "NeighborOut",
    "Ready",
    "SearchFiltersIn",
    "SearchRequest",
    "SearchResponse",
    "SubgraphRequest",
    "SubgraphResponse",
    "SummaryResponse",
    "TaskEpisode",
    "TaskOut",
    "TemplateIn",
    "TemplateList",
    "TemplateOut",
    "ThreadCreate",
    "ThreadList",
    "ThreadOut",
    "TimeRangeIn",
    "UserCreate",
    "UserList",
    "UserOut",
    "UserUpdate",
]

Name = Identifier  # ids chosen by callers (the rule is in limits.py)
Short = Annotated[str, StringConstraints(max_length=256)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=50_000)]
Query = Annotated[str, StringConstraints(min_length=1, max_length=4_000)]
Metadata = JsonObject  # free-form JSON within the limits of limits.py


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


# In the schema too: each branch holds when its field is a string, so a null counts as absent.
_ONE_TARGET: dict[str, Any] = {"oneOf": [
    {"required": [name], "properties": {name: {"type": "string"}}} for name in ("user_id", "graph_id")
]}


class _Target(_In):
    """Exactly one of ``user_id`` (a user's graph) and ``graph_id`` (a named graph)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_ONE_TARGET)

    user_id: Name | None = None
    graph_id: Name | None = None

    @model_validator(mode="after")
    def _one_target(self) -> _Target:
        if (self.user_id is None) == (self.graph_id is None):
            raise ValueError("give exactly one of user_id and graph_id")
        return self


# -- users, graphs, threads --------------------------------------------------------------------------


class UserCreate(_In):
    user_id: Name
    email: Short | None = None
    first_name: Short | None = None
    last_name: Short | None = None
    metadata: Metadata = {}


class UserUpdate(_In):
    """The fields to change; a null email or name clears it, metadata is replaced whole."""

    email: Short | None = None
    first_name: Short | None = None
    last_name: Short | None = None
    metadata: Metadata | None = None

    @field_validator("metadata")
    @classmethod
    def _metadata_not_null(cls, metadata: dict[str, Any] | None) -> dict[str, Any]:
        if metadata is None:
            raise ValueError("metadata cannot be null: send {} to clear it")
        return metadata


class UserOut(BaseModel):
    user_id: str
    email: str | None
    first_name: str | None
    last_name: str | None
    metadata: StoredJson
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_record(cls, user: UserRecord) -> UserOut:
        return cls(
            user_id=user.user_id, email=user.email, first_name=user.first_name, last_name=user.last_name,
            metadata=user.metadata, created_at=user.created_at, updated_at=user.updated_at,
        )


class UserList(BaseModel):
    users: list[UserOut]
    total_count: int


class GraphCreate(_In):
    graph_id: Name
    name: Short = ""
    description: Annotated[str, StringConstraints(max_length=4_000)] = ""


class GraphOut(BaseModel):
    graph_id: str
    name: str
    description: str
    created_at: datetime

    @classmethod
    def from_record(cls, graph: GraphRecord) -> GraphOut:
        return cls(graph_id=graph.graph_id, name=graph.name, description=graph.description,
                   created_at=graph.created_at)


class GraphList(BaseModel):
    graphs: list[GraphOut]


class ThreadCreate(_In):
    thread_id: Name
    user_id: Name


class ThreadOut(BaseModel):
    thread_id: str
    user_id: str
    created_at: datetime

    @classmethod
    def from_record(cls, thread: ThreadRecord) -> ThreadOut:
        return cls(thread_id=thread.thread_id, user_id=thread.user_id, created_at=thread.created_at)


class ThreadList(BaseModel):
    threads: list[ThreadOut]


# -- messages ----------------------------------------------------------------------------------------


class MessageIn(_In):
    content: Text
    role: Annotated[str, StringConstraints(min_length=1, max_length=64)] = "user"
    name: Short | None = None  # the speaker's name; the role stands in when absent
    created_at: UTCDateTime | None = None  # when it was said (default: now)
    metadata: Metadata | None = None
    uuid: Name | None = None  # a client-chosen id makes re-sending the message a no-op


class AddMessagesRequest(_In):
    messages: Annotated[list[MessageIn], Field(min_length=1, max_length=100)]


class AddMessagesResponse(BaseModel):
    message_uuids: list[str]
    task_id: str


class MessageOut(BaseModel):
    uuid: str
    role: str | None
    name: str | None
    content: str
    created_at: datetime
    metadata: StoredJson
    processed: bool

    @classmethod
    def from_domain(cls, episode: Episode) -> MessageOut:
        return cls(
            uuid=episode.id, role=episode.role, name=episode.speaker, content=episode.content,
            created_at=episode.reference_time, metadata=episode.metadata,
            processed=episode.status.value in ("done", "unextracted"),
        )


class MessageList(BaseModel):
    messages: list[MessageOut]


class ContextResponse(BaseModel):
    context: str


# -- graph -------------------------------------------------------------------------------------------


class AddEpisodeRequest(_Target):
    type: Literal["text", "json", "message"] = "text"
    data: Text
    source_description: Short = ""
    created_at: UTCDateTime | None = None  # when it happened or was said (default: now)
    role: Short | None = None  # message episodes
    speaker: Short | None = None  # message episodes
    metadata: Metadata | None = None
    uuid: Name | None = None

    @field_validator("data")
    @classmethod
    def _json_within_limits(cls, data: str, info: ValidationInfo) -> str:
        if info.data.get("type") == "json":
            try:
                check_json_document(data)
            except ValueError as exc:
                raise ValueError(f"the data of a json episode: {exc}") from None
        return data


class EpisodeMetadataUpdate(_In):
    """Keys to merge onto an episode's metadata; a key set to null is removed. At most 10 keys
    after the merge, each value a string, number, boolean or array of those."""

    metadata: Metadata


class EpisodeOut(BaseModel):
    uuid: str
    type: str
    content: str
    speaker: str | None
    role: str | None
    created_at: datetime  # when it happened (the reference time)
    ingested_at: datetime
    source_description: str
    metadata: StoredJson
    status: str
    attempts: int
    error: str | None

    @classmethod
    def from_domain(cls, episode: Episode) -> EpisodeOut:
        return cls(
            uuid=episode.id, type=episode.kind.value, content=episode.content, speaker=episode.speaker,
            role=episode.role, created_at=episode.reference_time, ingested_at=episode.created_at,
            source_description=episode.source_description, metadata=episode.metadata,
            status=episode.status.value, attempts=episode.attempts, error=episode.last_error,
        )


class EpisodeList(BaseModel):
    episodes: list[EpisodeOut]


class AddEpisodeResponse(BaseModel):
    episode: EpisodeOut
    task_id: str


class FactSourceIn(_In):
    """A named source outside the episodes: where (``crm``, ``handbook.md``) and which part of it."""

    name: Name
    reference: Short = ""

    def to_domain(self) -> FactSource:
        return FactSource(name=self.name, reference=self.reference)


class _Cited(_In):
    """A fact's source: an episode of the graph (``source_episode_uuid``) or a named ``source``."""

    source_episode_uuid: Name | None = None
    source: FactSourceIn | None = None

    @model_validator(mode="after")
    def _one_source(self) -> _Cited:
        if self.source_episode_uuid is not None and self.source is not None:
            raise ValueError("give at most one of source_episode_uuid and source")
        return self

    def provenance(self) -> str | FactSource | None:
        return self.source.to_domain() if self.source is not None else self.source_episode_uuid


class AddFactRequest(_Target, _Cited):
    """A fact triple: two entities (found by name, created if new) and the fact between them;
    ``other_node_names`` are further participants of a fact over three or more (a hyperedge)."""

    source_node_name: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    target_node_name: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    other_node_names: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=512)]], Field(max_length=16)
    ] = []
    fact_name: Annotated[str, StringConstraints(min_length=1, max_length=128)]  # relation, e.g. WORKS_AT
    fact: Text
    valid_at: UTCDateTime | None = None
    invalid_at: UTCDateTime | None = None

    @model_validator(mode="after")
    def _ordered(self) -> AddFactRequest:
        if self.valid_at and self.invalid_at and self.invalid_at < self.valid_at:
            raise ValueError("invalid_at is before valid_at")
        return self


class FactSourceOut(BaseModel):
    name: str
    reference: str


class EvidenceOut(BaseModel):
    """Where an episode states the fact: ``episode.text[start:end]`` (character offsets)."""

    episode_uuid: str
    start: int
    end: int


class FactOut(BaseModel):
    uuid: str
    name: str  # the relation type
    fact: str
    source_node_uuid: str
    target_node_uuid: str
    other_node_uuids: list[str] = []  # further participants of a hyperedge
    episodes: list[str]
    sources: list[FactSourceOut] = []  # provenance outside the episodes
    evidence: list[EvidenceOut] = []
    attributes: StoredJson
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    version: int = 1
    recorded_at: datetime | None = None  # since when our records hold this version
    score: float | None = None

    @classmethod
    def from_domain(cls, fact: Fact, score: float | None = None) -> FactOut:
        return cls(
            uuid=fact.id, name=fact.relation_type, fact=fact.fact, source_node_uuid=fact.source_id,
            target_node_uuid=fact.target_id, other_node_uuids=list(fact.other_entity_ids),
            episodes=list(fact.episode_ids),
            sources=[FactSourceOut(name=s.name, reference=s.reference) for s in fact.sources],
            evidence=[EvidenceOut(episode_uuid=s.episode_id, start=s.start, end=s.end) for s in fact.evidence],
            attributes=fact.attributes, valid_at=fact.valid_at, invalid_at=fact.invalid_at,
            created_at=fact.created_at, expired_at=fact.expired_at, version=fact.version,
            recorded_at=fact.recorded_at, score=score,
        )


class FactVersionOut(BaseModel):
    """One version of a fact and the interval of our records' time in which it was held."""

    recorded_from: datetime
    recorded_to: datetime | None  # null: the latest version
    fact: FactOut


class FactHistory(BaseModel):
    versions: list[FactVersionOut]  # oldest first

    @classmethod
    def from_domain(cls, versions: list[FactVersion]) -> FactHistory:
        return cls(versions=[
            FactVersionOut(recorded_from=v.recorded_from, recorded_to=v.recorded_to, fact=FactOut.from_domain(v.fact))
            for v in versions
        ])


class EntityOut(BaseModel):
    uuid: str
    name: str
    labels: list[str]
    summary: str
    summary_source: str = Field(
        "", description="who wrote the summary: 'model', 'graph' (built from facts and mention sentences, "
        "without a model), 'edit' (by hand), or '' (none yet)")
    attributes: StoredJson
    created_at: datetime
    score: float | None = None

    @classmethod
    def from_domain(cls, entity: Entity, score: float | None = None) -> EntityOut:
        return cls(
            uuid=entity.id, name=entity.name, labels=list(entity.labels), summary=entity.summary,
            summary_source=entity.summary_source, attributes=entity.attributes, created_at=entity.created_at,
            score=score,
        )


class EntityPage(BaseModel):
    entities: list[EntityOut]
    next_cursor: str | None  # pass it back as ``cursor`` for the next page; null on the last one


class FactPage(BaseModel):
    facts: list[FactOut]
    next_cursor: str | None


class EntityUpdate(_In):
    """A hand edit of an entity (recorded as an edit episode that mentions it)."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = None
    summary: Annotated[str, StringConstraints(max_length=10_000)] | None = None
    labels: Annotated[list[Short], Field(min_length=1, max_length=20)] | None = None
    attributes: Metadata | None = None


class FactUpdate(_Cited):
    """A change of a fact: its text, validity, relation type or attributes (fields left out keep
    their value). A correction of text or dates may cite a source; a change of relation type or
    attributes is cited by the edit episode it records."""

    fact: Text | None = None
    relation_type: Annotated[str, StringConstraints(min_length=1, max_length=128)] | None = None
    valid_at: UTCDateTime | None = None
    invalid_at: UTCDateTime | None = None
    attributes: Metadata | None = None


class TemplateIn(_In):
    template_id: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    template: Annotated[str, StringConstraints(min_length=1, max_length=1_200)]


class TemplateOut(BaseModel):
    template_id: str
    template: str
    updated_at: datetime


class TemplateList(BaseModel):
    templates: list[TemplateOut]


class SummaryResponse(BaseModel):
    summary: str


class CommunityOut(BaseModel):
    uuid: str
    name: str
    summary: str
    score: float | None = None

    @classmethod
    def from_domain(cls, community: Community, score: float | None = None) -> CommunityOut:
        return cls(uuid=community.id, name=community.name, summary=community.summary, score=score)


# -- search ------------------------------------------------------------------------------------------


class TimeRangeIn(_In):
    start: UTCDateTime | None = None
    end: UTCDateTime | None = None
    include_null: bool = False

    @model_validator(mode="after")
    def _ordered(self) -> TimeRangeIn:
        if self.start and self.end and self.end < self.start:
            raise ValueError("time range end is before its start")
        return self

    def to_domain(self) -> TimeRange:
        return TimeRange(start=self.start, end=self.end, include_null=self.include_null)


class SearchFiltersIn(_In):
    labels: Annotated[list[Short], Field(max_length=50)] | None = None
    relation_types: Annotated[list[Short], Field(max_length=50)] | None = None
    valid_at: TimeRangeIn | None = None
    invalid_at: TimeRangeIn | None = None
    created_at: TimeRangeIn | None = None
    expired_at: TimeRangeIn | None = None
    as_of: UTCDateTime | None = None  # facts true in the world at this time
    known_at: UTCDateTime | None = None  # facts our database held at this time
    include_superseded: bool = False

    def to_domain(self) -> SearchFilters:
        ranges = {
            name: getattr(self, name).to_domain()
            for name in ("valid_at", "invalid_at", "created_at", "expired_at")
            if getattr(self, name) is not None
        }
        return SearchFilters(
            labels=tuple(self.labels) if self.labels is not None else None,
            relation_types=tuple(self.relation_types) if self.relation_types is not None else None,
            as_of=self.as_of, known_at=self.known_at, include_superseded=self.include_superseded, **ranges,
        )


SearchScope = Literal["facts", "entities", "episodes", "communities", "edges", "nodes"]
SearchReranker = Literal["rrf", "mmr", "episode_mentions", "node_distance", "cross_encoder"]


class SearchRequest(_Target):
    query: Query
    scopes: Annotated[list[SearchScope], Field(min_length=1, max_length=4)] = ["facts"]
    reranker: SearchReranker = "rrf"
    limit: Annotated[int, Field(ge=1, le=100)] = 10
    mmr_lambda: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5
    center_node_uuid: Name | None = None  # for the node_distance reranker
    filters: SearchFiltersIn | None = None

    @model_validator(mode="after")
    def _center_for_distance(self) -> SearchRequest:
        if self.reranker == "node_distance" and self.center_node_uuid is None:
            raise ValueError("the node_distance reranker needs center_node_uuid")
        return self


class NeighborOut(BaseModel):
    """An entity one fact away, and the current facts that join them (oldest first)."""

    entity: EntityOut
    facts: list[FactOut]


class NeighborList(BaseModel):
    neighbors: list[NeighborOut]


class SubgraphRequest(_Target):
    """The entities within ``depth`` facts of the seeds, and the current facts among them."""

    seed_entity_uuids: Annotated[list[Name], Field(min_length=1, max_length=100)]
    depth: Annotated[int, Field(ge=0, le=5)] = 1
    max_entities: Annotated[int, Field(ge=1, le=1_000)] = 100
    max_facts: Annotated[int, Field(ge=1, le=5_000)] = 500
    direction: Literal["in", "out", "both"] = "both"


class SubgraphResponse(BaseModel):
    entities: list[EntityOut]
    facts: list[FactOut]
    truncated: bool  # a bound (max_entities, max_facts) cut the walk
    truncation_reason: Literal["max_nodes", "max_edges"] | None = None


class LookupOut(BaseModel):
    """What a UUID (Zep v4's address of a user, graph or thread) names in this API."""

    kind: Literal["user", "graph", "thread"]
    uuid: str
    user_id: str | None = None  # a user, or a thread's user
    graph_id: str | None = None
    thread_id: str | None = None


class SearchResponse(BaseModel):
    facts: list[FactOut] = []
    entities: list[EntityOut] = []
    episodes: list[EpisodeOut] = []
    communities: list[CommunityOut] = []


# -- tasks and probes --------------------------------------------------------------------------------


class TaskEpisode(BaseModel):
    uuid: str
    status: str
    attempts: int
    error: str | None


class TaskOut(BaseModel):
    task_id: str
    status: Literal["pending", "processing", "done", "failed"]
    attempts: int
    error: str | None
    created_at: datetime
    episodes: list[TaskEpisode]


class Health(BaseModel):
    status: Literal["ok"] = "ok"


class Ready(BaseModel):
    status: Literal["ready", "not_ready"]
    store: bool
    workers: Literal["running", "stopped", "external"]
    model: str = Field(description="the language model, or 'heuristic (a rule-based stand-in, not an LLM)'")
