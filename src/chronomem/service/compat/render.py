"""chronomem's objects in Zep's wire shapes.

Zep calls facts *edges*, entities *nodes* and a relation type an edge's *name*. An episode's
``created_at`` on Zep's wire is when it happened (chronomem's ``reference_time``), which is also
what ``graph.add(created_at=…)`` sets.
"""

from __future__ import annotations

from collections.abc import Mapping

from chronomem.controlplane import GraphRecord, ThreadRecord, UserRecord
from chronomem.domain import Entity, Episode, EpisodeStatus, Fact
from chronomem.service.compat.models import (
    EdgeOut,
    EpisodeOut,
    GraphOut,
    MessageOut,
    NodeOut,
    RoleType,
    ThreadOut,
    UserOut,
)

__all__ = ["edge", "episode", "graph", "message", "node", "role_type", "thread", "user"]

_ROLE_TYPES: frozenset[str] = frozenset({"norole", "system", "assistant", "user", "function", "tool"})
_PROCESSED = (EpisodeStatus.DONE, EpisodeStatus.UNEXTRACTED)


def role_type(role: str | None) -> RoleType:
    """A role as one of the values the SDK knows (anything else is ``norole``)."""
    return role if role in _ROLE_TYPES else "norole"  # type: ignore[return-value]


def user(record: UserRecord) -> UserOut:
    return UserOut(
        uuid=record.group_id, user_id=record.user_id, email=record.email, first_name=record.first_name,
        last_name=record.last_name, metadata=record.metadata, created_at=record.created_at,
        updated_at=record.updated_at, graph_uuid=record.group_id, project_uuid=record.project_id,
    )


def thread(record: ThreadRecord, owner: UserRecord) -> ThreadOut:
    return ThreadOut(
        uuid=f"{owner.group_id}:{record.thread_id}", thread_id=record.thread_id, user_id=record.user_id,
        user_uuid=owner.group_id, graph_uuid=owner.group_id, project_uuid=record.project_id,
        created_at=record.created_at,
    )


def graph(record: GraphRecord) -> GraphOut:
    return GraphOut(
        uuid=record.group_id, graph_id=record.graph_id, name=record.name, description=record.description,
        created_at=record.created_at, project_uuid=record.project_id,
    )


def message(item: Episode) -> MessageOut:
    return MessageOut(
        uuid=item.id, content=item.content, role=role_type(item.role), name=item.speaker,
        created_at=item.reference_time, metadata=item.metadata, processed=item.status in _PROCESSED,
    )


def episode(item: Episode, *, score: float | None = None, task_id: str | None = None) -> EpisodeOut:
    return EpisodeOut(
        uuid=item.id, content=item.content, created_at=item.reference_time, source=item.kind.value,
        source_description=item.source_description, role=item.speaker,
        role_type=role_type(item.role) if item.role is not None else None,
        processed=item.status in _PROCESSED, metadata=item.metadata, score=score, task_id=task_id,
    )


def edge(fact: Fact, *, names: Mapping[str, str] | None = None, score: float | None = None) -> EdgeOut:
    """A fact as an edge; ``names`` (entity id → name) fills the endpoint names when known."""
    names = names or {}
    return EdgeOut(
        uuid=fact.id, name=fact.relation_type, fact=fact.fact, source_node_uuid=fact.source_id,
        target_node_uuid=fact.target_id, source_node_name=names.get(fact.source_id),
        target_node_name=names.get(fact.target_id), created_at=fact.created_at, valid_at=fact.valid_at,
        invalid_at=fact.invalid_at, expired_at=fact.expired_at, episodes=list(fact.episode_ids),
        attributes=fact.attributes, score=score,
    )


def node(entity: Entity, *, score: float | None = None) -> NodeOut:
    return NodeOut(
        uuid=entity.id, name=entity.name, summary=entity.summary, labels=list(entity.labels),
        attributes=entity.attributes, created_at=entity.created_at, score=score,
    )
