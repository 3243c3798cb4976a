"""The MCP server: chronomem's operations as tools for agents (official ``mcp`` SDK, ``MCPServer``).

Tools: ``add_memory``, ``search_facts``, ``search_entities``, ``get_context``, ``get_episodes``,
``delete_episode``, ``delete_fact``, ``delete_entity``, ``task_status``, ``fact_history``,
``get_neighbors`` and ``get_subgraph`` (graph navigation) and ``get_configuration`` (the model,
ontology and JSON mappings memories are extracted with). Each parses its
arguments, calls one operation of the application core (:class:`~chronomem.app.groups.GroupOperations`,
the same the HTTP API runs for a project's graphs) and returns plain JSON. Memories are
queued durably and extracted by an in-process worker pool, as in the HTTP service; ``task_status``
follows an added memory. Library errors come back as tool errors with their message.

Zep's context types come from a project (``space``, a
:class:`~chronomem.app.tenancy.ProjectSpace`; ``chronomem mcp --project``, default
``default``), whose users, threads and templates the HTTP API manages: ``get_user_summary``,
``get_thread_summary``, ``lookup`` (a user's, graph's or thread's group by its id or UUID), and
``list_/get_/create_/replace_/delete_context_template``; ``get_context``
then takes ``template_id`` (the project's stored template) and ``user_id`` or ``thread_id`` (whose
context, with their summaries), besides ``include_evidence``. Without a space those tools are not
served and ``get_context`` refuses their parameters.

Run it with ``chronomem mcp`` (stdio, for desktop agents) or ``chronomem mcp --transport http``
(streamable HTTP at ``http://127.0.0.1:8001/mcp``). It has no API keys: it serves one trusted
local agent, binds to loopback by default, and every tool takes an optional ``group_id`` (default:
the server's ``--group``).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal, ParamSpec, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from chronomem.app import templates as context_templates
from chronomem.app.groups import GroupOperations
from chronomem.app.workers import WorkerPool
from chronomem.config.settings import Settings
from chronomem.domain import Entity, Episode, Fact, FactVersion
from chronomem.errors import ChronomemError, ConfigurationError
from chronomem.filters import SearchFilters
from chronomem.memory import Chronomem
from chronomem.search.config import RECIPES
from chronomem.timeutil import UTCDateTime

if TYPE_CHECKING:
    from chronomem.app.tenancy import ProjectSpace
    from chronomem.controlplane import DocumentRecord

__all__ = ["build_mcp_server", "run_mcp", "serving"]

P = ParamSpec("P")
R = TypeVar("R")

_INSTRUCTIONS = (
    "Long-term memory on a temporal knowledge graph. Save what the user tells you with add_memory; "
    "before answering, call get_context (or search_facts) with the question. Facts carry when they "
    "were true (valid_at/invalid_at); as_of asks what was true at a past time."
)


def _fact(fact: Fact, score: float | None = None) -> dict[str, Any]:
    return {
        "uuid": fact.id, "fact": fact.fact, "relation": fact.relation_type, "source_uuid": fact.source_id,
        "target_uuid": fact.target_id, "other_uuids": list(fact.other_entity_ids),
        "valid_at": _iso(fact.valid_at), "invalid_at": _iso(fact.invalid_at),
        "created_at": _iso(fact.created_at), "expired_at": _iso(fact.expired_at), "score": score,
        "version": fact.version, "recorded_at": _iso(fact.recorded_at),
        "episodes": list(fact.episode_ids), "sources": [s.model_dump() for s in fact.sources],
        "evidence": [{"episode_uuid": s.episode_id, "start": s.start, "end": s.end} for s in fact.evidence],
    }


def _version(version: FactVersion) -> dict[str, Any]:
    return {"recorded_from": _iso(version.recorded_from), "recorded_to": _iso(version.recorded_to),
            "fact": _fact(version.fact)}


def _entity(entity: Entity, score: float | None = None) -> dict[str, Any]:
    return {"uuid": entity.id, "name": entity.name, "labels": list(entity.labels), "summary": entity.summary,
            "score": score}


def _episode(episode: Episode) -> dict[str, Any]:
    return {
        "uuid": episode.id, "type": episode.kind.value, "content": episode.content, "speaker": episode.speaker,
        "reference_time": _iso(episode.reference_time), "status": episode.status.value,
        "attempts": episode.attempts, "error": episode.last_error,
    }


def _iso(moment: Any) -> str | None:
    return moment.isoformat() if moment is not None else None


def _tool_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Library errors become tool errors that carry their message to the agent."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except ChronomemError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc

    return wrapper


# As the HTTP API bounds them (service.schemas.TemplateIn).
TemplateId = Annotated[str, Field(min_length=1, max_length=100)]
TemplateText = Annotated[str, Field(min_length=1, max_length=1_200)]


def build_mcp_server(
    memory: Chronomem, *, default_group: str = "default", pool: WorkerPool | None = None,
    space: ProjectSpace | None = None,
) -> MCPServer[Any]:
    """The MCP server over ``memory``. ``pool`` (if any) is woken when a memory is queued;
    ``space`` (if any) is the project whose summaries and context templates it serves."""

    def group(group_id: str | None) -> str:
        return group_id or default_group

    # the same operations the HTTP API runs for a project's graphs, on the groups this agent names
    groups = GroupOperations(memory, notify=pool.notify if pool is not None else lambda: None, source="mcp")

    server: MCPServer[Any] = MCPServer(name="chronomem", instructions=_INSTRUCTIONS)

    @server.tool()
    @_tool_errors
    async def add_memory(
        content: str,
        group_id: str | None = None,
        kind: Literal["message", "text", "json"] = "message",
        speaker: str | None = None,
        reference_time: UTCDateTime | None = None,
        source_description: str = "",
    ) -> dict[str, Any]:
        """Remember something: a chat message ("speaker: text"), a text, or a JSON document.
        Stored at once; extracted into facts and entities in the background (see task_status)."""
        episode = Chronomem.new_episode(
            group(group_id), content, kind=kind, speaker=speaker, reference_time=reference_time,
            source_description=source_description,
        )
        [stored], _ = await groups.queue([episode], record=lambda _: None)
        return _episode(stored)

    @server.tool()
    @_tool_errors
    async def search_facts(
        query: str,
        group_ids: list[str] | None = None,
        limit: int = 10,
        as_of: UTCDateTime | None = None,
        known_at: UTCDateTime | None = None,
    ) -> list[dict[str, Any]]:
        """Facts (relationships between entities) relevant to the query, with when they were true.
        as_of: what was true at that time; known_at: what we knew at that time."""
        filters = SearchFilters(as_of=as_of, known_at=known_at) if as_of or known_at else None
        results = await groups.search(
            group_ids or [default_group], query, config=RECIPES["facts_only"].with_limit(limit), filters=filters
        )
        return [_fact(f, s) for f, s in results.facts]

    @server.tool()
    @_tool_errors
    async def search_entities(query: str, group_ids: list[str] | None = None, limit: int = 10) -> list[dict[str, Any]]:
        """Entities (people, places, things) relevant to the query, with their summaries."""
        results = await groups.search(
            group_ids or [default_group], query, config=RECIPES["entities_only"].with_limit(limit)
        )
        return [_entity(e, s) for e, s in results.entities]

    @server.tool()
    @_tool_errors
    async def get_context(
        query: str,
        group_ids: list[str] | None = None,
        include_evidence: bool = False,
        template_id: TemplateId | None = None,
        user_id: str | None = None,
        thread_id: str | None = None,
    ) -> str:
        """A ready-to-use context block (facts with dates, entity summaries) for answering the query;
        with include_evidence, each fact is followed by the words of the memory that state it.
        template_id: in the form of that stored context template. user_id / thread_id: the
        context of a user of the project (or of a thread's user), with their summaries, instead
        of group_ids."""
        return await _context(groups, space, group_ids or [default_group], query, include_evidence=include_evidence,
                              template_id=template_id, user_id=user_id, thread_id=thread_id)

    @server.tool()
    @_tool_errors
    async def get_episodes(group_id: str | None = None, last_n: int = 10) -> list[dict[str, Any]]:
        """The most recent raw memories (episodes) of a group, newest first, with their status."""
        return [_episode(e) for e in await groups.list_episodes(group(group_id), limit=last_n)]

    @server.tool()
    @_tool_errors
    async def delete_episode(episode_id: str, group_id: str | None = None) -> str:
        """Forget an episode and whatever only it supported."""
        await groups.delete_episode(group(group_id), episode_id)
        return f"deleted episode {episode_id}"

    @server.tool()
    @_tool_errors
    async def delete_fact(fact_id: str, group_id: str | None = None) -> str:
        """Forget one fact."""
        await groups.delete_fact(group(group_id), fact_id)
        return f"deleted fact {fact_id}"

    @server.tool()
    @_tool_errors
    async def delete_entity(entity_id: str, group_id: str | None = None) -> str:
        """Forget an entity and every fact it takes part in."""
        await groups.delete_entity(group(group_id), entity_id)
        return f"deleted entity {entity_id}"

    @server.tool()
    @_tool_errors
    async def task_status(episode_id: str, group_id: str | None = None) -> dict[str, Any]:
        """Where an added memory is: pending, processing, done (or unextracted: no model), failed
        (with the error; add it again or retry from the CLI/HTTP API)."""
        return _episode(await groups.get_episode(group(group_id), episode_id))

    _history_tools(server, groups, group)
    _navigation_tools(server, groups, group)
    _add_configuration_tool(server, memory)
    _project_tools(server, space)
    return server


def _project_tools(server: MCPServer[Any], space: ProjectSpace | None) -> None:
    """Zep's context types, served only with a project (they are the project's)."""
    if space is not None:
        _summary_tools(server, space)
        _template_tools(server, space)
        _lookup_tool(server, space)


async def _context(operations: GroupOperations, space: ProjectSpace | None, groups: list[str], query: str, *,
                   include_evidence: bool, template_id: str | None, user_id: str | None,
                   thread_id: str | None) -> str:
    """get_context: the default block of the groups, or through the project (a template, a user, a thread)."""
    if template_id is None and user_id is None and thread_id is None:
        return await operations.context(groups, query, include_evidence=include_evidence)
    project = _project(space)
    if thread_id is not None:
        return await project.thread_context(thread_id, query, template_id=template_id,
                                            include_evidence=include_evidence)
    if user_id is not None:
        return await project.user_context(user_id, query, template_id=template_id, include_evidence=include_evidence)
    assert template_id is not None
    # the groups have no user or thread here, so the template's summary sections stay empty
    return await context_templates.templated_context(operations.memory, groups, query,
                                                     project.stored_template(template_id),
                                                     include_evidence=include_evidence)


def _project(space: ProjectSpace | None) -> ProjectSpace:
    if space is None:
        raise ToolError("this MCP server serves no project: template_id, user_id and thread_id need one "
                        "(`chronomem mcp --project NAME` serves a project)")
    return space


def _summary_tools(server: MCPServer[Any], space: ProjectSpace) -> None:
    @server.tool()
    @_tool_errors
    async def get_user_summary(user_id: str) -> str:
        """What we know about a user of the project, as one persistent summary (brought up to date
        first when the graph learned enough since; without a model: the facts, labelled so)."""
        return await space.user_summary(user_id)

    @server.tool()
    @_tool_errors
    async def get_thread_summary(thread_id: str) -> str:
        """What a conversation thread of the project covered: discussed, decided, left open."""
        return await space.thread_summary(thread_id)


def _template(document: DocumentRecord) -> dict[str, Any]:
    return {"template_id": document.name, "template": document.body, "updated_at": _iso(document.updated_at)}


def _template_tools(server: MCPServer[Any], space: ProjectSpace) -> None:
    @server.tool()
    @_tool_errors
    async def list_context_templates() -> list[dict[str, Any]]:
        """The project's named context templates (usable by id in get_context)."""
        return [_template(d) for d in space.list_templates()]

    @server.tool()
    @_tool_errors
    async def get_context_template(template_id: TemplateId) -> dict[str, Any]:
        """One context template of the project."""
        return _template(space.get_template(template_id))

    @server.tool()
    @_tool_errors
    async def create_context_template(template_id: TemplateId, template: TemplateText) -> dict[str, Any]:
        """Store a named context template: text with sections %{edges limit=N types=[…]},
        %{entities …}, %{episodes limit=N}, %{user_summary}, %{thread_summaries}. Refused if the id
        is taken or the text does not parse."""
        return _template(space.save_template(template_id, template, create=True))

    @server.tool()
    @_tool_errors
    async def replace_context_template(template_id: TemplateId, template: TemplateText) -> dict[str, Any]:
        """Replace the text of an existing context template."""
        return _template(space.save_template(template_id, template, create=False))

    @server.tool()
    @_tool_errors
    async def delete_context_template(template_id: TemplateId) -> str:
        """Forget a context template."""
        space.delete_template(template_id)
        return f"deleted context template {template_id}"


