"""What one project may do: the service's operations, each a short composition of the control plane
(who owns what) and the group operations every shell shares (:mod:`chronomem.app.groups`).

Every operation starts from the caller's :class:`~chronomem.controlplane.Project`, resolves
the names it was given (user, thread, graph, task) *inside that project* and only then touches a
store group. A name from another project is simply not found, so no route can reach across.
HTTP routers, and anything else that serves projects, call one method here per request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chronomem.app import project_config
from chronomem.app import templates as context_templates
from chronomem.app.groups import GroupOperations, Page
from chronomem.app.navigation import Direction, Neighbour, Subgraph
from chronomem.app.project_config import InForce
from chronomem.app.summaries import (
    THREAD_SUMMARY,
    USER_SUMMARY,
    SummaryUpdate,
    WrittenSummary,
    folded,
    graph_summary,
    write_summary,
)
from chronomem.controlplane import (
    ControlPlane,
    DocumentRecord,
    GraphRecord,
    Project,
    TaskRecord,
    ThreadRecord,
    UserRecord,
)
from chronomem.domain import Entity, Episode, EpisodeStatus, Fact, FactVersion
from chronomem.errors import ConflictError, InvalidInputError, NotFoundError
from chronomem.ingest.json_mapping import JsonMapping
from chronomem.ingest.ontology_spec import OntologySpec
from chronomem.llm.base import Prompt
from chronomem.memory import Chronomem, NewMessage
from chronomem.search.context import fact_line
from chronomem.search.templates import Template, parse_template

if TYPE_CHECKING:
    from chronomem.app.addresses import Addresses
    from chronomem.search.searcher import SearchResults

__all__ = [
    "CONTEXT_TEMPLATE",
    "SUMMARY_INSTRUCTION",
    "SUMMARY_REFRESH_LINES",
    "GraphRef",
    "ProjectSpace",
    "TaskView",
    "task_status",
]

CONTEXT_TEMPLATE = "context_template"  # project document kind
_SUMMARY_MESSAGES = 50  # a thread summary without a model covers the facts of its latest messages
SUMMARY_INSTRUCTION = "user_summary_instruction"  # project document kinds; scope "" = project default
SUMMARY_REFRESH_LINES = 24  # new facts (user) or messages (thread) that make a summary worth one call
USER_SUMMARY_DOC = "user_summary"
THREAD_SUMMARY_DOC = "thread_summary"
_THREAD_CONTEXT_MESSAGES = 2  # a thread's context is about its latest exchange when no query is given


@dataclass(frozen=True, slots=True)
class GraphRef:
    """A user's graph or a named graph of the caller's project: exactly one is set."""

    user_id: str | None = None
    graph_id: str | None = None

    def __post_init__(self) -> None:
        if (self.user_id is None) == (self.graph_id is None):
            raise InvalidInputError("give exactly one of user_id and graph_id")


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


def _display_name(user: UserRecord) -> str:
    return " ".join(p for p in (user.first_name, user.last_name) if p) or user.user_id


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
        self._groups = GroupOperations(memory, notify=notify, source=f"project {project.name}")

    @property
    def _pid(self) -> str:
        return self.project.id

    def addresses(self) -> Addresses:
        """The UUIDs of the project's users, graphs and threads, both ways (Zep v4's addresses)."""
        from chronomem.app.addresses import Addresses  # it builds on this module

        return Addresses(self, self._control)

    # -- users -------------------------------------------------------------------------------------

    def create_user(self, user_id: str, **profile: Any) -> UserRecord:
        user = self._control.create_user(self._pid, user_id, **profile)
        self.addresses().remember(user)
        return user

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
        graph = self._control.create_graph(self._pid, graph_id, name=name, description=description)
        self.addresses().remember(graph)
        return graph

    def get_graph(self, graph_id: str) -> GraphRecord:
        return self._control.get_graph(self._pid, graph_id)

    def list_graphs(self, *, limit: int, offset: int) -> list[GraphRecord]:
        return self._control.list_graphs(self._pid, limit=limit, offset=offset)

    def update_graph(self, graph_id: str, *, name: str | None = None, description: str | None = None) -> GraphRecord:
        return self._control.update_graph(self._pid, graph_id, name=name, description=description)

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
        thread = self._control.create_thread(self._pid, thread_id, user_id)
        self.addresses().remember(thread)
        return thread

    def get_thread(self, thread_id: str) -> ThreadRecord:
        return self._control.get_thread(self._pid, thread_id)

    def list_threads(self, *, user_id: str | None, limit: int, offset: int) -> list[ThreadRecord]:
        if user_id is not None:
            self._control.get_user(self._pid, user_id)
        return self._control.list_threads(self._pid, user_id=user_id, limit=limit, offset=offset)

    def delete_thread(self, thread_id: str) -> ThreadRecord:
        return self._control.delete_thread(self._pid, thread_id)

    async def add_messages(self, thread_id: str, messages: Sequence[NewMessage]) -> tuple[list[Episode], TaskRecord]:
        """Store the messages durably in the thread's user graph and queue them; returns at once.

        Crash consistency: the thread's new ids and their task are recorded first, then the
        episodes are stored, and a message exists only once its episode does (reads skip ids
        without one). A process killed in between leaves an id nobody reads and a task nobody was
        given; the client, never answered, sends again (with its uuids: the same messages, in
        their first place). So a thread's messages and its user's episodes cannot disagree.
        """
        thread = self._control.get_thread(self._pid, thread_id)
        group_id = self._control.get_user(self._pid, thread.user_id).group_id
        episodes = Chronomem.message_episodes(group_id, messages, source=f"thread {thread_id}")
        if len({e.id for e in episodes}) != len(episodes):
            raise InvalidInputError("two messages of one request carry the same uuid")
        return await self._groups.queue(
            episodes, record=lambda queued: self._control.append_messages(self._pid, thread_id, group_id,
                                                                          [e.id for e in queued]))

    async def thread_messages(self, thread_id: str, *, last: int | None = None) -> list[Episode]:
        """The thread's messages, oldest first: its recorded ids whose episode was stored."""
        thread = self._control.get_thread(self._pid, thread_id)
        group_id = self._control.get_user(self._pid, thread.user_id).group_id
        ids = self._control.message_ids(self._pid, thread_id, last=last)
        episodes = await self._memory.get_episodes(group_id, ids)
        if last is not None and len(episodes) < len(ids):  # some newest ids never got their episode
            episodes = (await self._memory.get_episodes(group_id, self._control.message_ids(self._pid, thread_id)))
            episodes = episodes[-last:]
        return episodes

    async def thread_context(self, thread_id: str, query: str | None, *, template_id: str | None = None,
                             **options: Any) -> str:
        """The user's context block for ``query``, or for the thread's latest messages; in the
        form of a stored template when ``template_id`` names one."""
        thread = self._control.get_thread(self._pid, thread_id)
        if template_id is not None:
            self.get_template(template_id)  # 404 before any search
        if not query:
            latest = await self.thread_messages(thread_id, last=_THREAD_CONTEXT_MESSAGES)
            query = "\n".join(e.text for e in latest)
        if not query:
            return ""
        if template_id is not None:
            return await self.templated_context(thread.user_id, query, template_id, thread_id=thread_id,
                                                include_evidence=options.get("include_evidence", False))
        return await self.user_context(thread.user_id, query, **options)

    async def user_context(self, user_id: str, query: str, *, template_id: str | None = None, **options: Any) -> str:
        """The user's context block for ``query`` (in a stored template's form if named; of the
        other options a template takes ``include_evidence``, its facts then quoted)."""
        if template_id is not None:
            return await self.templated_context(user_id, query, template_id,
                                                include_evidence=options.get("include_evidence", False))
        group_id = self._control.get_user(self._pid, user_id).group_id
        return await self._memory.context([group_id], query, **options)

    # -- context templates and summaries -----------------------------------------------------------

    def save_template(self, template_id: str, text: str, *, create: bool) -> DocumentRecord:
        """Store a named context template (parsed first, so a stored template always renders).
        ``create``: refuse an id in use (409); otherwise the template must exist (404)."""
        parse_template(text)
        exists = any(d.name == template_id for d in self.list_templates())
        if create and exists:
            raise ConflictError(f"context template {template_id!r} already exists")
        if not create and not exists:
            raise NotFoundError(f"context template {template_id!r} not found")
        return self._control.put_document(self._pid, CONTEXT_TEMPLATE, "", template_id, text)

    def get_template(self, template_id: str) -> DocumentRecord:
        return self._control.get_document(self._pid, CONTEXT_TEMPLATE, "", template_id)

    def list_templates(self) -> list[DocumentRecord]:
        return self._control.list_documents(self._pid, CONTEXT_TEMPLATE, scope="")

    def delete_template(self, template_id: str) -> None:
        if not self._control.delete_document(self._pid, CONTEXT_TEMPLATE, "", template_id):
            raise NotFoundError(f"context template {template_id!r} not found")

    async def templated_context(self, user_id: str, query: str, template_id: str,
                                thread_id: str | None = None, *, include_evidence: bool = False) -> str:
        """The user's context for ``query`` in the form of a stored template, its summary sections
        filled with the user's summary (and the thread's, when ``thread_id`` is given); with
        ``include_evidence`` each fact is followed by the words of the episode that state it."""
        template = self.stored_template(template_id)
        group_id = self._control.get_user(self._pid, user_id).group_id
        summaries: dict[str, list[str]] = {}
        if template.limit("user_summary"):
            summaries["user_summary"] = [await self.user_summary(user_id)]
        if template.limit("thread_summaries") and thread_id is not None:
            summaries["thread_summaries"] = [await self.thread_summary(thread_id)]
        return await context_templates.templated_context(self._memory, [group_id], query, template,
                                                         summaries=summaries, include_evidence=include_evidence)

    def stored_template(self, template_id: str) -> Template:
        """A stored template of the project, parsed (``NotFoundError`` for an unknown id)."""
        return parse_template(self.get_template(template_id).body)

    async def user_summary(self, user_id: str) -> str:
        """The user's persistent summary, brought up to date with one model call when the graph
        holds facts about them the summary has not folded in yet (none otherwise), and steered by
        the project's and the user's summary instructions. Without a model: what the graph says."""
        user = self._control.get_user(self._pid, user_id)
        facts = await self._user_facts(user)
        lines = [fact_line(f) for f in facts]
        instructions = [d.body for scope in ("", user.group_id)
                        for d in self._control.list_documents(self._pid, SUMMARY_INSTRUCTION, scope=scope)]
        subject = f"the user {_display_name(user)}"
        return await self._summary(USER_SUMMARY_DOC, user.group_id, USER_SUMMARY, subject, lines, instructions,
                                   fallback=graph_summary(f"user {user_id}", [f.fact for f in facts]))

    async def thread_summary(self, thread_id: str) -> str:
        """The thread's summary, brought up to date with one model call when it has messages the
        summary has not folded in yet. Without a model: the facts its latest messages gave."""
        thread = self._control.get_thread(self._pid, thread_id)
        group_id = self._control.get_user(self._pid, thread.user_id).group_id
        messages = await self.thread_messages(thread_id)
        texts: list[str] = []
        for episode in messages[-_SUMMARY_MESSAGES:]:
            texts += [f.fact for f in await self._memory.store.facts_of_episode(group_id, episode.id)]
        lines = [f"({e.reference_time:%Y-%m-%d}) {e.text}" for e in messages]
        return await self._summary(THREAD_SUMMARY_DOC, f"{group_id}:{thread_id}", THREAD_SUMMARY,
                                   f"the thread {thread_id}", lines, [],
                                   fallback=graph_summary(f"thread {thread_id}", texts))

    async def _summary(self, kind: str, name: str, prompt: Prompt[SummaryUpdate, WrittenSummary], subject: str,
                       lines: Sequence[str], instructions: Sequence[str], *, fallback: str) -> str:
        """The stored summary, refreshed first (one call) once ``lines`` grew ``SUMMARY_REFRESH_LINES``
        past its watermark (at once when there is none yet): so a summary costs about one call per
        that many new facts or messages, however often it is read, and lags by fewer than that."""
        try:
            stored = self._control.get_document(self._pid, kind, "", name).body
        except NotFoundError:
            stored = None
        text, covered = (stored["text"], int(stored["covered"])) if stored else ("", 0)
        due = len(lines) - covered >= (SUMMARY_REFRESH_LINES if text else 1)
        if self._memory.llm is not None and due:
            update = SummaryUpdate(subject, text, tuple(lines[covered:]), tuple(instructions))
            written = await write_summary(self._memory.llm, prompt, update)
            if written is not None:
                text, covered = written, covered + folded(update)
                self._control.put_document(self._pid, kind, "", name, {"text": text, "covered": covered})
        return text or fallback

    async def _user_facts(self, user: UserRecord) -> list[Fact]:
        """Facts about the user's own entity (by their name or id), oldest first, ended ones too."""
        names = [n for n in (_display_name(user), user.first_name, user.user_id) if n]
        entities = await self._memory.store.find_entities_by_names(user.group_id, names)
        facts = await self._memory.store.facts_of_entities(user.group_id, [e.id for e in entities],
                                                          include_superseded=True)
        return sorted(facts, key=lambda f: (f.created_at, f.id))

    # -- graph writes ------------------------------------------------------------------------------

    async def add_episode(self, ref: GraphRef, content: str, **fields: Any) -> tuple[Episode, TaskRecord]:
        """Store one episode (text, json or message) durably and queue it; returns at once."""
        [stored], task = await self.add_episodes(ref, [(content, fields)])
        return stored, task

    async def add_episodes(
        self, ref: GraphRef, items: Sequence[tuple[str, dict[str, Any]]]
    ) -> tuple[list[Episode], TaskRecord]:
        """Store several episodes ``(content, fields)`` durably, in order, under one task (recorded
        before the episodes are stored: see :meth:`GroupOperations.queue`)."""
        group_id = self.group_of(ref)
        episodes = [Chronomem.new_episode(group_id, content, **fields) for content, fields in items]
        return await self._groups.queue(
            episodes, record=lambda queued: self._control.create_task(self._pid, group_id, [e.id for e in queued]))

    async def add_fact(self, ref: GraphRef, source: str, relation_type: str, target: str, fact: str,
                       **options: Any) -> Fact:
        return await self._groups.add_fact(self.group_of(ref), source, relation_type, target, fact, **options)

    async def fact_history(self, ref: GraphRef, fact_id: str) -> list[FactVersion]:
        return await self._groups.fact_history(self.group_of(ref), fact_id)

    # -- graph reads and deletes -------------------------------------------------------------------

    async def search(self, ref: GraphRef, query: str, **options: Any) -> SearchResults:
        return await self._groups.search([self.group_of(ref)], query, **options)

    async def list_episodes(self, ref: GraphRef, *, limit: int) -> list[Episode]:
        return await self._groups.list_episodes(self.group_of(ref), limit=limit)

    async def get_episode(self, ref: GraphRef, episode_id: str) -> Episode:
        return await self._groups.get_episode(self.group_of(ref), episode_id)

    async def delete_episode(self, ref: GraphRef, episode_id: str) -> None:
        await self._groups.delete_episode(self.group_of(ref), episode_id)

    async def update_episode_metadata(self, ref: GraphRef, episode_id: str, changes: dict[str, Any]) -> Episode:
        """Merge metadata onto an episode (see :meth:`GroupOperations.update_episode_metadata`)."""
        return await self._groups.update_episode_metadata(self.group_of(ref), episode_id, changes)

    async def get_entity(self, ref: GraphRef, entity_id: str) -> Entity:
        return await self._groups.get_entity(self.group_of(ref), entity_id)

    async def delete_entity(self, ref: GraphRef, entity_id: str) -> Entity:
        return await self._groups.delete_entity(self.group_of(ref), entity_id)

    async def get_fact(self, ref: GraphRef, fact_id: str) -> Fact:
        return await self._groups.get_fact(self.group_of(ref), fact_id)

    async def delete_fact(self, ref: GraphRef, fact_id: str) -> Fact:
        return await self._groups.delete_fact(self.group_of(ref), fact_id)

    async def neighbours(self, ref: GraphRef, entity_id: str, *, direction: Direction = "both") -> list[Neighbour]:
        return await self._groups.neighbours(self.group_of(ref), entity_id, direction=direction)

    async def subgraph(self, ref: GraphRef, seeds: Sequence[str], **bounds: Any) -> Subgraph:
        return await self._groups.subgraph(self.group_of(ref), seeds, **bounds)

    async def list_entities(self, ref: GraphRef, *, limit: int, cursor: str | None = None) -> Page[Entity]:
        """A graph's entities, oldest first, one page at a time."""
        return await self._groups.list_entities(self.group_of(ref), limit=limit, cursor=cursor)

    async def list_facts(self, ref: GraphRef, *, limit: int, cursor: str | None = None) -> Page[Fact]:
        """A graph's facts (superseded versions included), oldest first, one page at a time."""
        return await self._groups.list_facts(self.group_of(ref), limit=limit, cursor=cursor)

    async def add_entity(self, ref: GraphRef, name: str, **fields: Any) -> tuple[Entity, bool]:
        """Add an entity by hand (see :meth:`GroupOperations.add_entity`)."""
        return await self._groups.add_entity(self.group_of(ref), name, **fields)

    async def update_entity(self, ref: GraphRef, entity_id: str, **changes: Any) -> Entity:
        """Rename an entity or change its summary, labels or attributes; recorded as an edit."""
        return await self._groups.update_entity(self.group_of(ref), entity_id, **changes)

    async def update_fact(self, ref: GraphRef, fact_id: str, **changes: Any) -> Fact:
        """Change a fact (see :meth:`GroupOperations.update_fact`): every change a new version."""
        return await self._groups.update_fact(self.group_of(ref), fact_id, **changes)

    # -- the project's ontology and JSON mappings (chronomem.app.project_config) ---------------

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
