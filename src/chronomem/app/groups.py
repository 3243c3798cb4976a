"""The memory operations on a store group that every shell offers, written once.

A :class:`GroupOperations` works on store groups it is given: it does not decide who may reach
them. :class:`~chronomem.app.tenancy.ProjectSpace` resolves a project's user or graph to its group
first (so the HTTP API never reaches across projects) and then calls these; the MCP server, which
serves one trusted local agent, names its groups directly. Either way an episode is queued, a
fact corrected or an entity forgotten by the same code.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from chronomem.app import navigation
from chronomem.app.navigation import Direction, Neighbour, Subgraph
from chronomem.domain import Entity, Episode, Fact, FactSource, FactVersion, to_relation_type
from chronomem.errors import InvalidInputError
from chronomem.memory import Chronomem
from chronomem.store.base import GraphWrite
from chronomem.telemetry import annotate

if TYPE_CHECKING:
    from chronomem.search.searcher import SearchResults

__all__ = ["MAX_EPISODE_METADATA_KEYS", "GroupOperations", "Page", "decode_cursor", "encode_cursor", "merge_metadata"]

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing and the cursor of the next one (``None`` on the last page)."""

    items: list[T]
    next_cursor: str | None


def encode_cursor(offset: int) -> str:
    """An opaque cursor for a position in a listing (clients pass it back, never build it)."""
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int:
    """The position a cursor stands for (``InvalidInputError`` for one we did not issue)."""
    if not cursor:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, _, value = text.partition(":")
        offset = int(value)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidInputError(f"cursor {cursor!r} is not one this server issued") from None
    if kind != "o" or offset < 0:
        raise InvalidInputError(f"cursor {cursor!r} is not one this server issued")
    return offset


def _page(found: list[T], limit: int, offset: int) -> Page[T]:
    more = len(found) > limit
    return Page(found[:limit], encode_cursor(offset + limit) if more else None)


MAX_EPISODE_METADATA_KEYS = 10
"""The most keys an episode's metadata may hold after an update merges onto it (Zep v4's bound)."""


def _scalar(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int | bool)