def _history_tools(server: MCPServer[Any], groups: GroupOperations, group: Callable[[str | None], str]) -> None:
    @server.tool()
    @_tool_errors
    async def fact_history(fact_id: str, group_id: str | None = None) -> list[dict[str, Any]]:
        """Every version of a fact, oldest first: what we believed, and from when to when
        (recorded_from, recorded_to; the last is what we believe now)."""
        return [_version(v) for v in await groups.fact_history(group(group_id), fact_id)]


def _navigation_tools(server: MCPServer[Any], groups: GroupOperations, group: Callable[[str | None], str]) -> None:
    @server.tool()
    @_tool_errors
    async def get_neighbors(entity_id: str, group_id: str | None = None,
                            direction: Literal["in", "out", "both"] = "both") -> list[dict[str, Any]]:
        """The entities one current fact away from an entity, each with the facts that join them
        (direction: out = facts it is the source of, in = facts pointing at it)."""
        found = await groups.neighbours(group(group_id), entity_id, direction=direction)
        return [{"entity": _entity(n.entity), "facts": [_fact(f) for f in n.facts]} for n in found]

    @server.tool()
    @_tool_errors
    async def get_subgraph(
        entity_ids: Annotated[list[str], Field(min_length=1, max_length=100)],
        group_id: str | None = None,
        depth: Annotated[int, Field(ge=0, le=5)] = 1,
        max_entities: Annotated[int, Field(ge=1, le=1_000)] = 100,
        max_facts: Annotated[int, Field(ge=1, le=5_000)] = 500,
    ) -> dict[str, Any]:
        """The entities within depth facts of the given ones and the current facts among them,
        breadth first; truncated says a bound cut it."""
        found = await groups.subgraph(group(group_id), entity_ids, depth=depth, max_nodes=max_entities,
                                      max_edges=max_facts)
        return {"entities": [_entity(e) for e in found.entities], "facts": [_fact(f) for f in found.facts],
                "truncated": found.truncated, "truncation_reason": found.reason}


