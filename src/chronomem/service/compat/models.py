"""The wire shapes of Zep's v2 routes, as the ``zep-cloud`` 3.x SDK sends and parses them.

Field names, optionality and enum values follow the SDK's own models (``zep_cloud.types``), so the
SDK's pydantic models parse every answer. Requests ignore fields they do not name (a newer SDK may
send more); a field they name but chronomem cannot honour is refused with 501 by the route (see
:func:`chronomem.service.compat.errors.refuse_unsupported`), never silently dropped.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from chronomem.service.limits import JsonObject, StoredJson

__all__ = [
    "AddDataBatchRequest",
    "AddDataRequest",
    "AddMessagesRequest",
    "AddMessagesResponse",
    "AddTripleRequest",
    "AddTripleResponse",
    "ApiErrorBody",
    "CloneGraphRequest",
    "CloneGraphResponse",
    "ContextTemplateIn",
    "ContextTemplateOut",
    "ContextTemplateUpdate",
    "ContextTemplatesOut",
    "CreateGraphRequest",
    "DateFilterIn",
    "DeleteInstructionsRequest",
    "EdgeOut",
    "EdgeTypeIn",
    "EntityPropertyIn",
    "EntityTypeIn",
    "EntityTypesOut",
    "EpisodeDataIn",
    "EpisodeMentionsOut",
    "EpisodeOut",
    "EpisodesOut",
    "GraphListOut",
    "GraphOut",
    "InstructionsIn",
    "InstructionsOut",
    "ListRequest",
    "MessageIn",
    "MessageListOut",
    "MessageOut",
    "NodeOut",
    "SearchFiltersIn",
    "SearchRequest",
    "SearchResultsOut",
    "SetEntityTypesRequest",
    "SuccessOut",
    "TaskErrorOut",
    "TaskOut",
    "ThreadContextOut",
    "ThreadCreateIn",
    "ThreadListOut",
    "ThreadOut",
    "ThreadSummaryOut",
    "UpdateEdgeRequest",
    "UpdateGraphRequest",
    "UpdateNodeRequest",
    "UserCreateIn",
    "UserInstructionIn",
    "UserListOut",
    "UserNodeOut",
    "UserOut",
    "UserUpdateIn",
]

Id = Annotated[str, StringConstraints(min_length=1, max_length=256, pattern=r"^[^\x00-\x1f\x7f]+$")]
Short = Annotated[str, StringConstraints(max_length=512)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=50_000)]
Metadata = JsonObject  # free-form JSON within the limits of service/limits.py
RoleType = Literal["norole", "system", "assistant", "user", "function", "tool"]
DataType = Literal["text", "json", "message"]
SearchScope = Literal["edges", "nodes", "episodes", "thread_summaries", "observations", "auto"]
Reranker = Literal["rrf", "mmr", "node_distance", "episode_mentions", "cross_encoder"]
Operator = Literal["=", "<>", ">", "<", ">=", "<=", "IS NULL", "is_null", "IS NOT NULL", "CONTAINS"]


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Out(BaseModel):
    pass


class ApiErrorBody(_Out):
    """Zep's error body (``zep_cloud.types.ApiError``)."""

    message: str


class SuccessOut(_Out):
    message: str = "ok"


# -- users -------------------------------------------------------------------------------------------


class UserCreateIn(_In):
    user_id: Id
    email: Short | None = None
    first_name: Short | None = None
    last_name: Short | None = None
    metadata: Metadata | None = None
    time_zone: Short | None = None
    disable_default_ontology: bool | None = None


class UserUpdateIn(_In):
    email: Short | None = None
    first_name: Short | None = None
    last_name: Short | None = None
    metadata: Metadata | None = None
    time_zone: Short | None = None
    disable_default_ontology: bool | None = None


class UserOut(_Out):
    uuid: str
    user_id: str
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    metadata: StoredJson | None = None
    created_at: datetime
    updated_at: datetime
    graph_uuid: str
    project_uuid: str


class UserListOut(_Out):
    users: list[UserOut]
    total_count: int
    row_count: int


class UserNodeOut(_Out):
    node: NodeOut | None = None


