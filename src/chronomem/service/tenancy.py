"""What one project may do: the service's operations, each a short composition of the control plane
(who owns what) and the library facade (the graph).

Every operation starts from the caller's :class:`~chronomem.service.controlplane.Project`, resolves
the names it was given (user, thread, graph, task) *inside that project* and only then touches a
store group. A name from another project is simply not found, so no route can reach across.
HTTP routers, and anything else that serves projects, call one method here per request.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from chronomem.domain import Entity, Episode, EpisodeStatus, Fact
from chronomem.errors import InvalidInputError, NotFoundError
from chronomem.ingest.json_mapping import JsonMapping
from chronomem.ingest.ontology_spec import OntologySpec
from chronomem.memory import Chronomem, NewMessage
from chronomem.service import project_config
from chronomem.service.controlplane import (
    ControlPlane,
    GraphRecord,
    Project,
    TaskRecord,
    ThreadRecord,
    UserRecord,
)
from chronomem.service.project_config import InForce
from chronomem.store.base import GraphWrite

if TYPE_CHECKING:
    from chronomem.search.searcher import SearchResults

__all__ = ["GraphRef", "Page", "ProjectSpace", "TaskView", "decode_cursor", "encode_cursor", "task_status"]

_THREAD_CONTEXT_MESSAGES = 2  # a thread's context is about its latest exchange when no query is given


@dataclass(frozen=True, slots=True)
class GraphRef:
    """A user's graph or a named graph of the caller's project: exactly one is set."""

    user_id: str | None = None
    graph_id: str | None = None

    def __post_init__(self) -> None:
        if (self.user_id is None) == (self.graph_id is None):
            raise InvalidInputError("give exactly one of user_id and graph_id")


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing and the cursor of the next one (``None`` on the last page)."""

    items: list[T]
    next_cursor: str | None


def encode_cursor(offset: int) -> str:
    """An opaque cursor: callers hand it back, never build it."""
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


@dataclass(frozen=True, slots=True)
class TaskView:
    """A task and the current state of its episodes."""

    task: TaskRecord
    status: str
    episodes: tuple[Episode, ...]

    @property
    def attempts(self) -> int:
        return max((e.attempts for e in self.episodes), default=0)

    @property
    def error(self) -> str | None:
        return next((e.last_error for e in self.episodes if e.status is EpisodeStatus.FAILED), None)


def _page(found: list[T], limit: int, offset: int) -> Page[T]:
    more = len(found) > limit
    return Page(found[:limit], encode_cursor(offset + limit) if more else None)


def task_status(episodes: Sequence[Episode]) -> str:
    """``failed`` if any failed, else ``processing`` while any is held by a worker, else ``pending``
    while any waits, else ``done`` (stored-but-unextracted episodes count as done: no model)."""
    statuses = {e.status for e in episodes}
    for status in (EpisodeStatus.FAILED, EpisodeStatus.PROCESSING, EpisodeStatus.PENDING):
        if status in statuses:
            return status.value
    return EpisodeStatus.DONE.value


