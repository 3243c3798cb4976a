"""What ingestion reports back: the result of one episode (or fact), of one removal, and the hook
that tells others about the entities an episode created."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from chronomem.domain import Entity, Episode, Fact
from chronomem.llm.base import Usage

__all__ = ["EntitiesAdded", "IngestResult", "RemovalResult"]

EntitiesAdded = Callable[[str, list[str]], Awaitable[None]]
"""``(group_id, entity_ids) -> None``: told about the entities an episode created (communities)."""


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What one episode (or fact) did to the graph, and what it cost."""

    episode: Episode
    entities_created: tuple[Entity, ...] = ()
    entities_updated: tuple[Entity, ...] = ()
    facts_created: tuple[Fact, ...] = ()
    facts_updated: tuple[Fact, ...] = ()  # restated: gained provenance
    facts_invalidated: tuple[Fact, ...] = ()  # closed by a new fact
    usage: Usage = field(default_factory=Usage)
    warnings: tuple[str, ...] = ()
    skipped: bool = False  # nothing done: already processed (or re-added)
    entities_rejected: int = 0  # extracted but named nowhere in the messages (see ingest.grounding)
    facts_rejected: int = 0  # extracted but junk, or quoting words the episode does not contain


@dataclass(frozen=True, slots=True)
class RemovalResult:
    """What removing an episode deleted, and what it changed in what remains."""

    episode_id: str
    facts_deleted: tuple[str, ...]
    facts_updated: tuple[Fact, ...]
    entities_deleted: tuple[str, ...]
    entities_updated: tuple[Entity, ...]
