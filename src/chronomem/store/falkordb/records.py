"""Domain objects ↔ node properties.

Timestamps are stored as integer microseconds since the epoch (exact round trip of aware UTC
datetimes, and range filters compare integers). Free-form dicts (attributes, metadata, usage) are
JSON text. Lists stay lists: FalkorDB indexes array properties, which is how ``entity_ids``,
``episode_ids`` and ``norm_names`` are searched without an ``IN`` over a full-text-indexed property.
The group id is not stored: the graph is the group.

A fact also carries ``valid_from``: its ``valid_at``, or :data:`EARLIEST` when that is null (open
since forever). It is never null, so "true at t" has a range-index bound, ``valid_from <= t``,
that keeps the facts whose ``valid_at`` is null (a null is in no index). Nothing reads it back.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from chronomem.domain import Community, Entity, Episode, Fact, FactSource, FactVersion
from chronomem.errors import InvalidInputError
from chronomem.store.base import fact_attributes_column, split_fact_attributes
from chronomem.store.falkordb.fulltext import fold

__all__ = [
    "COMMUNITY_FIELDS",
    "EARLIEST",
    "ENTITY_FIELDS",
    "EPISODE_FIELDS",
    "FACT_FIELDS",
    "community_from_row",
    "community_props",
    "entity_from_row",
    "entity_props",
    "episode_from_row",
    "episode_props",
    "fact_from_row",
    "fact_props",
    "from_micros",
    "metadata_text",
    "to_micros",
    "version_props",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)

EPISODE_FIELDS = (
    "id", "kind", "content", "speaker", "role", "reference_time", "created_at", "source_description",
    "metadata", "status", "attempts", "last_error", "usage",
)
ENTITY_FIELDS = ("id", "name", "labels", "summary", "aliases", "attributes", "created_at", "summary_source")
FACT_FIELDS = (
    "id", "source_id", "target_id", "other_entity_ids", "relation_type", "fact", "episode_ids",
    "attributes", "valid_at", "invalid_at", "created_at", "expired_at", "sources", "version", "recorded_at",
)
COMMUNITY_FIELDS = ("id", "name", "summary", "member_ids", "created_at")


def to_micros(value: datetime | None) -> int | None:
    return None if value is None else (value.astimezone(UTC) - _EPOCH) // _MICRO


EARLIEST: int = (datetime.min.replace(tzinfo=UTC) - _EPOCH) // _MICRO  # no timestamp is earlier


def from_micros(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + value * _MICRO


def _dumps(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def metadata_text(metadata: dict[str, Any]) -> str:
    """Metadata as its stored property, refused (``InvalidInputError``) unless it is JSON."""
    try:
        return json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata is not JSON: {exc}") from exc


def episode_props(episode: Episode) -> dict[str, Any]:
    return {
        "id": episode.id, "kind": episode.kind.value, "content": episode.content, "text_ft": fold(episode.text),
        "speaker": episode.speaker, "role": episode.role,
        "reference_time": to_micros(episode.reference_time), "created_at": to_micros(episode.created_at),
        "source_description": episode.source_description, "metadata": _dumps(episode.metadata),
        "status": episode.status.value, "attempts": episode.attempts, "last_error": episode.last_error,
        "usage": _dumps(episode.usage),
    }


def episode_from_row(group_id: str, row: list[Any]) -> Episode:
    data = dict(zip(EPISODE_FIELDS, row, strict=True))
    for name in ("reference_time", "created_at"):
        data[name] = from_micros(data[name])
    data["metadata"] = json.loads(data["metadata"] or "{}")
    data["usage"] = json.loads(data["usage"] or "{}")
    return Episode(group_id=group_id, **data)


def entity_props(entity: Entity) -> dict[str, Any]:
    return {
        "id": entity.id, "name": entity.name, "labels": list(entity.labels), "summary": entity.summary,
        "name_ft": fold(entity.name), "summary_ft": fold(entity.summary),
        "aliases": list(entity.aliases), "attributes": _dumps(entity.attributes),
        "created_at": to_micros(entity.created_at), "norm_names": sorted(entity.normalized_names),
        "summary_source": entity.summary_source,
    }


def entity_from_row(group_id: str, row: list[Any]) -> Entity:
    data = dict(zip(ENTITY_FIELDS, row, strict=True))
    data["labels"] = tuple(data["labels"] or ())
    data["aliases"] = tuple(data["aliases"] or ())
    data["attributes"] = json.loads(data["attributes"] or "{}")
    data["created_at"] = from_micros(data["created_at"])
    data["summary_source"] = data["summary_source"] or ""  # nodes written before the property existed
    return Entity(group_id=group_id, **data)


def fact_props(fact: Fact) -> dict[str, Any]:
    return {
        "id": fact.id, "source_id": fact.source_id, "target_id": fact.target_id,
        "other_entity_ids": list(fact.other_entity_ids), "entity_ids": list(dict.fromkeys(fact.entity_ids)),
        "relation_type": fact.relation_type, "fact": fact.fact, "fact_ft": fold(fact.fact),
        "episode_ids": list(fact.episode_ids),
        "sources": json.dumps([s.model_dump() for s in fact.sources], ensure_ascii=False),
        "attributes": _dumps(fact_attributes_column(fact)), "version": fact.version,
        **{name: to_micros(getattr(fact, name))
           for name in ("valid_at", "invalid_at", "created_at", "expired_at", "recorded_at")},
        "valid_from": EARLIEST if fact.valid_at is None else to_micros(fact.valid_at),
    }


def fact_from_row(group_id: str, row: list[Any]) -> Fact:
    data = dict(zip(FACT_FIELDS, row, strict=True))
    data["other_entity_ids"] = tuple(data["other_entity_ids"] or ())
    data["episode_ids"] = tuple(data["episode_ids"] or ())
    data["attributes"], data["evidence"] = split_fact_attributes(json.loads(data["attributes"] or "{}"))
    for name in ("valid_at", "invalid_at", "created_at", "expired_at", "recorded_at"):
        data[name] = from_micros(data[name])
    # facts written before versions existed: version 1, recorded when created
    data["sources"] = tuple(FactSource(**item) for item in json.loads(data["sources"] or "[]"))
    data["version"] = data["version"] or 1
    return Fact(group_id=group_id, **data)


def version_props(version: FactVersion) -> dict[str, Any]:
    """An earlier version of a fact, as a (:FactVersion) node: the fact's properties as they were
    (``recorded_at`` is when the version took force) and ``recorded_to``, when it ended. Not
    full-text indexed: search finds a fact by its latest text."""
    props = fact_props(version.fact)
    del props["fact_ft"]
    return {**props, "recorded_to": to_micros(version.recorded_to)}


def community_props(community: Community) -> dict[str, Any]:
    return {
        "id": community.id, "name": community.name, "summary": community.summary,
        "name_ft": fold(community.name), "summary_ft": fold(community.summary),
        "member_ids": list(community.member_ids), "created_at": to_micros(community.created_at),
    }


def community_from_row(group_id: str, row: list[Any]) -> Community:
    data = dict(zip(COMMUNITY_FIELDS, row, strict=True))
    data["member_ids"] = tuple(data["member_ids"] or ())
    data["created_at"] = from_micros(data["created_at"])
    return Community(group_id=group_id, **data)
