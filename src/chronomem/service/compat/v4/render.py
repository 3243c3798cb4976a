"""chronomem's objects in Zep's v4 wire shapes (facts are *edges*, entities *nodes*)."""

from __future__ import annotations

from collections.abc import Mapping

from chronomem.app.addresses import Addresses, Target, external_id, wire_id
from chronomem.controlplane import GraphRecord, ThreadRecord, UserRecord
from chronomem.domain import Entity, Episode, EpisodeStatus, Fact
from chronomem.service.compat.render import role_type
from chronomem.service.compat.v4.models import EdgeOut, EpisodeOut, GraphOut, MessageOut, NodeOut, ThreadOut, UserOut

__all__ = ["edge", "episode", "graph", "message", "node", "thread", "user"]

_PROCESSED = (EpisodeStatus.DONE, EpisodeStatus.UNEXTRACTED)
_EPISODE_UUIDS = 100  # Zep lists at most this many of a node's episodes


def user(record: UserRecord) -> UserOut:
    address = Addresses.user_uuid(record)
    return UserOut(uuid=address, user_id=external_id(record.user_id), graph_uuid=address, email=record.email,
                   first_name=record.first_name, last_name=record.last_name, metadata=record.metadata,
                   created_at=record.created_at, updated_at=record.updated_at)


def thread(record: ThreadRecord, owner: UserRecord, addresses: Addresses) -> ThreadOut:
    owner_uuid = Addresses.user_uuid(owner)
    return ThreadOut(uuid=addresses.thread_uuid(record), thread_id=external_id(record.thread_id),
                     user_uuid=owner_uuid, graph_uuid=owner_uuid, created_at=record.created_at)


def graph(target: Target) -> GraphOut:
    if target.user is not None:
        owner = target.user
        return GraphOut(uuid=target.uuid, type="user", user_uuid=target.uuid, name=external_id(owner.user_id),
                        created_at=owner.created_at, updated_at=owner.updated_at)
    record: GraphRecord | None = target.graph
    assert record is not None
    return GraphOut(uuid=target.uuid, graph_id=external_id(record.graph_id), type="graph", name=record.name,
                    description=record.description, created_at=record.created_at)


def message(item: Episode, thread_uuid: str) -> MessageOut:
    return MessageOut(uuid=wire_id(item.id), thread_uuid=thread_uuid, content=item.content,
                      role=role_type(item.role) if item.role else None, name=item.speaker,
                      reference_time=item.reference_time, created_at=item.created_at, metadata=item.metadata,
                      processed=item.status in _PROCESSED)


def episode(item: Episode, target: Target, *, score: float | None = None,
            thread_uuid: str | None = None) -> EpisodeOut:
    return EpisodeOut(uuid=wire_id(item.id), graph_uuid=target.uuid, user_uuid=target.user_uuid,
                      thread_uuid=thread_uuid, content=item.content, source=item.kind.value,
                      source_description=item.source_description or None,
                      role=role_type(item.role) if item.role else None, role_name=item.speaker,
                      reference_time=item.reference_time, created_at=item.created_at, metadata=item.metadata,
                      processed=item.status in _PROCESSED, score=score)


def edge(fact: Fact, target: Target, *, names: Mapping[str, str] | None = None, score: float | None = None,
         source_id: str | None = None, target_id: str | None = None) -> EdgeOut:
    """A fact as an edge; ``names`` (entity id → name) fills the endpoint names when known.
    ``source_id``/``target_id`` name another pair of its entities (a hyperedge's member edge)."""
    names = names or {}
    source, destination = source_id or fact.source_id, target_id or fact.target_id
    hyperedge = wire_id(fact.id) if fact.other_entity_ids else None
    return EdgeOut(uuid=wire_id(fact.id), graph_uuid=target.uuid, user_uuid=target.user_uuid,
                   name=fact.relation_type, fact=fact.fact, source_node_uuid=wire_id(source),
                   target_node_uuid=wire_id(destination), source_node_name=names.get(source),
                   target_node_name=names.get(destination), hyperedge_uuid=hyperedge,
                   episode_uuids=[wire_id(e) for e in fact.episode_ids], attributes=fact.attributes,
                   created_at=fact.created_at, valid_at=fact.valid_at, invalid_at=fact.invalid_at,
                   expired_at=fact.expired_at, score=score)


def node(entity: Entity, target: Target, *, episode_ids: list[str] | None = None,
         score: float | None = None) -> NodeOut:
    mentions = episode_ids or []
    return NodeOut(uuid=wire_id(entity.id), graph_uuid=target.uuid, user_uuid=target.user_uuid, name=entity.name,
                   summary=entity.summary, labels=list(entity.labels), attributes=entity.attributes,
                   created_at=entity.created_at, episode_uuids=[wire_id(e) for e in mentions[:_EPISODE_UUIDS]],
                   episode_uuids_truncated=len(mentions) > _EPISODE_UUIDS, score=score)
