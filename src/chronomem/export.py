"""Export and import of a whole group: every object it holds and its stored vectors.

An export carries the group's episodes, entities, facts (every version), mentions and communities,
and their vectors (float32, base64), so a round trip needs no model and gives back every object
exactly, vectors bit for bit (a store keeps a unit vector as it was given). The export names the
embedder that made the vectors; importing into a memory with another embedder is refused unless
``reembed=True``, which embeds the same texts ingestion embeds (entity names, fact texts, community
names, episode texts) with the importing embedder, deterministically.

:meth:`chronomem.Chronomem.export_group` and :meth:`~chronomem.Chronomem.import_group` call these.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from chronomem.domain import Community, Entity, Episode, Fact, Mention
from chronomem.embed.base import Embedder
from chronomem.errors import ConflictError, InvalidInputError
from chronomem.store.base import GraphWrite, GroupStats, Scope, Store

__all__ = ["EXPORT_FORMAT", "GroupExport", "export_group", "import_group"]

EXPORT_FORMAT = "chronomem.group/1"


class GroupExport(BaseModel):
    """Everything one group holds, in a form that imports back exactly."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal["chronomem.group/1"] = "chronomem.group/1"
    group_id: str
    embedder: str
    dimension: int
    episodes: tuple[Episode, ...] = ()
    entities: tuple[Entity, ...] = ()
    facts: tuple[Fact, ...] = ()
    mentions: tuple[Mention, ...] = ()
    communities: tuple[Community, ...] = ()
    vectors: dict[Scope, dict[str, str]] = {}  # scope -> id -> base64 of little-endian float32


async def export_group(store: Store, embedder: Embedder, group_id: str) -> GroupExport:
    """Every object of the group and its vectors; ``embedder`` is the one that made them."""
    episodes = await store.list_episodes(group_id, newest_first=False)
    entities = await store.list_entities(group_id)
    facts = await store.list_facts(group_id)
    communities = await store.list_communities(group_id)
    mentioned = await store.entities_of_episodes(group_id, [e.id for e in episodes])
    mentions = [
        Mention(group_id=group_id, episode_id=episode_id, entity_id=entity_id)
        for episode_id in sorted(mentioned)
        for entity_id in sorted(mentioned[episode_id])
    ]
    scoped: dict[Scope, list[str]] = {
        Scope.EPISODES: [e.id for e in episodes], Scope.ENTITIES: [e.id for e in entities],
        Scope.FACTS: [f.id for f in facts], Scope.COMMUNITIES: [c.id for c in communities],
    }
    vectors: dict[Scope, dict[str, str]] = {}
    for scope, ids in scoped.items():
        found = await store.get_vectors(group_id, scope, ids) if ids else {}
        vectors[scope] = {i: _encode(found[i]) for i in sorted(found)}
    return GroupExport(
        group_id=group_id, embedder=embedder.model_name, dimension=embedder.dimension,
        episodes=tuple(episodes), entities=tuple(entities), facts=tuple(facts), mentions=tuple(mentions),
        communities=tuple(communities), vectors=vectors,
    )


async def import_group(
    store: Store, embedder: Embedder, export: GroupExport, *, group_id: str | None = None, reembed: bool = False
) -> GroupStats:
    """Write an export into ``group_id`` (default: the exported group's id), which must be empty,
    in one atomic write. Returns the group's counts afterwards."""
    target = group_id or export.group_id
    if (await store.stats(target)).episodes or await store.list_entities(target, limit=1):
        raise ConflictError(f"group {target!r} is not empty; import into a new group id")
    same_model = export.embedder == embedder.model_name and export.dimension == embedder.dimension
    if not same_model and not reembed:
        raise ConflictError(
            f"the export's vectors come from {export.embedder!r} ({export.dimension}d) but this memory "
            f"embeds with {embedder.model_name!r}; pass reembed=True to embed the texts again"
        )
    batch = GraphWrite(
        target, episodes=_regroup(export.episodes, target), entities=_regroup(export.entities, target),
        facts=_regroup(export.facts, target), mentions=_regroup(export.mentions, target),
        communities=_regroup(export.communities, target),
    )
    if same_model:
        _attach_vectors(batch, export)
    else:
        await _embed_into(batch, embedder)
    await store.write(batch)
    return await store.stats(target)


def _attach_vectors(batch: GraphWrite, export: GroupExport) -> None:
    def decoded(scope: Scope) -> dict[str, np.ndarray]:
        return {i: _decode(v, export.dimension) for i, v in export.vectors.get(scope, {}).items()}

    batch.episode_vectors = decoded(Scope.EPISODES)
    batch.entity_vectors = decoded(Scope.ENTITIES)
    batch.fact_vectors = decoded(Scope.FACTS)
    batch.community_vectors = decoded(Scope.COMMUNITIES)


async def _embed_into(batch: GraphWrite, embedder: Embedder) -> None:
    """The texts ingestion embeds, embedded again with this memory's embedder."""

    async def embed(pairs: list[tuple[str, str]]) -> dict[str, np.ndarray]:
        if not pairs:
            return {}
        matrix = await embedder.embed([text for _, text in pairs])
        return {object_id: matrix[row] for row, (object_id, _) in enumerate(pairs)}

    batch.episode_vectors = await embed([(e.id, e.text) for e in batch.episodes])
    batch.entity_vectors = await embed([(e.id, e.name) for e in batch.entities])
    batch.fact_vectors = await embed([(f.id, f.fact) for f in batch.facts])
    batch.community_vectors = await embed([(c.id, c.name) for c in batch.communities if c.name])


def _encode(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _decode(text: str, dimension: int) -> np.ndarray:
    vector = np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)
    if vector.shape != (dimension,):
        raise InvalidInputError(f"a vector in the export has {vector.shape[0]} values, expected {dimension}")
    return vector


_Grouped = TypeVar("_Grouped", Episode, Entity, Fact, Mention, Community)


def _regroup(objects: Sequence[_Grouped], group_id: str) -> list[_Grouped]:
    return [o if o.group_id == group_id else o.model_copy(update={"group_id": group_id}) for o in objects]
