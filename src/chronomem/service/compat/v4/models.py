"""The wire shapes of Zep's v4 routes, as the ``zep-cloud`` 4.x SDK sends and parses them.

Field names and enum values follow the SDK's own models (``zep_cloud.types``): every answer parses
with them. Addresses are UUIDs in their canonical form. Requests ignore fields they do not name (a
newer SDK may send more); a field they name that chronomem cannot honour is refused with 501 by the
route, never silently dropped.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StringConstraints

from chronomem.service.compat.models import EdgeTypeIn, EntityPropertyIn, EntityTypeIn, SourceTargetIn
from chronomem.service.limits import JsonObject

__all__ = [
    "AddEdgesIn",
    "AddEpisodeIn",
    "AddEpisodeOut",
    "AddHyperedgeIn",
    "AddMessageIn",
    "AddMessagesIn",
    "AddMessagesOut",
    "AddNodesIn",
    "AsyncResultOut",
    "BatchIn",
    "BatchItemIn",
    "BatchItemOut",
    "BatchItemsIn",
    "BatchItemsOut",
    "BatchOut",
    "BatchProgressOut",
    "ContextTemplateIn",
    "ContextTemplateOut",
    "DateFilterGroupIn",
    "DateFilterIn",
    "DateFiltersIn",
    "EdgeIn",
    "EdgeOut",
    "EdgeUpdateIn",
    "EpisodeOut",
    "EpisodeUpdateIn",
    "ErrorBodyOut",
    "ErrorOut",
    "GraphContextIn",
    "GraphContextOut",
    "GraphIn",
    "GraphOut",
    "GraphUpdateIn",
    "HyperedgeMemberIn",
    "HyperedgeMemberOut",
    "HyperedgeOut",
    "HyperedgeUpdateIn",
    "InstructionIn",
    "InstructionsIn",
    "InstructionsOut",
    "ListFiltersIn",
    "ListIn",
    "LookupIn",
    "MessageOut",
    "NeighborEntryOut",
    "NeighborsIn",
    "NodeIn",
    "NodeOut",
    "NodeRefIn",
    "NodeUpdateIn",
    "OntologyIn",
    "OntologyOut",
    "Page",
    "ProcessBatchOut",
    "PropertyIn",
    "RejectedItemOut",
    "SearchIn",
    "SearchTextIn",
    "SubgraphIn",
    "SubgraphOut",
    "TaskOut",
    "TemplateFilterIn",
    "ThreadContextOut",
    "ThreadIn",
    "ThreadOut",
    "ThreadSummaryOut",
    "TypeIn",
    "UserIn",
    "UserOut",
    "UserUpdateIn",
    "v2_types",
]

Id = Annotated[str, StringConstraints(min_length=1, max_length=500, pattern=r"^[^\x00-\x1f\x7f/]+$")]
Short = Annotated[str, StringConstraints(max_length=512)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=50_000)]
Query = Annotated[str, StringConstraints(min_length=1, max_length=4_000)]
Uuids = Annotated[list[Id], Field(max_length=256)]
RoleType = Literal["norole", "system", "assistant", "user", "function", "tool"]
TaskStatus = Literal["pending", "processing", "succeeded", "partial", "failed"]
T = TypeVar("T")


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Out(BaseModel):
    pass


# -- errors and pages --------------------------------------------------------------------------------


class ErrorBodyOut(_Out):
    code: str
    message: str
    param: str | None = None
    details: dict[str, Any] | None = None
    request_id: str | None = None


class ErrorOut(_Out):
    """Zep's v4 error (``zep_cloud.types.ApiError``)."""

    error: ErrorBodyOut


class Page(_Out, Generic[T]):
    """A cursor page: the SDK asks again with ``cursor=next_cursor`` while it is not empty."""

    items: list[T]
    next_cursor: str | None = None
    total_size: int | None = None


# -- tasks -------------------------------------------------------------------------------------------


class TaskOut(_Out):
    uuid: str
    type: str
    status: TaskStatus
    created_at: datetime
    updated_at: datetime | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    error: ErrorBodyOut | None = None
    result: dict[str, Any] | None = None


class AsyncResultOut(_Out):
    """What a delete (and any other asynchronous write) answers: its task."""

    task: TaskOut


# -- users, threads, graphs --------------------------------------------------------------------------


class UserIn(_In):
    user_id: Id | None = None
    email: Short | None = None
    first_name: Short | None = None
    last_name: Short | None = None
    metadata: JsonObject | None = None
    time_zone: Short | None = None
    disable_default_ontology: StrictBool | None = None
    content_policy: dict[str, Any] | None = None