class ProjectSpace:
    """The service's operations for one project."""

    def __init__(
        self, project: Project, control: ControlPlane, memory: Chronomem, notify: Callable[[], None] = lambda: None
    ) -> None:
        self.project = project
        self._control = control
        self._memory = memory
        self._notify = notify  # wakes the in-process workers after a write queued episodes

    @property
    def _pid(self) -> str:
        return self.project.id

    # -- users -------------------------------------------------------------------------------------

    def create_user(self, user_id: str, **profile: Any) -> UserRecord:
        return self._control.create_user(self._pid, user_id, **profile)

    def get_user(self, user_id: str) -> UserRecord:
        return self._control.get_user(self._pid, user_id)

    def update_user(self, user_id: str, **changes: Any) -> UserRecord:
        return self._control.update_user(self._pid, user_id, **changes)

    def list_users(self, *, limit: int, offset: int) -> tuple[list[UserRecord], int]:
        return self._control.list_users(self._pid, limit=limit, offset=offset), self._control.count_users(self._pid)

    async def delete_user(self, user_id: str) -> UserRecord:
        """Forget the user, their threads and their whole graph."""
        user = self._control.delete_user(self._pid, user_id)
        await self._memory.delete_group(user.group_id)
        return user

    # -- named graphs ------------------------------------------------------------------------------

    def create_graph(self, graph_id: str, *, name: str = "", description: str = "") -> GraphRecord:
        return self._control.create_graph(self._pid, graph_id, name=name, description=description)

    def get_graph(self, graph_id: str) -> GraphRecord:
        return self._control.get_graph(self._pid, graph_id)

    def list_graphs(self, *, limit: int, offset: int) -> list[GraphRecord]:
        return self._control.list_graphs(self._pid, limit=limit, offset=offset)

    async def delete_graph(self, graph_id: str) -> GraphRecord:
        graph = self._control.delete_graph(self._pid, graph_id)
        await self._memory.delete_group(graph.group_id)
        return graph

    def group_of(self, ref: GraphRef) -> str:
        """The store group behind a user or named graph of this project (``NotFoundError`` else)."""
        if ref.user_id is not None:
            return self._control.get_user(self._pid, ref.user_id).group_id
        assert ref.graph_id is not None
        return self._control.get_graph(self._pid, ref.graph_id).group_id

    # -- threads -----------------------------------------------------------------------------------

    def create_thread(self, thread_id: str, user_id: str) -> ThreadRecord:
        return self._control.create_thread(self._pid, thread_id, user_id)

    def get_thread(self, thread_id: str) -> ThreadRecord:
        return self._control.get_thread(self._pid, thread_id)

    def list_threads(self, *, user_id: str | None, limit: int, offset: int) -> list[ThreadRecord]:
        if user_id is not None:
            self._control.get_user(self._pid, user_id)
        return self._control.list_threads(self._pid, user_id=user_id, limit=limit, offset=offset)

    def delete_thread(self, thread_id: str) -> ThreadRecord:
        return self._control.delete_thread(self._pid, thread_id)

    async def add_messages(self, thread_id: str, messages: Sequence[NewMessage]) -> tuple[list[Episode], TaskRecord]:
        """Store the messages durably in the thread's user graph and queue them; returns at once."""
        thread = self._control.get_thread(self._pid, thread_id)
        group_id = self._control.get_user(self._pid, thread.user_id).group_id
        episodes = Chronomem.message_episodes(group_id, messages, source=f"thread {thread_id}")
        self._refuse_duplicate_ids(episodes)
        stored = await self._memory.enqueue(episodes)
        self._control.append_messages(self._pid, thread_id, [e.id for e in stored])
        task = self._control.create_task(self._pid, group_id, [e.id for e in stored])
        self._notify()
        return stored, task

    def _refuse_duplicate_ids(self, episodes: Sequence[Episode]) -> None:
        if len({e.id for e in episodes}) != len(episodes):
            raise InvalidInputError("two messages of one request carry the same uuid")

    async def thread_messages(self, thread_id: str, *, last: int | None = None) -> list[Episode]:
        thread = self._control.get_thread(self._pid, thread_id)
        group_id = self._control.get_user(self._pid, thread.user_id).group_id
        ids = self._control.message_ids(self._pid, thread_id, last=last)
        return await self._memory.get_episodes(group_id, ids)

    async def thread_context(self, thread_id: str, query: str | None, **options: Any) -> str:
        """The user's context block for ``query``, or for the thread's latest messages."""
        thread = self._control.get_thread(self._pid, thread_id)
        if not query:
            latest = await self.thread_messages(thread_id, last=_THREAD_CONTEXT_MESSAGES)
            query = "\n".join(e.text for e in latest)
        if not query:
            return ""
        return await self.user_context(thread.user_id, query, **options)

    async def user_context(self, user_id: str, query: str, **options: Any) -> str:
        group_id = self._control.get_user(self._pid, user_id).group_id
        return await self._memory.context([group_id], query, **options)

    # -- graph writes ------------------------------------------------------------------------------

    async def add_episode(self, ref: GraphRef, content: str, **fields: Any) -> tuple[Episode, TaskRecord]:
        """Store one episode (text, json or message) durably and queue it; returns at once."""
        group_id = self.group_of(ref)
        episode = Chronomem.new_episode(group_id, content, **fields)
        [stored] = await self._memory.enqueue([episode])
        task = self._control.create_task(self._pid, group_id, [stored.id])
        self._notify()
        return stored, task

    async def add_fact(self, ref: GraphRef, source: str, relation_type: str, target: str, fact: str,
                       **times: Any) -> Fact:
        return await self._memory.add_fact(self.group_of(ref), source, relation_type, target, fact, **times)

    # -- graph reads and deletes -------------------------------------------------------------------

    async def search(self, ref: GraphRef, query: str, **options: Any) -> SearchResults:
        return await self._memory.search([self.group_of(ref)], query, **options)

    async def list_episodes(self, ref: GraphRef, *, limit: int) -> list[Episode]:
        return await self._memory.list_episodes(self.group_of(ref), limit=limit)

    async def get_episode(self, ref: GraphRef, episode_id: str) -> Episode:
        return await self._memory.get_episode(self.group_of(ref), episode_id)

    async def delete_episode(self, ref: GraphRef, episode_id: str) -> None:
        await self._memory.remove_episode(self.group_of(ref), episode_id)

    async def get_entity(self, ref: GraphRef, entity_id: str) -> Entity:
        return await self._memory.get_entity(self.group_of(ref), entity_id)

    async def delete_entity(self, ref: GraphRef, entity_id: str) -> Entity:
        return await self._memory.delete_entity(self.group_of(ref), entity_id)

    async def get_fact(self, ref: GraphRef, fact_id: str) -> Fact:
        return await self._memory.get_fact(self.group_of(ref), fact_id)

    async def delete_fact(self, ref: GraphRef, fact_id: str) -> Fact:
        return await self._memory.delete_fact(self.group_of(ref), fact_id)

    async def list_entities(self, ref: GraphRef, *, limit: int, cursor: str | None = None) -> Page[Entity]:
        """A graph's entities, oldest first, one page at a time."""
        offset = decode_cursor(cursor)
        found = await self._memory.list_entities(self.group_of(ref), limit=limit + 1, offset=offset)
        return _page(found, limit, offset)

    async def list_facts(self, ref: GraphRef, *, limit: int, cursor: str | None = None) -> Page[Fact]:
        """A graph's facts (superseded versions included), oldest first, one page at a time."""
        offset = decode_cursor(cursor)
        found = await self._memory.list_facts(self.group_of(ref), limit=limit + 1, offset=offset)
        return _page(found, limit, offset)

    async def update_entity(self, ref: GraphRef, entity_id: str, **changes: Any) -> Entity:
        """Rename an entity or change its summary, labels or attributes; recorded as an edit."""
        return await self._memory.update_entity(self.group_of(ref), entity_id, source=self._source, **changes)

    async def update_fact(
        self,
        ref: GraphRef,
        fact_id: str,
        *,
        fact: str | None = None,
        relation_type: str | None = None,
        valid_at: datetime | None = None,
        invalid_at: datetime | None = None,
        attributes: dict[str, Any] | None = None,
    ) -> Fact:
        """Change a fact's text, relation type, validity or attributes; recorded as an edit.

        Interim: this rewrites the stored fact in place (with the edit episode added to its
        provenance). ``Chronomem.update_fact`` (the bi-temporal history: a new version, the old one
        expired) replaces it when it lands.
        """
        from chronomem.edits import changed_fields, edit_episode

        group_id = self.group_of(ref)
        stored = await self._memory.get_fact(group_id, fact_id)
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
        vectors = await self._memory.embedder.embed(texts)
        batch = GraphWrite(group_id, episodes=[episode], facts=[updated], episode_vectors={episode.id: vectors[0]})
        if "fact" in changes:
            batch.fact_vectors = {updated.id: vectors[1]}
        await self._memory.store.write(batch)
        return updated

    @property
    def _source(self) -> str:
        return f"project {self.project.name}"

    # -- the project's ontology and JSON mappings (chronomem.service.project_config) ---------------

    def ontology(self) -> InForce:
        return project_config.ontology_in_force(self._control, self._pid, self._memory.ontology)

    def set_ontology(self, spec: OntologySpec) -> OntologySpec:
        return project_config.set_ontology(self._control, self._pid, spec)

    def reset_ontology(self) -> InForce:
        project_config.reset_ontology(self._control, self._pid)
        return self.ontology()

    def json_mappings(self) -> InForce:
        return project_config.json_mappings_in_force(self._control, self._pid, self._memory.json_mappings)

    def set_json_mappings(self, mappings: Sequence[Any]) -> tuple[JsonMapping, ...]:
        return project_config.set_json_mappings(self._control, self._pid, list(mappings))

    def reset_json_mappings(self) -> InForce:
        project_config.reset_json_mappings(self._control, self._pid)
        return self.json_mappings()

    # -- tasks -------------------------------------------------------------------------------------

    async def get_task(self, task_id: str) -> TaskView:
        task = self._control.get_task(self._pid, task_id)
        episodes = await self._memory.get_episodes(task.group_id, task.episode_ids)
        if not episodes:
            raise NotFoundError(f"task {task_id!r} not found (its episodes were deleted)")
        return TaskView(task, task_status(episodes), tuple(episodes))

    async def retry_task(self, task_id: str) -> TaskView:
        """Queue the task's failed episodes again."""
        task = self._control.get_task(self._pid, task_id)
        await self._memory.retry(task.group_id, task.episode_ids)
        self._notify()
        return await self.get_task(task_id)
