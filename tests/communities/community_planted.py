"""Planted-partition graphs: a few dense clusters joined by sparse links, with a known answer."""

from __future__ import annotations

import random
from dataclasses import dataclass

from chronomem.domain import Entity, Fact
from chronomem.store.base import WeightedEdge

__all__ = ["Planted", "planted_partition", "planted_write"]


@dataclass(frozen=True)
class Planted:
    ids: list[str]
    edges: list[WeightedEdge]
    clusters: list[frozenset[str]]

    def cluster_of(self, entity_id: str) -> frozenset[str]:
        return next(c for c in self.clusters if entity_id in c)


def planted_partition(
    sizes: list[int], *, p_in: float = 0.6, links: int = 3, seed: int = 0, prefix: str = "n"
) -> Planted:
    """Clusters of the given sizes: a ring through the members (so each has two neighbours inside)
    and every other pair linked with probability ``p_in`` (one fact, sometimes two); plus ``links``
    single facts between random members of different clusters."""
    rng = random.Random(seed)
    clusters: list[list[str]] = []
    for c, size in enumerate(sizes):
        clusters.append([f"{prefix}{c}_{i}" for i in range(size)])
    edges: list[WeightedEdge] = []
    for members in clusters:
        ring = list(zip(members, members[1:] + members[:1], strict=True))
        edges += [WeightedEdge(a, b, 1) for a, b in ring]
        linked = {frozenset(pair) for pair in ring}
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                if frozenset((a, b)) not in linked and rng.random() < p_in:
                    edges.append(WeightedEdge(a, b, 2 if rng.random() < 0.2 else 1))
    for _ in range(links):
        x, y = rng.sample(range(len(clusters)), 2)
        edges.append(WeightedEdge(rng.choice(clusters[x]), rng.choice(clusters[y]), 1))
    ids = [e for members in clusters for e in members]
    rng.shuffle(ids)
    return Planted(ids, edges, [frozenset(m) for m in clusters])


def planted_write(group_id: str, planted: Planted, *, topics: dict[str, str] | None = None) -> tuple[list, list]:
    """Entities and facts for a store (one fact per unit of weight); ``topics`` maps an id prefix to a
    word put in the summaries of matching entities."""
    topics = topics or {}
    entities = []
    for entity_id in sorted(planted.ids):
        word = next((w for p, w in topics.items() if entity_id.startswith(p)), "")
        summary = f"{entity_id} is about {word}." if word else f"{entity_id} is an entity."
        entities.append(Entity(id=entity_id, group_id=group_id, name=entity_id, summary=summary))
    facts = [
        Fact(group_id=group_id, source_id=e.a, target_id=e.b, fact=f"{e.a} relates to {e.b} ({k})")
        for e in planted.edges
        for k in range(e.weight)
    ]
    return entities, facts
