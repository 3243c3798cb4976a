"""Rows to domain objects and back: timestamps as exact epoch microseconds, dicts and tuples as JSON.

Microseconds rather than milliseconds because Python datetimes carry microseconds: storing them
whole makes a read return exactly what was written, and makes SQL comparisons agree with
:func:`chronomem.filters.fact_matches` to the microsecond.
"""

from __future__ import annotations

import functools
import json
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import numpy as np

from chronomem.domain import Community, Entity, Episode, EpisodeKind, EpisodeStatus, Fact, FactSource
from chronomem.errors import InvalidInputError
from chronomem.store.base import split_fact_attributes
from chronomem.timeutil import ensure_utc

__all__ = [
    "COMMUNITY_COLUMNS",
    "ENTITY_COLUMNS",
    "EPISODE_COLUMNS",
    "FACT_COLUMNS",
    "VERSION_COLUMNS",
    "community_from_row",
    "dump_sources",
    "dumps",
    "entity_from_row",
    "episode_from_row",
    "fact_from_row",
    "from_us",
    "to_us",
    "vector_blob",
]

T = TypeVar("T")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_US = timedelta(microseconds=1)

EPISODE_COLUMNS = (
    "id, kind, content, speaker, role, reference_time, created_at, source_description, metadata, "
    "status, attempts, last_error, usage"
)
ENTITY_COLUMNS = "id, name, labels, summary, aliases, attributes, created_at, summary_source"
FACT_COLUMNS = (
    "id, source_id, target_id, other_entity_ids, relation_type, fact, episode_ids, attributes, "
    "valid_at, invalid_at, created_at, expired_at, sources, version, recorded_at"
)
# An earlier version of a fact, read from fact_versions in the shape of a facts row.
VERSION_COLUMNS = FACT_COLUMNS.replace("id,", "fact_id,", 1).replace("recorded_at", "recorded_from")
COMMUNITY_COLUMNS = "id, name, summary, created_at"


def to_us(value: datetime | None) -> int | None:
    """Exact epoch microseconds (integer arithmetic, no float rounding)."""
    return None if value is None else (ensure_utc(value) - _EPOCH) // _ONE_US


def from_us(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + timedelta(microseconds=value)


def dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"value is not JSON-serializable: {exc}") from exc


def vector_blob(vector: Any) -> bytes:
    """A finite, non-zero vector as unit float32 bytes (cosine becomes a dot product).

    A vector that is already unit length (what every embedder returns) is stored as given: dividing
    it by its own norm again would change its last bits in a way that depends on the CPU's SIMD path,
    so an export/import round trip would not give back the same bytes on every machine.
    """
    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(array.astype(np.float64))) if array.size else 0.0
    if not np.isfinite(norm) or norm == 0.0:
        raise InvalidInputError("an embedding must be a non-empty, finite, non-zero vector")
    if abs(norm - 1.0) <= _UNIT_TOLERANCE:
        return array.tobytes()
    return (array / np.float32(norm)).astype(np.float32).tobytes()


# float32 rounding leaves a unit vector's norm within a few 1e-7 of 1; 1e-5 covers 384-d sums.
_UNIT_TOLERANCE = 1e-5


# Rows come from our own schema, so construction skips re-validation (it is the hot path of reads).


_set = object.__setattr__


def _construct(cls: type[T], values: dict[str, Any]) -> T:
    """``cls.model_construct(**values)`` for a row that gives every field, in field order.

    What ``model_construct`` does for these models (frozen, ``extra="forbid"``, no private
    attributes, no post-init), without its per-field loop over defaults and aliases: a third of the
    cost of decoding a row, and rows are decoded by the dozen on every search.
    ``tests/store/test_codec_construct.py`` checks the result equals ``model_construct``'s.
    """
    obj = cls.__new__(cls)
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", set(values))
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


@functools.lru_cache(maxsize=1 << 16)
def _json_tuple(text: str) -> tuple[Any, ...]:
    """Tuples are immutable, so one parse serves every read of the same list (episode ids, labels)."""
    return () if text == "[]" else tuple(json.loads(text))


def _json_dict(text: str) -> Any:
    return {} if text == "{}" else json.loads(text)  # a fresh dict either way: callers may mutate


def episode_from_row(group_id: str, row: tuple[Any, ...]) -> Episode:
    (id_, kind, content, speaker, role, ref, created, source, metadata, status, attempts, error, usage) = row
    return _construct(Episode, {
        "id": id_,
        "group_id": group_id,
        "kind": EpisodeKind(kind),
        "content": content,
        "speaker": speaker,
        "role": role,
        "reference_time": from_us(ref),
        "created_at": from_us(created),
        "source_description": source,
        "metadata": _json_dict(metadata),
        "status": EpisodeStatus(status),
        "attempts": attempts,
        "last_error": error,
        "usage": _json_dict(usage),
    })


def entity_from_row(group_id: str, row: tuple[Any, ...]) -> Entity:
    id_, name, labels, summary, aliases, attributes, created, summary_source = row
    return _construct(Entity, {
        "id": id_,
        "group_id": group_id,
        "name": name,
        "labels": _json_tuple(labels),
        "summary": summary,
        "summary_source": summary_source,
        "aliases": _json_tuple(aliases),
        "attributes": _json_dict(attributes),
        "created_at": from_us(created),
    })


@functools.lru_cache(maxsize=1 << 12)
def _sources(text: str) -> tuple[FactSource, ...]:
    return () if text == "[]" else tuple(FactSource(**item) for item in json.loads(text))


def dump_sources(sources: tuple[FactSource, ...]) -> str:
    return dumps([s.model_dump() for s in sources])


def fact_from_row(group_id: str, row: tuple[Any, ...]) -> Fact:
    (id_, source, target, others, relation, text, episodes, attributes, valid, invalid, created, expired,
     sources, version, recorded) = row
    attributes, evidence = split_fact_attributes(_json_dict(attributes))
    return _construct(Fact, {
        "id": id_,
        "group_id": group_id,
        "source_id": source,
        "target_id": target,
        "other_entity_ids": _json_tuple(others),
        "relation_type": relation,
        "fact": text,
        "episode_ids": _json_tuple(episodes),
        "sources": _sources(sources),
        "evidence": evidence,
        "attributes": attributes,
        "valid_at": from_us(valid),
        "invalid_at": from_us(invalid),
        "created_at": from_us(created),
        "expired_at": from_us(expired),
        "version": version,
        "recorded_at": from_us(recorded),
    })


def community_from_row(group_id: str, row: tuple[Any, ...], member_ids: tuple[str, ...]) -> Community:
    id_, name, summary, created = row
    return _construct(Community, {
        "id": id_,
        "group_id": group_id,
        "name": name,
        "summary": summary,
        "member_ids": member_ids,
        "created_at": from_us(created),
    })