def _lookup_tool(server: MCPServer[Any], space: ProjectSpace) -> None:
    from chronomem.controlplane import GraphRecord, UserRecord

    @server.tool()
    @_tool_errors
    async def lookup(user_id: str | None = None, graph_id: str | None = None, thread_id: str | None = None,
                     uuid: str | None = None) -> dict[str, Any]:
        """The graph of a project's user, named graph or thread, by its id or by its UUID (Zep v4's
        address): its group_id, which the other tools take, and its UUID."""
        given = [v for v in (user_id, graph_id, thread_id, uuid) if v is not None]
        if len(given) != 1:
            raise ToolError("give exactly one of user_id, graph_id, thread_id and uuid")
        addresses = space.addresses()
        if uuid is not None:
            found: Any = addresses.find(uuid)
        elif user_id is not None:
            found = space.get_user(user_id)
        elif graph_id is not None:
            found = space.get_graph(graph_id)
        else:
            assert thread_id is not None
            found = space.get_thread(thread_id)
        if isinstance(found, UserRecord):
            return {"kind": "user", "user_id": found.user_id, "uuid": addresses.user_uuid(found),
                    "group_id": found.group_id}
        if isinstance(found, GraphRecord):
            return {"kind": "graph", "graph_id": found.graph_id, "uuid": addresses.graph_uuid(found),
                    "group_id": found.group_id}
        owner = space.get_user(found.user_id)
        return {"kind": "thread", "thread_id": found.thread_id, "user_id": found.user_id,
                "uuid": addresses.thread_uuid(found), "group_id": owner.group_id}


