"""What a :class:`~chronomem.communities.CommunityBuilder` remembers about a group between calls.

The store holds the communities; this holds what makes dynamic extension cheap (entity → community,
community sizes) and what the store has no place for (drift since the last build, communities whose
summary awaits a model update). It lives in process memory, one entry per recently used group:
an evicted or never-seen group is reloaded from the store, and its drift is then measured exactly
(see :meth:`CommunityBuilder.drift`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from chronomem.communities.drift import DriftCounter
from chronomem.domain import Community

__all__ = ["GroupState", "GroupStates"]


@dataclass(slots=True)
class GroupState:
    membership: dict[str, str] = field(default_factory=dict)  # entity id → community id
    sizes: dict[str, int] = field(default_factory=dict)  # community id → members
    counter: DriftCounter | None = None  # None: not known in this process, measure it
    seen_unassigned: set[str] = field(default_factory=set)  # counted once as added, still unplaced
    pending: dict[str, list[str]] = field(default_factory=dict)  # community → newcomers not yet summarised

    @classmethod
    def from_communities(cls, communities: Iterable[Community], counter: DriftCounter | None = None) -> GroupState:
        state = cls(counter=counter)
        for community in communities:
            state.sizes[community.id] = len(community.member_ids)
            for entity_id in community.member_ids:
                state.membership[entity_id] = community.id
        return state

    def move(self, entity_id: str, community_id: str) -> str | None:
        """Record ``entity_id`` as a member of ``community_id``; returns its previous community."""
        before = self.membership.get(entity_id)
        if before is not None:
            self.sizes[before] = self.sizes.get(before, 1) - 1
        self.membership[entity_id] = community_id
        self.sizes[community_id] = self.sizes.get(community_id, 0) + 1
        self.seen_unassigned.discard(entity_id)
        return before

    def mark_pending(self, community_id: str, newcomers: Sequence[str]) -> None:
        self.pending.setdefault(community_id, []).extend(newcomers)


class GroupStates:
    """Per-group state, least recently used groups dropped past ``capacity``."""

    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._states: OrderedDict[str, GroupState] = OrderedDict()

    def get(self, group_id: str) -> GroupState | None:
        state = self._states.get(group_id)
        if state is not None:
            self._states.move_to_end(group_id)
        return state

    def put(self, group_id: str, state: GroupState) -> None:
        self._states[group_id] = state
        self._states.move_to_end(group_id)
        while len(self._states) > self._capacity:
            self._states.popitem(last=False)

    def drop(self, group_id: str) -> None:
        self._states.pop(group_id, None)