class UserUpdateIn(_In):
    email: Short | None = None
    first_name: Short | None = None
    last_name: Short | None = None
    metadata: JsonObject | None = None
    time_zone: Short | None = None
    disable_default_ontology: StrictBool | None = None


class UserOut(_Out):
    uuid: str
    user_id: str | None = None
    graph_uuid: str
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    metadata: dict[str, Any] | None = None
    created_at: datetime
    updated_at: datetime | None = None


class SearchTextIn(_In):
    search: Short | None = None


class LookupIn(_In):
    user_id: Id | None = None
    thread_id: Id | None = None
    graph_id: Id | None = None


class ThreadIn(_In):
    user_uuid: Id


class ThreadOut(_Out):
    uuid: str
    thread_id: str | None = None
    user_uuid: str
    graph_uuid: str
    created_at: datetime
    updated_at: datetime | None = None


class GraphIn(_In):
    name: Short | None = None
    description: Annotated[str, StringConstraints(max_length=5_000)] | None = None
    time_zone: Short | None = None
    content_policy: dict[str, Any] | None = None


class GraphUpdateIn(_In):
    name: Short | None = None
    description: Annotated[str, StringConstraints(max_length=5_000)] | None = None
    time_zone: Short | None = None


class GraphOut(_Out):
    uuid: str
    graph_id: str | None = None
    type: Literal["user", "graph"]
    user_uuid: str | None = None
    name: str | None = None
    description: str | None = None
    created_at: datetime
    updated_at: datetime | None = None


# -- messages and episodes ---------------------------------------------------------------------------


class AddMessageIn(_In):
    content: Text
    role: RoleType | None = None
    name: Short | None = None
    reference_time: datetime | None = None
    metadata: JsonObject | None = None
    uuid: Id | None = None


class AddMessagesIn(_In):
    messages: Annotated[list[AddMessageIn], Field(min_length=1, max_length=100)]
    return_context: StrictBool | None = None
    ignore_roles: list[RoleType] | None = None
    strict_ontology: StrictBool | None = None


class MessageOut(_Out):
    uuid: str
    thread_uuid: str
    content: str
    role: RoleType | None = None
    name: str | None = None
    reference_time: datetime
    created_at: datetime
    metadata: dict[str, Any] | None = None
    processed: bool


class AddMessagesOut(_Out):
    messages: list[MessageOut]
    task: TaskOut
    context: str | None = None


class ThreadContextOut(_Out):
    context: str


class ThreadSummaryOut(_Out):
    uuid: str
    thread_uuid: str
    graph_uuid: str
    summary: str
    created_at: datetime | None = None
    last_summarized_at: datetime | None = None
    last_summarized_episode_valid_at: datetime | None = None
    score: float | None = None


class AddEpisodeIn(_In):
    data: Text
    type: Literal["text", "json", "message"]
    reference_time: datetime | None = None
    source_description: Short | None = None
    metadata: JsonObject | None = None
    document_id: Short | None = None
    strict_ontology: StrictBool | None = None


class EpisodeUpdateIn(_In):
    metadata: JsonObject | None = None


class EpisodeOut(_Out):
    uuid: str
    graph_uuid: str
    user_uuid: str | None = None
    thread_uuid: str | None = None
    content: str
    source: Literal["text", "json", "message"]
    source_description: str | None = None
    role: RoleType | None = None
    role_name: str | None = None
    reference_time: datetime
    created_at: datetime
    metadata: dict[str, Any] | None = None
    processed: bool
    score: float | None = None


class AddEpisodeOut(_Out):
    episode: EpisodeOut
    task: TaskOut


# -- the graph's nodes and edges ---------------------------------------------------------------------


class NodeOut(_Out):
    uuid: str
    graph_uuid: str
    user_uuid: str | None = None
    name: str
    summary: str | None = None
    labels: list[str]
    attributes: dict[str, Any] | None = None
    created_at: datetime
    episode_uuids: list[str]
    episode_uuids_truncated: bool = False
    score: float | None = None


class EdgeOut(_Out):
    uuid: str
    graph_uuid: str
    user_uuid: str | None = None
    name: str
    fact: str
    source_node_uuid: str
    target_node_uuid: str
    source_node_name: str | None = None
    target_node_name: str | None = None
    hyperedge_uuid: str | None = None
    episode_uuids: list[str]
    attributes: dict[str, Any] | None = None
    created_at: datetime
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    expired_at: datetime | None = None
    score: float | None = None


class NeighborEntryOut(_Out):
    node: NodeOut
    edges: list[EdgeOut]


