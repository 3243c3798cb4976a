"""Dynamic extension (paper §2.3): one label-propagation step for entities that arrive between builds.

A new entity joins the community that holds most of the fact weight among its neighbours; with no
neighbour in any community it stays unassigned until the next full build. Entities of one batch
may be each other's neighbours, so the step repeats over the batch (a few passes at most) letting
an entity follow a batch neighbour that was just placed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from chronomem.domain import Community, Fact

__all__ = [
    "Assignment",
    "Moves",
    "apply_moves",
    "assign_batch",
    "choose_community",
    "membership_moves",
    "neighbour_weights",
]


def choose_community(
    neighbour_weights: Mapping[str, float],
    membership: Mapping[str, str],
    *,
    current: str | None = None,
    sizes: Mapping[str, int] | None = None,
) -> str | None:
    """The community holding the most fact weight among the neighbours, or ``None`` if none holds any.

    Ties keep ``current``, then favour the larger community (fewer, fuller communities), then the
    smaller id, so the answer never depends on iteration order.
    """
    weight: dict[str, float] = {}
    for neighbour, w in neighbour_weights.items():
        community = membership.get(neighbour)
        if community is not None and w > 0:
            weight[community] = weight.get(community, 0.0) + w
    if not weight:
        return None
    sizes = sizes or {}

    def rank(community: str) -> tuple[float, bool, int, str]:
        return (-weight[community], community != current, -sizes.get(community, 0), community)

    return min(weight, key=rank)


@dataclass(frozen=True, slots=True)
class Assignment:
    """Where each entity of a batch ended up; ``None`` = unassigned."""

    communities: dict[str, str | None]
    moved: tuple[str, ...]  # entities that were members of another community before

    @property
    def assigned(self) -> dict[str, str]:
        return {e: c for e, c in self.communities.items() if c is not None}


def assign_batch(
    entity_ids: Sequence[str],
    neighbours: Mapping[str, Mapping[str, float]],
    membership: Mapping[str, str],
    *,
    sizes: Mapping[str, int] | None = None,
    max_passes: int = 3,
) -> Assignment:
    """One propagation step for each entity of the batch, given the membership of everyone else.

    ``neighbours[e]`` maps each neighbour of ``e`` to the number of facts they share. An entity that
    already has a community is re-evaluated and moves only when another community outweighs it.
    """
    placed = dict(membership)
    sizes = dict(sizes or {})
    batch = list(dict.fromkeys(entity_ids))
    for _ in range(max_passes):
        changed = False
        for entity in batch:
            before = placed.get(entity)
            after = choose_community(neighbours.get(entity, {}), placed, current=before, sizes=sizes)
            if after is None or after == before:
                continue
            placed[entity] = after
            sizes[after] = sizes.get(after, 0) + 1
            if before is not None:
                sizes[before] = sizes.get(before, 1) - 1
            changed = True
        if not changed:
            break
    result = {entity: placed.get(entity) for entity in batch}
    moved = tuple(e for e in batch if membership.get(e) not in (None, result[e]))
    return Assignment(result, moved)


def neighbour_weights(entity_ids: Sequence[str], facts: Iterable[Fact]) -> dict[str, dict[str, float]]:
    """For each entity of the batch, its neighbours and the number of facts it shares with each."""
    wanted = set(entity_ids)
    weights: dict[str, dict[str, float]] = {e: {} for e in entity_ids}
    for fact in facts:
        participants = set(fact.entity_ids)
        for entity in participants & wanted:
            row = weights[entity]
            for other in participants - {entity}:
                row[other] = row.get(other, 0.0) + 1.0
    return weights


@dataclass(frozen=True, slots=True)
class Moves:
    """Membership changes per community: who joins, who leaves."""

    joined: dict[str, list[str]]
    left: dict[str, list[str]]

    @property
    def communities(self) -> list[str]:
        return list(dict.fromkeys([*self.joined, *self.left]))


def membership_moves(assignment: Assignment, membership: Mapping[str, str]) -> Moves:
    """Turn a batch assignment into per-community joins and departures."""
    joined: dict[str, list[str]] = {}
    left: dict[str, list[str]] = {}
    for entity, community in assignment.communities.items():
        before = membership.get(entity)
        if community is None or community == before:
            continue
        joined.setdefault(community, []).append(entity)
        if before is not None:
            left.setdefault(before, []).append(entity)
    return Moves(joined, left)


def apply_moves(community: Community, joined: Sequence[str], left: Sequence[str]) -> Community:
    """The community with newcomers appended (after its central members) and leavers removed."""
    gone = set(left)
    members = [m for m in community.member_ids if m not in gone]
    present = set(members)
    members += [e for e in dict.fromkeys(joined) if e not in present]
    return community.model_copy(update={"member_ids": tuple(members)})