def _add_configuration_tool(server: MCPServer[Any], memory: Chronomem) -> None:
    @server.tool()
    @_tool_errors
    async def get_configuration() -> dict[str, Any]:
        """What memories are extracted with: the model (the heuristic stand-in says it is not an
        LLM), the ontology (entity and edge types, signatures, single-valued relations) and the JSON
        mappings."""
        return _configuration(memory)


def _configuration(memory: Chronomem) -> dict[str, Any]:
    from chronomem.ingest.ontology_spec import OntologySpec

    try:
        ontology: Any = OntologySpec.from_ontology(memory.ontology).model_dump(mode="json")
    except ConfigurationError as exc:  # made in Python with attribute types data cannot name
        ontology = {"error": str(exc)}
    return {
        "model": memory.model_description,
        "extraction": memory.ingestor.config.extraction,
        "reflexion": memory.ingestor.config.reflexion,
        "ontology": ontology,
        "json_mappings": [m.model_dump(mode="json") for m in memory.json_mappings],
    }


@asynccontextmanager
async def serving(
    settings: Settings, *, default_group: str = "default", project: str = "default"
) -> AsyncIterator[MCPServer[Any]]:
    """Open the memory, its worker pool and the control plane, and yield the MCP server over them,
    serving the summaries and context templates of ``project`` (created if new)."""
    from chronomem.app.project_config import ProjectProfiles
    from chronomem.app.tenancy import ProjectSpace
    from chronomem.controlplane import open_control_plane

    control = open_control_plane(settings)
    try:
        async with await Chronomem.open(settings) as memory:
            # before the workers start: a user's episodes follow their project's ontology and mappings
            memory.use_group_profiles(ProjectProfiles(control))
            async with WorkerPool.for_memory(memory) as pool:
                space = ProjectSpace(control.ensure_project(project), control, memory, notify=pool.notify)
                yield build_mcp_server(memory, default_group=default_group, pool=pool, space=space)
    finally:
        control.close()


def run_mcp(
    settings: Settings,
    *,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8001,
    default_group: str = "default",
    project: str = "default",
) -> None:
    """Serve until interrupted, over stdio or streamable HTTP (path ``/mcp``)."""
    import anyio

    async def main() -> None:
        async with serving(settings, default_group=default_group, project=project) as server:
            if transport == "stdio":
                await server.run_stdio_async()
            else:
                await server.run_streamable_http_async(host=host, port=port)

    anyio.run(main)