class SubgraphOut(_Out):
    nodes: list[NodeOut]
    edges: list[EdgeOut]
    truncated: bool
    truncation_reason: str | None = None


class HyperedgeMemberOut(_Out):
    uuid: str
    name: str
    source_node_uuid: str
    target_node_uuid: str


class HyperedgeOut(_Out):
    uuid: str
    graph_uuid: str
    user_uuid: str | None = None
    fact: str
    edges: list[HyperedgeMemberOut]
    created_at: datetime
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    expired_at: datetime | None = None


class NodeRefIn(_In):
    uuid: Id | None = None
    name: Short | None = None
    labels: list[Short] | None = None
    summary: Short | None = None
    attributes: dict[str, Any] | None = None


class EdgeIn(_In):
    fact: Text
    fact_name: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    source_node: NodeRefIn
    target_node: NodeRefIn
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    expired_at: datetime | None = None
    attributes: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None


class AddEdgesIn(_In):
    edges: Annotated[list[EdgeIn], Field(min_length=1, max_length=100)]
    deduplicate: StrictBool | None = None


class NodeIn(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    label: Short | None = None
    summary: Annotated[str, StringConstraints(max_length=5_000)] | None = None
    attributes: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None


class AddNodesIn(_In):
    nodes: Annotated[list[NodeIn], Field(min_length=1, max_length=100)]


class HyperedgeMemberIn(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    source_node: NodeRefIn
    target_node: NodeRefIn


class AddHyperedgeIn(_In):
    fact: Text
    edges: Annotated[list[HyperedgeMemberIn], Field(min_length=1, max_length=50)]
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    expired_at: datetime | None = None
    attributes: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None


class EdgeUpdateIn(_In):
    fact: Text | None = None
    attributes: dict[str, Any] | None = None


class NodeUpdateIn(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = None
    summary: Annotated[str, StringConstraints(max_length=5_000)] | None = None
    attributes: dict[str, Any] | None = None


# -- filters, search and context ---------------------------------------------------------------------


class DateFilterIn(_In):
    field: Literal["created_at", "valid_at", "invalid_at", "expired_at"]
    operator: Literal["eq", "ne", "gt", "lt", "gte", "lte", "is_null", "is_not_null"]
    value: datetime | None = None


class DateFilterGroupIn(_In):
    all_of: Annotated[list[DateFilterIn], Field(max_length=10)] | None = None


class DateFiltersIn(_In):
    any_of: Annotated[list[DateFilterGroupIn], Field(max_length=10)] | None = None


class ListFiltersIn(_In):
    """The filters of a list or search body (edges, nodes, episodes; each reads what applies)."""

    node_labels: list[Short] | None = None
    edge_types: list[Short] | None = None
    exclude_node_labels: list[Short] | None = None
    exclude_edge_types: list[Short] | None = None
    date_filters: DateFiltersIn | None = None
    edge_uuids: Uuids | None = None
    episode_uuids: Uuids | None = None
    source_node_uuids: Uuids | None = None
    target_node_uuids: Uuids | None = None
    connected_node_uuids: Uuids | None = None
    mentioned_node_uuids: Uuids | None = None
    property_filters: list[dict[str, Any]] | None = None
    metadata_filters: dict[str, Any] | None = None
    content_policy_violated: StrictBool | None = None


class ListIn(_In):
    filters: ListFiltersIn | None = None


class SearchIn(_In):
    query: Query
    reranker: Literal["rrf", "mmr", "node_distance", "episode_mentions", "cross_encoder"] | None = None
    mmr_lambda: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    center_node_uuid: Id | None = None
    bfs_origin_node_uuids: Annotated[list[Id], Field(max_length=100)] | None = None
    filters: ListFiltersIn | None = None
    filter_low_quality_results: StrictBool | None = None


class GraphContextIn(_In):
    query: Query
    template_uuid: Id | None = None
    include_results: StrictBool | None = None
    max_characters: Annotated[StrictInt, Field(ge=1, le=1_000_000)] | None = None
    recency_bias: Any = None
    filters: ListFiltersIn | None = None


class GraphContextOut(_Out):
    context: str
    truncated: bool = False
    results: dict[str, Any] | None = None


class NeighborsIn(_In):
    direction: Literal["in", "out", "both", "incoming", "outgoing"] | None = None
    filters: ListFiltersIn | None = None


class SubgraphIn(_In):
    seed_node_uuids: Annotated[list[Id], Field(min_length=1, max_length=100)]
    depth: Annotated[StrictInt, Field(ge=0, le=5)] | None = None
    max_nodes: Annotated[StrictInt, Field(ge=1, le=1_000)] | None = None
    max_edges: Annotated[StrictInt, Field(ge=1, le=5_000)] | None = None
    direction: Literal["in", "out", "both", "incoming", "outgoing"] | None = None
    filters: ListFiltersIn | None = None


# -- ontology and context templates ------------------------------------------------------------------


class PropertyIn(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    type: Literal["text", "int", "float", "boolean"] = "text"
    description: Annotated[str, StringConstraints(max_length=1_000)] = ""


class TypeIn(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    description: Annotated[str, StringConstraints(max_length=2_000)] = ""
    properties: Annotated[list[PropertyIn], Field(max_length=20)] | None = None
    source_targets: Annotated[list[SourceTargetIn], Field(max_length=20)] | None = None


class OntologyIn(_In):
    entity_types: Annotated[list[TypeIn], Field(max_length=30)] | None = None
    edge_types: Annotated[list[TypeIn], Field(max_length=30)] | None = None
    entity_type_hierarchy: dict[str, Any] | None = None
    inherited: StrictBool | None = None


class OntologyOut(_Out):
    entity_types: list[dict[str, Any]]
    edge_types: list[dict[str, Any]]
    inherited: bool


def v2_types(ontology: OntologyIn) -> tuple[list[EntityTypeIn], list[EdgeTypeIn]]:
    """The v4 types in the v3 shape the shared ontology check reads (type names capitalised)."""

    def properties(t: TypeIn) -> list[EntityPropertyIn]:
        return [EntityPropertyIn(name=p.name, type=p.type.capitalize(), description=p.description)  # type: ignore[arg-type]
                for p in t.properties or ()]

    entities = [EntityTypeIn(name=t.name, description=t.description, properties=properties(t))
                for t in ontology.entity_types or ()]
    edges = [EdgeTypeIn(name=t.name, description=t.description, properties=properties(t),
                        source_targets=t.source_targets) for t in ontology.edge_types or ()]
    return entities, edges


class ContextTemplateIn(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    template: Annotated[str, StringConstraints(min_length=1, max_length=10_000)]


class TemplateFilterIn(_In):
    name: Short | None = None


class ContextTemplateOut(_Out):
    uuid: str
    name: str
    template: str
    created_at: datetime | None = None


# -- batches -----------------------------------------------------------------------------------------


class BatchIn(_In):
    metadata: JsonObject | None = None
    ignore_roles: list[RoleType] | None = None
    strict_ontology: StrictBool | None = None


class BatchItemIn(_In):
    type: Literal["graph_episode", "thread_message"]
    content: Annotated[str, StringConstraints(max_length=50_000)] | None = None  # a thread_message's
    data: Annotated[str, StringConstraints(max_length=50_000)] | None = None  # a graph_episode's
    data_type: Literal["text", "json", "message"] | None = None
    graph_uuid: Id | None = None
    user_uuid: Id | None = None
    thread_uuid: Id | None = None
    role: RoleType | None = None
    name: Short | None = None
    reference_time: datetime | None = None
    source_description: Short | None = None
    metadata: JsonObject | None = None
    document_id: Short | None = None


class BatchItemsIn(_In):
    items: Annotated[list[BatchItemIn], Field(min_length=1, max_length=1_000)]


class BatchProgressOut(_Out):
    total_items: int
    succeeded_items: int
    failed_items: int
    processing_items: int


class BatchOut(_Out):
    uuid: str
    status: Literal["draft", "queued", "processing", "succeeded", "partial", "failed"]
    metadata: dict[str, Any] | None = None
    created_at: datetime
    progress: BatchProgressOut


class BatchItemOut(_Out):
    uuid: str
    type: Literal["graph_episode", "thread_message"]
    sequence_index: int
    status: Literal["pending", "queued", "processing", "succeeded", "failed"]
    graph_uuid: str | None = None
    user_uuid: str | None = None
    thread_uuid: str | None = None
    episode_uuid: str | None = None
    created_at: datetime


class RejectedItemOut(_Out):
    index: int
    reason: str


class BatchItemsOut(_Out):
    items: list[BatchItemOut]
    rejected_items: list[RejectedItemOut]


class ProcessBatchOut(_Out):
    batch: BatchOut
    task: TaskOut


class InstructionIn(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    text: Annotated[str, StringConstraints(min_length=1, max_length=5_000)]


class InstructionsIn(_In):
    instructions: Annotated[list[InstructionIn], Field(max_length=50)] | None = None
    inherited: StrictBool | None = None


class InstructionsOut(_Out):
    instructions: list[InstructionIn]
    inherited: bool


class HyperedgeUpdateIn(_In):
    fact: Text
