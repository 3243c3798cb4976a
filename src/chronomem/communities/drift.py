"""How far dynamically extended communities have drifted from what a full build would give.

Two measures, both fractions of the group's entities in [0, 1]:

* :class:`DriftCounter` — cheap and incremental: entities placed (or moved, or left unassigned) by
  dynamic extension since the last full build, over the entities the group holds now.
* :func:`partition_disagreement` — exact: the share of entities whose stored community differs from
  a fresh propagation's, after matching each fresh community to the stored one it overlaps most.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

__all__ = ["DriftCounter", "partition_disagreement"]


@dataclass(frozen=True, slots=True)
class DriftCounter:
    baseline: int = 0  # entities in the group at the last full build
    added: int = 0  # entities extension saw for the first time since (placed or not)
    moved: int = 0  # entities extension moved from one community to another

    @property
    def drift(self) -> float:
        changed = self.added + self.moved
        return min(1.0, changed / max(self.baseline + self.added, 1)) if changed else 0.0

    def record(self, *, added: int = 0, moved: int = 0) -> DriftCounter:
        return replace(self, added=self.added + added, moved=self.moved + moved)

    @classmethod
    def after_build(cls, entities: int) -> DriftCounter:
        return cls(baseline=entities)

    @classmethod
    def from_measure(cls, entities: int, disagreement: float) -> DriftCounter:
        """Seed the counter from an exact measure (a process that did not see the last build)."""
        return cls(baseline=entities, moved=round(disagreement * entities))


def partition_disagreement(
    entity_ids: Iterable[str], stored: Mapping[str, str], fresh: Mapping[str, str]
) -> float:
    """Share of ``entity_ids`` whose stored community is not the one matched to their fresh community.

    Fresh and stored communities are paired one to one, largest overlaps first; an entity agrees when
    both sides leave it unassigned or its two communities are paired. 0.0 means the partitions are the
    same up to community ids.
    """
    ids = list(entity_ids)
    if not ids:
        return 0.0
    overlap = Counter((fresh[e], stored[e]) for e in ids if e in fresh and e in stored)
    pairs: dict[str, str] = {}
    taken: set[str] = set()
    for (fresh_id, stored_id), _ in sorted(overlap.items(), key=lambda item: (-item[1], item[0])):
        if fresh_id not in pairs and stored_id not in taken:
            pairs[fresh_id] = stored_id
            taken.add(stored_id)
    disagree = 0
    for e in ids:
        f, s = fresh.get(e), stored.get(e)
        if (f is None) != (s is None) or (f is not None and pairs.get(f) != s):
            disagree += 1
    return disagree / len(ids)
