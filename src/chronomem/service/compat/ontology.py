"""Zep's entity and edge types as a chronomem :class:`~chronomem.ingest.ontology.Ontology`.

A Zep type is a name, a description and typed properties (``Text``, ``Int``, ``Float``,
``Boolean``); an edge type may list the ``(source, target)`` entity types it joins. Each becomes a
pydantic model whose docstring is the description and whose optional fields are the properties,
which is what chronomem's ontology reads.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, create_model

from chronomem.domain import to_relation_type
from chronomem.errors import ConfigurationError, InvalidInputError
from chronomem.ingest.ontology import Ontology
from chronomem.service.compat.models import EdgeTypeIn, EntityPropertyIn, EntityTypeIn

__all__ = ["ontology_from_types"]

_TYPES: dict[str, type] = {"Text": str, "Int": int, "Float": float, "Boolean": bool}


def _model(name: str, description: str, properties: list[EntityPropertyIn] | None) -> type[BaseModel]:
    fields: dict[str, Any] = {
        p.name: (_TYPES[p.type] | None, Field(None, description=p.description)) for p in properties or ()
    }
    model: type[BaseModel] = create_model(name, **fields)
    model.__doc__ = description or name
    return model


def ontology_from_types(entity_types: list[EntityTypeIn], edge_types: list[EdgeTypeIn]) -> Ontology:
    """The ontology these types declare (``InvalidInputError`` for one chronomem refuses)."""
    try:
        entities = {t.name: _model(t.name, t.description, t.properties) for t in entity_types}
        edges = {to_relation_type(t.name): _model(t.name, t.description, t.properties) for t in edge_types}
        signatures = {
            to_relation_type(t.name): [(st.source or "Entity", st.target or "Entity") for st in t.source_targets]
            for t in edge_types if t.source_targets
        }
        return Ontology(entity_types=entities, edge_types=edges, signatures=signatures)
    except (ConfigurationError, ValueError, TypeError) as exc:
        raise InvalidInputError(f"the entity or edge types are not valid: {exc}") from exc
