"""What a group's owner declared for its ingestion: an ontology and JSON mappings that replace the
memory's own for that group's episodes (the service's per-project documents, docs/design.md §6).

Workers process episodes of many projects in one pool; the ingestor asks its
:class:`GroupProfiles` source, per episode, which ontology and mappings apply to the episode's group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from chronomem.ingest.json_mapping import JsonMapping
from chronomem.ingest.ontology import Ontology

__all__ = ["GroupProfile", "GroupProfiles"]


@dataclass(frozen=True, slots=True)
class GroupProfile:
    """``None`` keeps the memory's own (from its settings) for that part."""

    ontology: Ontology | None = None
    json_mappings: tuple[JsonMapping, ...] | None = None


class GroupProfiles(Protocol):
    def profile(self, group_id: str) -> GroupProfile | None:
        """What applies to the group's episodes, or ``None`` for the memory's defaults. Called once
        per episode and per ``add_fact``: it must be cheap (cache what it parses)."""
