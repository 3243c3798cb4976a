"""Minimal schema-valid data for a pydantic model: what :class:`~chronomem.llm.testing.SchemaModel` answers.

Required fields get the smallest value their type and constraints allow (``"x"``, ``0``, ``[]``,
the first ``Literal`` or enum member, ``None`` for optionals, nested models recursively); fields
with defaults are left out so the model's own defaults apply. Custom validators are not known
here: a model whose validators refuse these values is answered with data it rejects, and the
caller sees the ``ModelOutputError`` a real model's wrong answer would cause.
"""

from __future__ import annotations

import datetime as dt
import enum
import types
import uuid
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel

__all__ = ["minimal_instance_data"]

_MAX_DEPTH = 8
_SEQUENCE_ORIGINS = (list, set, frozenset, tuple)
_SCALARS: dict[Any, Any] = {
    bool: False,
    bytes: "",
    dt.datetime: "1970-01-01T00:00:00Z",
    dt.date: "1970-01-01",
    dt.time: "00:00:00",
    dt.timedelta: 0,
    uuid.UUID: "00000000-0000-0000-0000-000000000000",
    type(None): None,
    Any: None,
    object: None,
}


def _bounds(metadata: list[Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for item in metadata:
        for name in ("ge", "gt", "min_length"):
            value = getattr(item, name, None)
            if value is not None and isinstance(item, annotated_types.BaseMetadata):
                found[name] = value
    return found


def _number(kind: type, bounds: dict[str, Any]) -> Any:
    if "ge" in bounds:
        return kind(bounds["ge"])
    if "gt" in bounds:
        return kind(bounds["gt"] + 1) if kind is int else kind(bounds["gt"]) + 1e-6
    return kind(0)


def _is_union(origin: Any) -> bool:
    return origin is Union or origin is types.UnionType


def _composite(annotation: Any, origin: Any, bounds: dict[str, Any], depth: int) -> Any:
    args = get_args(annotation)
    if _is_union(origin):
        return None if type(None) in args else _value(args[0], [], depth)
    if origin is Literal:
        return args[0]
    if origin is tuple and args and args[-1] is not Ellipsis:
        return [_value(item, [], depth + 1) for item in args]
    if origin in _SEQUENCE_ORIGINS or (isinstance(origin, type) and issubclass(origin, Iterable)):
        if isinstance(origin, type) and issubclass(origin, Mapping):
            return {}
        item = args[0] if args else Any
        return [_value(item, [], depth + 1) for _ in range(bounds.get("min_length", 0))]
    if origin is dict or (isinstance(origin, type) and issubclass(origin, Mapping)):
        return {}
    return _value(origin, [], depth)


def _value(annotation: Any, metadata: list[Any], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        return None
    if get_origin(annotation) is Annotated:
        base, *extra = get_args(annotation)
        return _value(base, [*metadata, *extra], depth)
    bounds = _bounds(metadata)
    origin = get_origin(annotation)
    if origin is not None:
        return _composite(annotation, origin, bounds, depth)
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if annotation is str:
        # Non-empty: validators that refuse blank names or keywords are common, "x" passes them.
        return "x" * max(1, bounds.get("min_length", 0))
    if annotation in (int, float):
        return _number(annotation, bounds)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return next(iter(annotation)).value
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _model_data(annotation, depth + 1)
    if annotation in (list, set, tuple, frozenset):
        return []
    if annotation is dict:
        return {}
    return None


def _model_data(model: type[BaseModel], depth: int) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if field.is_required():
            data[field.alias or name] = _value(field.annotation, list(field.metadata), depth)
    return data


def minimal_instance_data(model: type[BaseModel]) -> dict[str, Any]:
    """JSON-ready data for the smallest valid-looking instance of ``model`` (see module docstring)."""
    return _model_data(model, 0)
