"""Removing an episode, the pure part: what cascades (docs/design.md §2 lifecycle).

- Facts whose only source was the episode go; facts with other sources lose it from their provenance.
- Facts that a deleted fact had closed (``superseded_by``), or that the episode said ended
  (``ended_by``), are open again: their cause is gone. The
  reopening is a new version; what we believed while the episode stood stays in the history.
- Entities no longer mentioned by any episode and joined by no surviving fact go.
- Surviving entities that the episode mentioned, or that were endpoints of a deleted or reopened fact,
  get their summary rebuilt from their surviving current facts (``summary_source`` then says
  ``"graph"``): a summary grows by one note per mentioning episode,
  so none may still state what the removed episode said.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from chronomem.domain import Entity, Fact
from chronomem.ingest.invalidation import ENDED_BY, SUPERSEDED_BY, reopen
from chronomem.ingest.summaries import BY_GRAPH, rebuild_summary

__all__ = ["RemovalPlan", "plan_removal"]


@dataclass(frozen=True, slots=True)
class RemovalPlan:
    deleted_fact_ids: tuple[str, ...]
    updated_facts: tuple[Fact, ...]  # provenance trimmed, or reopened
    deleted_entity_ids: tuple[str, ...]
    updated_entities: tuple[Entity, ...]  # summaries rebuilt


def plan_removal(
    episode_id: str,
    episode_facts: Sequence[Fact],
    neighbourhood: Iterable[Fact],
    entities: Sequence[Entity],
    mentions: Mapping[str, Sequence[str]],
    *,
    summary_max_chars: int,
    now: datetime,
) -> RemovalPlan:
    """``neighbourhood``: every fact (superseded too) of ``entities``, the episode's entities and the
    endpoints of its facts; ``mentions``: entity id → ids of the episodes mentioning it; ``now``: the
    transaction time of the reopened facts' new versions."""
    deleted = {f.id for f in episode_facts if set(f.episode_ids) <= {episode_id}}
    updated: dict[str, Fact] = {}
    for fact in episode_facts:
        if fact.id not in deleted:
            updated[fact.id] = fact.model_copy(
                update={"episode_ids": tuple(e for e in fact.episode_ids if e != episode_id)}
            )
    surviving = {f.id: f for f in neighbourhood if f.id not in deleted}
    surviving.update(updated)
    reopened = [reopen(f, now=now) for f in surviving.values()
                if f.attributes.get(SUPERSEDED_BY) in deleted or f.attributes.get(ENDED_BY) == episode_id]
    for fact in reopened:
        surviving[fact.id] = updated[fact.id] = fact
    touched = {eid for f in (*(f for f in episode_facts if f.id in deleted), *reopened) for eid in f.entity_ids}
    touched |= {e.id for e in entities if episode_id in mentions.get(e.id, ())}
    gone, rebuilt = [], []
    for entity in entities:
        still_mentioned = set(mentions.get(entity.id, ())) - {episode_id}
        facts_left = [f for f in surviving.values() if entity.id in f.entity_ids]
        if not still_mentioned and not facts_left:
            gone.append(entity.id)
        elif entity.id in touched:
            summary = rebuild_summary(facts_left, summary_max_chars)
            if summary != entity.summary:
                rebuilt.append(entity.model_copy(update={"summary": summary, "summary_source": BY_GRAPH}))
    return RemovalPlan(tuple(sorted(deleted)), tuple(updated.values()), tuple(gone), tuple(rebuilt))
