"""Export and import of a whole group: every object it holds, every fact's history, and the vectors.

An export carries the group's episodes, entities, facts, mentions and communities, and their vectors
(float32, base64), so a round trip needs no model and gives back every object exactly, vectors bit
for bit (a store keeps a unit vector as it was given). ``facts`` holds each fact's latest version;
``fact_history`` its earlier versions, each as our records held it and with the interval of T′ it
was in force, so the imported group answers "true at t as known at t′" exactly as the exported one
(docs/design.md §1: history is append-only, and a copy keeps it).

The format is versioned (``format``): ``chronomem.group/2`` carries the history; a
``chronomem.group/1`` document (heads only) still imports, with each fact's history starting at
its latest version. Any other format is refused with a message naming the ones this version reads.

The export names the embedder that made the vectors; importing into a memory with another embedder
is refused unless ``reembed=True``, which embeds the same texts ingestion embeds (entity names, fact
texts, community names, episode texts) with the importing embedder, deterministically.

:meth:`chronomem.Chronomem.export_group` and :meth:`~chronomem.Chronomem.import_group` call these;
:func:`read_export` reads an export document (the CLI's ``import --format export``).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from chronomem.domain import Community, Entity, Episode, Fact, FactVersion, Mention
from chronomem.embed.base import Embedder
from chronomem.errors import ConflictError, InvalidInputError
from chronomem.store.base import GraphWrite, GroupStats, Scope, Store

__all__ = ["EXPORT_FORMAT", "READABLE_FORMATS", "GroupExport", "export_group", "import_group", "read_export"]

EXPORT_FORMAT = "chronomem.group/2"  # what export_group writes
READABLE_FORMATS = ("chronomem.group/1", EXPORT_FORMAT)  # /1: latest versions only, no fact_history


def _unreadable(found: object) -> str:
    return (f"unsupported export format {found!r}: this chronomem reads {', '.join(READABLE_FORMATS)} "
            "(an export from a newer chronomem needs that version to import it)")


class GroupExport(BaseModel):
    """Everything one group holds, in a form that imports back exactly."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = EXPORT_FORMAT
    group_id: str
    embedder: str
    dimension: int
    episodes: tuple[Episode, ...] = ()
    entities: tuple[Entity, ...] = ()
    facts: tuple[Fact, ...] = ()  # each fact's latest version
    fact_history: tuple[FactVersion, ...] = ()  # earlier versions, by fact (as in ``facts``) then version
    mentions: tuple[Mention, ...] = ()
    communities: tuple[Community, ...] = ()
    vectors: dict[Scope, dict[str, str]] = {}  # scope -> id -> base64 of little-endian float32

    @field_validator("format")
    @classmethod
    def _readable(cls, value: str) -> str:
        if value not in READABLE_FORMATS:
            raise ValueError(_unreadable(value))
        return value


def read_export(document: str | bytes) -> GroupExport:
    """An export document (JSON) read and checked; ``InvalidInputError`` with a readable message
    for an unknown format or a document that is not an export."""
    try:
        return GroupExport.model_validate_json(document)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        unknown = next((e for e in errors if e["loc"] == ("format",)), None)
        if unknown is not None:
            raise InvalidInputError(_unreadable(unknown["input"])) from None
        first = errors[0]
        where = ".".join(str(part) for part in first["loc"]) or "the document"
        raise InvalidInputError(f"not a chronomem group export: {where}: {first['msg']} "
                                f"({len(errors)} error(s))") from None


async def export_group(store: Store, embedder: Embedder, group_id: str) -> GroupExport:
    """Every object of the group and its vectors; ``embedder`` is the one that made them."""
    episodes = await store.list_episodes(group_id, newest_first=False)
    entities = await store.list_entities(group_id)
    facts = await store.list_facts(group_id)
    history: list[FactVersion] = []
    for fact in facts:
        if fact.version > 1:  # a first version has no earlier ones (store.history.revise)
            history += [v for v in await store.fact_history(group_id, fact.id) if v.recorded_to is not None]
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
        episodes=tuple(episodes), entities=tuple(entities), facts=tuple(facts), fact_history=tuple(history),
        mentions=tuple(mentions),
        communities=tuple(communities), vectors=vectors,
    )


async def import_group(
    store: Store, embedder: Embedder, export: GroupExport, *, group_id: str | None = None, reembed: bool = False
) -> GroupStats:
    """Write an export into ``group_id`` (default: the exported group's id), which must be empty,
    in one atomic write: every fact with its history as exported (a history that is not whole and
    gapless is refused, ``InvalidInputError``, and nothing is written). Returns the group's counts
    afterwards."""
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
        facts=_regroup(export.facts, target), fact_history=_regroup_history(export.fact_history, target),
        mentions=_regroup(export.mentions, target),
        communities=_regroup(export.communities, target),
    )
    if same_model:
        _attach_vectors(batch, export)
    else:
        await _embed_into(batch, embedder)
    async with store.bulk_load(target):  # a new group: its indexes are built once, after the write
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


def _regroup_history(versions: Sequence[FactVersion], group_id: str) -> list[FactVersion]:
    return [v if v.fact.group_id == group_id else v.model_copy(update={"fact": _regroup([v.fact], group_id)[0]})
            for v in versions]
