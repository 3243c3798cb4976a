"""Walking a group's graph from given entities: their neighbours, and the subgraph within n hops.

Every shell offers these (Zep v4's ``list_neighbors`` and ``get_subgraph``); they read current
facts only (superseded versions are history, not edges of the graph now) and stop at the bounds
they are given, saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from chronomem.domain import Entity, Fact
from chronomem.errors import NotFoundError
from chronomem.memory import Chronomem

__all__ = ["Direction", "Neighbour", "Subgraph", "neighbours", "subgraph"]

Direction = Literal["in", "out", "both", "incoming", "outgoing"]


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An entity next to the centre, and the facts that join them (oldest first)."""

    entity: Entity
    facts: tuple[Fact, ...]


@dataclass(slots=True)
class Subgraph:
    entities: list[Entity] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    truncated: bool = False
    reason: str | None = None  # max_nodes | max_edges


def _others(fact: Fact, entity_id: str, direction: Direction) -> list[str]:
    """The entities ``fact`` leads to from ``entity_id``, following ``direction``."""
    if direction in ("out", "outgoing"):
        return [i for i in fact.entity_ids if i != entity_id] if fact.source_id == entity_id else []
    if direction in ("in", "incoming"):
        return [fact.source_id] if entity_id in fact.entity_ids and fact.source_id != entity_id else []
    return [i for i in fact.entity_ids if i != entity_id]


async def neighbours(memory: Chronomem, group_id: str, entity_id: str, *,
                     direction: Direction = "both") -> list[Neighbour]:
    """The entities one fact away from ``entity_id``, in the order their first fact was made."""
    if not await memory.store.get_entities(group_id, [entity_id]):
        raise NotFoundError(f"node {entity_id!r} not found")
    facts = sorted(await memory.store.facts_of_entities(group_id, [entity_id]), key=lambda f: (f.created_at, f.id))
    joined: dict[str, list[Fact]] = {}
    for fact in facts:
        for other in _others(fact, entity_id, direction):
            joined.setdefault(other, []).append(fact)
    entities = {e.id: e for e in await memory.store.get_entities(group_id, list(joined))}
    return [Neighbour(entities[i], tuple(f)) for i, f in joined.items() if i in entities]


async def subgraph(memory: Chronomem, group_id: str, seeds: Sequence[str], *, depth: int = 1, max_nodes: int = 100,
                   max_edges: int = 500, direction: Direction = "both") -> Subgraph:
    """The entities within ``depth`` facts of ``seeds`` and the facts among them, breadth first."""
    found = {e.id: e for e in await memory.store.get_entities(group_id, list(seeds))}
    if not found:
        raise NotFoundError("none of the seed nodes is in this graph")
    out = Subgraph(entities=list(found.values()))
    facts: dict[str, Fact] = {}
    frontier = list(found)
    for _ in range(depth):
        reached: list[str] = []
        for fact in await memory.store.facts_of_entities(group_id, frontier):
            leads = [o for i in frontier for o in _others(fact, i, direction) if i in fact.entity_ids]
            if not leads:
                continue
            if fact.id not in facts:
                if len(facts) >= max_edges:
                    out.truncated, out.reason = True, "max_edges"
                    break
                facts[fact.id] = fact
            reached += [i for i in leads if i not in found and i not in reached]
        room = max_nodes - len(found)
        if len(reached) > room:
            out.truncated, out.reason = True, out.reason or "max_nodes"
            reached = reached[:room]
        for entity in await memory.store.get_entities(group_id, reached):
            found[entity.id] = entity
        frontier = reached
        if not frontier or out.truncated:
            break
    out.entities = list(found.values())
    out.facts = [f for f in facts.values() if all(i in found for i in (f.source_id, f.target_id))]
    return out
