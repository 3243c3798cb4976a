"""Zep's entity and edge types as a chronomem :class:`~chronomem.ingest.ontology.Ontology`.

A Zep type is a name, a description and typed properties (``Text``, ``Int``, ``Float``,
``Boolean``); an edge type may list the ``(source, target)`` entity types it joins. That is the shape
of :class:`~chronomem.ingest.ontology_spec.OntologySpec`, which the native ``PUT /api/v3/ontology``
and the workers read too: one validation, so whatever this API stores, ingestion can apply.
"""

from __future__ import annotations

from chronomem.errors import ConfigurationError, InvalidInputError
from chronomem.ingest.ontology import Ontology
from chronomem.ingest.ontology_spec import OntologySpec
from chronomem.service.compat.models import EdgeTypeIn, EntityTypeIn

__all__ = ["ontology_from_types"]


def ontology_from_types(entity_types: list[EntityTypeIn], edge_types: list[EdgeTypeIn]) -> Ontology:
    """The ontology these types declare (``InvalidInputError`` for one chronomem refuses)."""
    document = {"entity_types": [t.model_dump() for t in entity_types],
                "edge_types": [t.model_dump() for t in edge_types]}
    try:
        return OntologySpec.parse(document, origin="the entity and edge types").to_ontology()
    except ConfigurationError as exc:
        raise InvalidInputError(str(exc)) from exc
