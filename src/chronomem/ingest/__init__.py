"""Ingestion: episodes in, a bi-temporal knowledge graph out (docs/design.md §2; docs/ingestion.md).

The stages live in :mod:`~chronomem.ingest.stages`, their pure rules in :mod:`.resolution`,
:mod:`.fact_resolution`, :mod:`.invalidation`, :mod:`.summaries` and :mod:`.removal`, the prompts
and their answer models in :mod:`.prompts`. :class:`Ingestor` (:mod:`.pipeline`) runs them, one
episode at a time or many (:mod:`.bulk`), and reports what they did (:mod:`.results`).
"""

from chronomem.ingest.config import ExtractionMode, IngestConfig
from chronomem.ingest.json_mapping import EntitySpec, FactSpec, JsonMapping
from chronomem.ingest.ontology import Ontology
from chronomem.ingest.ontology_spec import OntologySpec
from chronomem.ingest.pipeline import Ingestor
from chronomem.ingest.results import EntitiesAdded, IngestResult, RemovalResult

__all__ = [
    "EntitiesAdded",
    "EntitySpec",
    "ExtractionMode",
    "FactSpec",
    "IngestConfig",
    "IngestResult",
    "Ingestor",
    "JsonMapping",
    "Ontology",
    "OntologySpec",
    "RemovalResult",
]