def merge_metadata(stored: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``stored`` with ``changes`` merged onto it: a key set to ``None`` is removed, any other key
    is set. Values must be strings, finite numbers, booleans or arrays of those, and the result may
    hold at most :data:`MAX_EPISODE_METADATA_KEYS` keys; else ``InvalidInputError`` naming the
    first offending key (the check reads ``changes`` only: keys stored before are kept as they are)."""
    for key, value in changes.items():
        if value is None or _scalar(value) or (isinstance(value, list) and all(_scalar(v) for v in value)):
            continue
        raise InvalidInputError(f"metadata[{key!r}]: a value must be a string, number, boolean or an array of "
                                f"those, not {type(value).__name__}")
    merged = {k: v for k, v in stored.items() if k not in changes}
    merged |= {k: v for k, v in changes.items() if v is not None}
    if len(merged) > MAX_EPISODE_METADATA_KEYS:
        raise InvalidInputError(f"metadata: at most {MAX_EPISODE_METADATA_KEYS} keys after the merge, "
                                f"this one would hold {len(merged)}")
    return merged


class GroupOperations:
    """Queue, read, correct and forget what a store group holds. ``notify`` wakes the in-process
    workers after episodes were queued; ``source`` names who edits ("project acme") in the edit
    episodes a change of a fact's type or attributes records."""

    def __init__(self, memory: Chronomem, *, notify: Callable[[], None] = lambda: None, source: str = "") -> None:
        self.memory = memory
        self._notify = notify
        self._source = source

    # -- writes ------------------------------------------------------------------------------------

    async def queue(
        self, episodes: Sequence[Episode], *, record: Callable[[Sequence[Episode]], R]
    ) -> tuple[list[Episode], R]:
        """Store episodes durably, in order, and queue them for extraction; returns at once, with
        the episodes as stored and what ``record`` returned.

        Ids a request repeats, or that the group already holds, are refused before anything is
        written. ``record`` (a task, a thread's message ids; ``lambda _: None`` for nothing) runs after
        that check and before the episodes are stored, so a crash in between leaves a record nobody
        reads, never an episode nobody can find."""
        if len({e.id for e in episodes}) != len(episodes):
            raise InvalidInputError("two episodes of one request carry the same id")
        await self.memory.refuse_reused_ids(episodes)
        recorded = record(episodes)
        # the request's span and log lines name the task and episodes the workers will pick up
        annotate(task_id=getattr(recorded, "task_id", None), episode_ids=[e.id for e in episodes])
        stored = await self.memory.enqueue(episodes)
        self._notify()
        return stored, recorded

    async def add_fact(self, group_id: str, source: str, relation_type: str, target: str, fact: str,
                       **options: Any) -> Fact:
        return await self.memory.add_fact(group_id, source, relation_type, target, fact, **options)

    async def add_entity(self, group_id: str, name: str, *, summary: str = "", labels: Sequence[str] = (),
                         attributes: dict[str, Any] | None = None) -> tuple[Entity, bool]:
        """Add an entity by hand (Zep's ``node.add``), recorded as an edit episode that mentions it,
        as every hand edit is (:mod:`chronomem.edits`). An entity the group already has under an
        equal name (resolution's evidence) is returned unchanged instead; the flag says whether
        the entity is new."""
        from chronomem.edits import changed_fields, edit_episode, edit_mention

        name = name.strip()
        if not name:
            raise InvalidInputError("an entity's name cannot be empty")
        found = await self.memory.store.find_entities_by_names(group_id, [name])
        if found:
            return found[0], False
        try:
            entity = Entity(group_id=group_id, name=name, summary=summary, summary_source="edit" if summary else "",
                            labels=tuple(labels) or ("Entity",), attributes=attributes or {})
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from exc
        fields = entity.model_dump(include={"name", "summary", "labels", "attributes"})
        episode = edit_episode(entity, changed_fields({}, fields), source=self._source)
        vectors = await self.memory.embedder.embed([entity.name, episode.text])
        await self.memory.store.write(GraphWrite(
            group_id, episodes=[episode], entities=[entity], mentions=[edit_mention(entity, episode)],
            entity_vectors={entity.id: vectors[0]}, episode_vectors={episode.id: vectors[1]}))
        return entity, True

    async def update_entity(self, group_id: str, entity_id: str, **changes: Any) -> Entity:
        """Rename an entity or change its summary, labels or attributes; recorded as an edit."""
        return await self.memory.update_entity(group_id, entity_id, source=self._source, **changes)

    async def update_fact(
        self,
        group_id: str,
        fact_id: str,
        *,
        fact: str | None = None,
        relation_type: str | None = None,
        valid_at: datetime | None = None,
        invalid_at: datetime | None = None,
        attributes: dict[str, Any] | None = None,
        source: str | FactSource | None = None,
    ) -> Fact:
        """Change a fact; every change is a new version in its history (the store keeps the one it
        replaces). A correction of its text or time range goes through
        :meth:`Chronomem.update_fact`, citing ``source`` (an episode id or a named source) when one is
        given; a change of relation type or attributes is recorded as an edit episode that joins the
        fact's provenance."""
        if relation_type is None and attributes is None:
            dates = {name: value for name, value in (("valid_at", valid_at), ("invalid_at", invalid_at))
                     if value is not None}
            return await self.memory.update_fact(group_id, fact_id, fact=fact, source=source, **dates)
        if source is not None:
            raise InvalidInputError("a change of relation type or attributes is cited by its own edit "
                                    "episode: leave out source_episode_uuid and source")
        return await self._edit_fact(group_id, fact_id, fact=fact, relation_type=relation_type, valid_at=valid_at,
                                     invalid_at=invalid_at, attributes=attributes)

    async def _edit_fact(
        self,
        group_id: str,
        fact_id: str,
        *,
        fact: str | None,
        relation_type: str | None,
        valid_at: datetime | None,
        invalid_at: datetime | None,
        attributes: dict[str, Any] | None,
    ) -> Fact:
        from chronomem.edits import changed_fields, edit_episode

        stored = await self.memory.get_fact(group_id, fact_id)
        relation_type = to_relation_type(relation_type) if relation_type is not None else None
        wanted = {k: v for k, v in {"fact": fact, "relation_type": relation_type, "valid_at": valid_at,
                                     "invalid_at": invalid_at, "attributes": attributes}.items() if v is not None}
        changes = changed_fields(stored.model_dump(include=set(wanted)), wanted)
        if not changes:
            return stored
        try:
            updated = Fact.model_validate(stored.model_dump() | wanted)
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from exc
        if updated.valid_at and updated.invalid_at and updated.invalid_at < updated.valid_at:
            raise InvalidInputError("invalid_at is before valid_at")
        episode = edit_episode(stored, changes, source=self._source)
        updated = updated.model_copy(update={"episode_ids": (*stored.episode_ids, episode.id)})
        texts = [episode.text, *([updated.fact] if "fact" in changes else [])]
        vectors = await self.memory.embedder.embed(texts)
        batch = GraphWrite(group_id, episodes=[episode], facts=[updated], episode_vectors={episode.id: vectors[0]})
        if "fact" in changes:
            batch.fact_vectors = {updated.id: vectors[1]}
        await self.memory.store.write(batch)
        return await self.memory.get_fact(group_id, fact_id)  # as stored: the store numbers the version

    async def update_episode_metadata(self, group_id: str, episode_id: str, changes: dict[str, Any]) -> Episode:
        """Merge ``changes`` onto an episode's metadata (:func:`merge_metadata`: a ``None`` removes
        a key) and return the episode as stored. Its text is not touched: it stays the root of
        provenance, and metadata is not part of it. Bad input changes nothing
        (``InvalidInputError``); an unknown episode is ``NotFoundError``. Two updates of one
        episode at the same moment are not merged with each other: the later write wins whole."""
        stored = await self.memory.get_episode(group_id, episode_id)
        merged = merge_metadata(stored.metadata, changes)
        if not changes:
            return stored
        return await self.memory.store.set_episode_metadata(group_id, episode_id, merged)

    # -- reads -------------------------------------------------------------------------------------

    async def search(self, group_ids: Sequence[str], query: str, **options: Any) -> SearchResults:
        return await self.memory.search(list(group_ids), query, **options)

    async def context(self, group_ids: Sequence[str], query: str, **options: Any) -> str:
        return await self.memory.context(list(group_ids), query, **options)

    async def fact_history(self, group_id: str, fact_id: str) -> list[FactVersion]:
        return await self.memory.fact_history(group_id, fact_id)

    async def list_episodes(self, group_id: str, *, limit: int) -> list[Episode]:
        return await self.memory.list_episodes(group_id, limit=limit)

    async def get_episode(self, group_id: str, episode_id: str) -> Episode:
        return await self.memory.get_episode(group_id, episode_id)

    async def get_entity(self, group_id: str, entity_id: str) -> Entity:
        return await self.memory.get_entity(group_id, entity_id)

    async def get_fact(self, group_id: str, fact_id: str) -> Fact:
        return await self.memory.get_fact(group_id, fact_id)

    async def list_entities(self, group_id: str, *, limit: int, cursor: str | None = None) -> Page[Entity]:
        """A group's entities, oldest first, one page at a time."""
        offset = decode_cursor(cursor)
        return _page(await self.memory.list_entities(group_id, limit=limit + 1, offset=offset), limit, offset)

    async def list_facts(self, group_id: str, *, limit: int, cursor: str | None = None) -> Page[Fact]:
        """A group's facts (superseded versions included), oldest first, one page at a time."""
        offset = decode_cursor(cursor)
        return _page(await self.memory.list_facts(group_id, limit=limit + 1, offset=offset), limit, offset)

    async def neighbours(self, group_id: str, entity_id: str, *, direction: Direction = "both") -> list[Neighbour]:
        """The entities one current fact away, with the facts that join them
        (:func:`chronomem.app.navigation.neighbours`)."""
        return await navigation.neighbours(self.memory, group_id, entity_id, direction=direction)

    async def subgraph(self, group_id: str, seeds: Sequence[str], **bounds: Any) -> Subgraph:
        """The entities within ``depth`` facts of ``seeds`` and the facts among them
        (:func:`chronomem.app.navigation.subgraph`)."""
        return await navigation.subgraph(self.memory, group_id, seeds, **bounds)

    # -- forgetting --------------------------------------------------------------------------------

    async def delete_episode(self, group_id: str, episode_id: str) -> None:
        """Forget an episode and whatever only it supported."""
        await self.memory.remove_episode(group_id, episode_id)

    async def delete_entity(self, group_id: str, entity_id: str) -> Entity:
        return await self.memory.delete_entity(group_id, entity_id)

    async def delete_fact(self, group_id: str, fact_id: str) -> Fact:
        return await self.memory.delete_fact(group_id, fact_id)
