"""What the Zep routes need beyond the native operations: finding an object by its uuid alone.

Zep addresses episodes, edges and nodes by uuid with no graph named (``graph.edge.get(uuid)``),
while chronomem keeps each graph in its own store group. :class:`Locator` finds the group: first
where this process last saw the uuid, then by asking each of the caller's project's groups in turn
(one indexed read each: about a millisecond per hundred graphs on the embedded store). Only the
project's own groups are asked, so a uuid of another project is not found, as everywhere else.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from chronomem.app.tenancy import GraphRef, ProjectSpace
from chronomem.controlplane import ControlPlane
from chronomem.domain import Entity, Episode, Fact
from chronomem.errors import NotFoundError
from chronomem.memory import Chronomem

__all__ = ["Located", "Locator"]

T = TypeVar("T")
Located = tuple[GraphRef, str, T]  # the graph, its store group, the object
_CACHE_SIZE = 100_000
_SEEN: OrderedDict[tuple[str, str], tuple[GraphRef, str]] = OrderedDict()  # (project, uuid) -> where, this process


class Locator:
    """Finds the graph of an episode, entity or fact of one project by uuid."""

    def __init__(self, space: ProjectSpace, control: ControlPlane, memory: Chronomem) -> None:
        self._space = space
        self._control = control
        self._memory = memory

    def remember(self, ref: GraphRef, group_id: str, ids: Sequence[str]) -> None:
        """Note where these objects live (the routes call it for what they return)."""
        for object_id in ids:
            key = (self._space.project.id, object_id)
            _SEEN[key] = (ref, group_id)
            _SEEN.move_to_end(key)
        while len(_SEEN) > _CACHE_SIZE:
            _SEEN.popitem(last=False)

    async def episode(self, uuid: str) -> Located[Episode]:
        return await self._find("episode", uuid, self._memory.store.get_episodes)

    async def entity(self, uuid: str) -> Located[Entity]:
        return await self._find("node", uuid, self._memory.store.get_entities)

    async def fact(self, uuid: str) -> Located[Fact]:
        return await self._find("edge", uuid, self._memory.store.get_facts)

    async def _find(
        self, kind: str, uuid: str, fetch: Callable[[str, Sequence[str]], Awaitable[Sequence[Any]]]
    ) -> Located[Any]:
        seen = _SEEN.get((self._space.project.id, uuid))
        for ref, group_id in ([seen] if seen else []) + self._groups():
            found = await fetch(group_id, [uuid])
            if found:
                self.remember(ref, group_id, [uuid])
                return ref, group_id, found[0]
        raise NotFoundError(f"{kind} {uuid!r} not found")

    def _groups(self) -> list[tuple[GraphRef, str]]:
        groups = []
        for kind, name, group_id in self._control.owned_groups(self._space.project.id):
            ref = GraphRef(user_id=name) if kind == "user" else GraphRef(graph_id=name)
            groups.append((ref, group_id))
        return groups
