"""Zep's entity and edge types as a chronomem :class:`~chronomem.ingest.ontology.Ontology`.

A Zep type is a name, a description and typed properties (``Text``, ``Int``, ``Float``,
``Boolean``); an edge type may list the ``(source, target)`` entity types it joins. That is the shape
of :class:`~chronomem.ingest.ontology_spec.OntologySpec`, which the native ``PUT /api/v3/ontology``
and the workers read too: one validation, so whatever this API stores, ingestion can apply.
"""

from __future__ import annotations

from typing import Any

from chronomem.controlplane import ControlPlane
from chronomem.errors import ConfigurationError, InvalidInputError
from chronomem.ingest.ontology import Ontology
from chronomem.ingest.ontology_spec import OntologySpec
from chronomem.service.compat.models import EdgeTypeIn, EntityTypeIn

__all__ = ["ONTOLOGY", "clear_types", "ontology_from_types", "store_types", "stored_types"]

ONTOLOGY = "ontology"  # project document kind: {"entity_types": [...], "edge_types": [...]}
_NAME = "types"


def ontology_from_types(entity_types: list[EntityTypeIn], edge_types: list[EdgeTypeIn]) -> Ontology:
    """The ontology these types declare (``InvalidInputError`` for one chronomem refuses)."""
    document = {"entity_types": [t.model_dump() for t in entity_types],
                "edge_types": [t.model_dump() for t in edge_types]}
    try:
        return OntologySpec.parse(document, origin="the entity and edge types").to_ontology()
    except ConfigurationError as exc:
        raise InvalidInputError(str(exc)) from exc


def store_types(control: ControlPlane, project_id: str, scope: str, entity_types: list[EntityTypeIn],
                edge_types: list[EdgeTypeIn]) -> None:
    """Replace the types of a user's or graph's group (``scope``; ``""`` = the project), after
    checking chronomem's ontology can hold them."""
    ontology_from_types(entity_types, edge_types)
    document = {"entity_types": [t.model_dump() for t in entity_types],
                "edge_types": [t.model_dump() for t in edge_types]}
    control.put_document(project_id, ONTOLOGY, scope, _NAME, document)


def stored_types(control: ControlPlane, project_id: str, scope: str) -> dict[str, Any] | None:
    """The types stored for ``scope`` itself (``None``: it has none of its own)."""
    documents = control.list_documents(project_id, ONTOLOGY, scope=scope)
    return documents[0].body if documents else None


def clear_types(control: ControlPlane, project_id: str, scope: str) -> None:
    """Forget ``scope``'s own types (it then has the project's)."""
    control.delete_document(project_id, ONTOLOGY, scope, _NAME)