class UserInstructionIn(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    text: Annotated[str, StringConstraints(min_length=1, max_length=5_000)]


class InstructionsIn(_In):
    instructions: Annotated[list[UserInstructionIn], Field(min_length=1, max_length=50)]
    user_ids: Annotated[list[Id], Field(max_length=100)] | None = None


class DeleteInstructionsRequest(_In):
    instruction_names: Annotated[list[Short], Field(max_length=100)] | None = None
    user_ids: Annotated[list[Id], Field(max_length=100)] | None = None


class InstructionsOut(_Out):
    instructions: list[UserInstructionIn]


# -- threads and messages ----------------------------------------------------------------------------


class ThreadCreateIn(_In):
    thread_id: Id
    user_id: Id


class ThreadOut(_Out):
    uuid: str
    thread_id: str
    user_id: str
    user_uuid: str
    graph_uuid: str
    project_uuid: str
    created_at: datetime


class ThreadListOut(_Out):
    threads: list[ThreadOut]
    total_count: int
    response_count: int


class MessageIn(_In):
    content: Text
    role: RoleType
    name: Short | None = None
    created_at: datetime | None = None
    metadata: Metadata | None = None
    uuid: Id | None = None


class AddMessagesRequest(_In):
    messages: Annotated[list[MessageIn], Field(min_length=1, max_length=100)]
    return_context: bool | None = None
    ignore_roles: list[RoleType] | None = None
    strict_ontology: bool | None = None


class AddMessagesResponse(_Out):
    message_uuids: list[str]
    task_id: str
    context: str | None = None


class MessageOut(_Out):
    uuid: str
    content: str
    role: RoleType
    name: str | None = None
    created_at: datetime
    metadata: StoredJson | None = None
    processed: bool


class MessageListOut(_Out):
    messages: list[MessageOut]
    row_count: int
    total_count: int
    thread_created_at: datetime
    user_id: str


class ThreadContextOut(_Out):
    context: str


class ThreadSummaryOut(_Out):
    thread_id: str
    summary: str
    created_at: datetime | None = None
    last_summarized_at: datetime | None = None
    last_summarized_episode_valid_at: datetime | None = None


# -- graphs ------------------------------------------------------------------------------------------


class CreateGraphRequest(_In):
    graph_id: Id
    name: Short | None = None
    description: Annotated[str, StringConstraints(max_length=4_000)] | None = None
    time_zone: Short | None = None


class UpdateGraphRequest(_In):
    name: Short | None = None
    description: Annotated[str, StringConstraints(max_length=4_000)] | None = None
    time_zone: Short | None = None


class GraphOut(_Out):
    uuid: str
    graph_id: str
    name: str
    description: str
    created_at: datetime
    project_uuid: str


class GraphListOut(_Out):
    graphs: list[GraphOut]
    page_number: int
    page_size: int
    row_count: int
    total_count: int


class CloneGraphRequest(_In):
    source_user_id: Id | None = None
    source_graph_id: Id | None = None
    target_user_id: Id | None = None
    target_graph_id: Id | None = None


class CloneGraphResponse(_Out):
    graph_id: str | None = None
    user_id: str | None = None
    task_id: str | None = None


class _GraphTarget(_In):
    user_id: Id | None = None
    graph_id: Id | None = None


class AddDataRequest(_GraphTarget):
    data: Text
    type: DataType
    created_at: datetime | None = None
    source_description: Short | None = None
    metadata: Metadata | None = None
    document_id: Short | None = None
    strict_ontology: bool | None = None


class EpisodeDataIn(_In):
    data: Text
    type: DataType
    created_at: datetime | None = None
    source_description: Short | None = None
    metadata: Metadata | None = None


class AddDataBatchRequest(_GraphTarget):
    episodes: Annotated[list[EpisodeDataIn], Field(min_length=1, max_length=100)]
    document_id: Short | None = None
    strict_ontology: bool | None = None


class AddTripleRequest(_GraphTarget):
    fact: Text
    fact_name: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    source_node_name: Annotated[str, StringConstraints(max_length=512)] | None = None
    target_node_name: Annotated[str, StringConstraints(max_length=512)] | None = None
    source_node_uuid: Id | None = None
    target_node_uuid: Id | None = None
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    created_at: datetime | None = None
    expired_at: datetime | None = None
    source_node_labels: list[Short] | None = None
    target_node_labels: list[Short] | None = None
    source_node_summary: Short | None = None
    target_node_summary: Short | None = None
    source_node_attributes: dict[str, Any] | None = None
    target_node_attributes: dict[str, Any] | None = None
    edge_attributes: dict[str, Any] | None = None
    metadata: StoredJson | None = None


class EpisodeOut(_Out):
    uuid: str
    content: str
    created_at: datetime
    source: DataType
    source_description: str
    role: str | None = None
    role_type: RoleType | None = None
    processed: bool
    metadata: StoredJson | None = None
    score: float | None = None
    task_id: str | None = None


class EpisodesOut(_Out):
    episodes: list[EpisodeOut]


class EdgeOut(_Out):
    uuid: str
    name: str
    fact: str
    source_node_uuid: str
    target_node_uuid: str
    source_node_name: str | None = None
    target_node_name: str | None = None
    created_at: datetime
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    expired_at: datetime | None = None
    episodes: list[str]
    attributes: dict[str, Any]
    score: float | None = None


class NodeOut(_Out):
    uuid: str
    name: str
    summary: str
    labels: list[str]
    attributes: dict[str, Any]
    created_at: datetime
    score: float | None = None


class AddTripleResponse(_Out):
    edge: EdgeOut
    source_node: NodeOut | None = None
    target_node: NodeOut | None = None
    task_id: str | None = None


class EpisodeMentionsOut(_Out):
    nodes: list[NodeOut]
    edges: list[EdgeOut]


class ListRequest(_In):
    """Body of ``graph.edge/node.get_by_user_id / get_by_graph_id``: a page of the graph."""

    limit: Annotated[int, Field(ge=1, le=1_000)] | None = None
    cursor: Short | None = None
    uuid_cursor: Id | None = None
    order_by: Short | None = None
    direction: Literal["asc", "desc"] | None = None
    filters: SearchFiltersIn | None = None


class UpdateEdgeRequest(_In):
    fact: Text | None = None
    name: Annotated[str, StringConstraints(min_length=1, max_length=128)] | None = None
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    expired_at: datetime | None = None
    attributes: dict[str, Any] | None = None


class UpdateNodeRequest(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = None
    summary: Annotated[str, StringConstraints(max_length=10_000)] | None = None
    labels: Annotated[list[Short], Field(max_length=20)] | None = None
    attributes: dict[str, Any] | None = None


# -- search ------------------------------------------------------------------------------------------


class DateFilterIn(_In):
    comparison_operator: Operator
    date: datetime | None = None


DateFilters = Annotated[list[Annotated[list[DateFilterIn], Field(max_length=10)]], Field(max_length=10)]


class SearchFiltersIn(_In):
    node_labels: list[Short] | None = None
    edge_types: list[Short] | None = None
    exclude_node_labels: list[Short] | None = None
    exclude_edge_types: list[Short] | None = None
    valid_at: DateFilters | None = None
    invalid_at: DateFilters | None = None
    created_at: DateFilters | None = None
    expired_at: DateFilters | None = None
    edge_uuids: Annotated[list[Id], Field(max_length=256)] | None = None
    episode_uuids: Annotated[list[Id], Field(max_length=256)] | None = None
    source_node_uuids: Annotated[list[Id], Field(max_length=256)] | None = None
    target_node_uuids: Annotated[list[Id], Field(max_length=256)] | None = None
    connected_node_uuids: Annotated[list[Id], Field(max_length=256)] | None = None
    property_filters: list[dict[str, Any]] | None = None
    episode_metadata_filters: dict[str, Any] | None = None


class SearchRequest(_GraphTarget):
    query: Annotated[str, StringConstraints(min_length=1, max_length=4_000)]
    scope: SearchScope | None = None
    reranker: Reranker | None = None
    limit: Annotated[int, Field(ge=1, le=50)] | None = None
    mmr_lambda: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    center_node_uuid: Id | None = None
    bfs_origin_node_uuids: Annotated[list[Id], Field(max_length=100)] | None = None
    search_filters: SearchFiltersIn | None = None
    max_characters: int | None = None
    return_raw_results: bool | None = None


class SearchResultsOut(_Out):
    edges: list[EdgeOut] | None = None
    nodes: list[NodeOut] | None = None
    episodes: list[EpisodeOut] | None = None


# -- tasks -------------------------------------------------------------------------------------------


class TaskErrorOut(_Out):
    code: str
    message: str


class TaskOut(_Out):
    task_id: str
    type: str
    status: Literal["pending", "processing", "completed", "failed"]
    created_at: datetime
    error: TaskErrorOut | None = None


# -- ontology and context templates ------------------------------------------------------------------


class EntityPropertyIn(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    type: Literal["Text", "Int", "Float", "Boolean"]
    description: Annotated[str, StringConstraints(max_length=1_000)]


class EntityTypeIn(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    description: Annotated[str, StringConstraints(max_length=2_000)]
    properties: Annotated[list[EntityPropertyIn], Field(max_length=20)] | None = None


class SourceTargetIn(_In):
    source: Short | None = None
    target: Short | None = None


class EdgeTypeIn(_In):
    name: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    description: Annotated[str, StringConstraints(max_length=2_000)]
    properties: Annotated[list[EntityPropertyIn], Field(max_length=20)] | None = None
    source_targets: Annotated[list[SourceTargetIn], Field(max_length=20)] | None = None


class SetEntityTypesRequest(_In):
    entity_types: Annotated[list[EntityTypeIn], Field(max_length=30)] | None = None
    edge_types: Annotated[list[EdgeTypeIn], Field(max_length=30)] | None = None
    user_ids: Annotated[list[Id], Field(max_length=100)] | None = None
    graph_ids: Annotated[list[Id], Field(max_length=100)] | None = None


class EntityTypesOut(_Out):
    entity_types: list[EntityTypeIn]
    edge_types: list[EdgeTypeIn]


class ContextTemplateIn(_In):
    template_id: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    template: Annotated[str, StringConstraints(min_length=1, max_length=1_200)]


class ContextTemplateUpdate(_In):
    template: Annotated[str, StringConstraints(min_length=1, max_length=1_200)]


class ContextTemplateOut(_Out):
    uuid: str
    template_id: str
    template: str


class ContextTemplatesOut(_Out):
    templates: list[ContextTemplateOut]


UserNodeOut.model_rebuild()
ListRequest.model_rebuild()
