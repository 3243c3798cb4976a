"""``client.graph``: graphs by UUID (a user's graph by the user's UUID), their context, ontology,
search, clone and subgraph."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from chronomem.app import templates as context_templates
from chronomem.app.addresses import Target, minted_id, object_id
from chronomem.errors import InvalidInputError
from chronomem.service.compat.ontology import clear_types, store_types, stored_types
from chronomem.service.compat.v4 import render
from chronomem.service.compat.v4.deps import Zep4, Zep4Space
from chronomem.service.compat.v4.errors import refuse_unsupported
from chronomem.service.compat.v4.idempotency import IdempotentRoute
from chronomem.service.compat.v4.models import (
    AsyncResultOut,
    EdgeOut,
    EpisodeOut,
    GraphContextIn,
    GraphContextOut,
    GraphIn,
    GraphOut,
    GraphUpdateIn,
    LookupIn,
    NodeOut,
    OntologyIn,
    OntologyOut,
    Page,
    SearchIn,
    SearchTextIn,
    SubgraphIn,
    SubgraphOut,
    ThreadSummaryOut,
    v2_types,
)
from chronomem.service.compat.v4.ontology import ontology_out
from chronomem.service.compat.v4.pages import DEFAULT_PAGE, Cursor, PageSize, page_of, window
from chronomem.service.compat.v4.routes.threads import summary_of
from chronomem.service.compat.v4.routes.users import lookup_one
from chronomem.service.compat.v4.search import search_graph
from chronomem.service.compat.v4.templates import template_name

__all__ = ["router"]

router = APIRouter(tags=["graph"], route_class=IdempotentRoute)
SearchPage = Annotated[int | None, Query(ge=1, le=1_000)]
_RESULTS = 10  # include_results: the edges and nodes a context block is built from, at most


def _named(target: Target, call: str) -> str:
    if target.graph is None:
        raise InvalidInputError(f"{call}: {target.uuid} is a user's graph; change or delete the user instead")
    return target.graph.graph_id


@router.post("/graphs", status_code=201, response_model=GraphOut)
async def create(body: GraphIn, zep: Zep4) -> GraphOut:
    refuse_unsupported("graph.create", time_zone=body.time_zone, content_policy=body.content_policy)
    graph = zep.space.create_graph(minted_id(), name=body.name or "", description=body.description or "")
    target = zep.addresses.target_of_graph(graph)
    return render.graph(target)


@router.post("/graphs/list", response_model=Page[GraphOut])
async def list_graphs(zep: Zep4, body: Annotated[SearchTextIn | None, Body()] = None,
                      page_size: PageSize = DEFAULT_PAGE, cursor: Cursor = None, order_by: str | None = None,
                      order: str | None = None) -> Page[GraphOut]:
    """The project's graphs: its users' (``type: user``), then its named ones."""
    refuse_unsupported("graph.list", search=body.search if body else None,
                       order_by=order_by if order_by not in (None, "created_at") else None,
                       order=order if order not in (None, "asc") else None)
    offset = window(cursor)
    owned = zep.control.owned_groups(zep.space.project.id)
    shown = []
    for kind, name, _ in owned[offset:offset + page_size]:
        if kind == "user":
            shown.append(render.graph(zep.addresses.target_of_user(zep.space.get_user(name))))
        else:
            shown.append(render.graph(zep.addresses.target_of_graph(zep.space.get_graph(name))))
    return page_of(shown, offset, page_size, len(owned))


@router.post("/graphs/lookup", response_model=GraphOut)
async def lookup(body: LookupIn, zep: Zep4) -> GraphOut:
    """The graph an external graph id names, or the graph of the user an external user or thread
    id names."""
    if body.graph_id is not None and body.user_id is None and body.thread_id is None:
        return render.graph(zep.addresses.target_of_graph(zep.space.get_graph(body.graph_id)))
    return render.graph(zep.addresses.target_of_user(lookup_one(zep, body)))


@router.get("/graphs/{graph_uuid}", response_model=GraphOut)
async def get(graph_uuid: str, zep: Zep4) -> GraphOut:
    return render.graph(zep.addresses.graph(graph_uuid))


@router.patch("/graphs/{graph_uuid}", response_model=GraphOut)
async def update(graph_uuid: str, body: GraphUpdateIn, zep: Zep4) -> GraphOut:
    refuse_unsupported("graph.update", time_zone=body.time_zone)
    graph_id = _named(zep.addresses.graph(graph_uuid), "graph.update")
    updated = zep.space.update_graph(graph_id, name=body.name, description=body.description)
    return render.graph(zep.addresses.target_of_graph(updated))


@router.delete("/graphs/{graph_uuid}", response_model=AsyncResultOut)
async def delete(graph_uuid: str, zep: Zep4) -> AsyncResultOut:
    """Forget a named graph and everything in it (done before the answer)."""
    graph_id = _named(zep.addresses.graph(graph_uuid), "graph.delete")
    await zep.space.delete_graph(graph_id)
    return AsyncResultOut(task=zep.tasks.done("graph_delete", {"graph_uuid": graph_uuid}))


@router.post("/graphs/{graph_uuid}/clone", status_code=202, response_model=dict[str, Any])
async def clone(graph_uuid: str, zep: Zep4, body: Annotated[dict[str, Any] | None, Body()] = None) -> dict[str, Any]:
    """Copy a graph, exactly (every episode, entity, fact, history and vector), into a new named
    graph; done before the answer, so the task has succeeded. ``name`` and ``description`` in the
    body name the copy."""
    source = zep.addresses.graph(graph_uuid)
    options = body or {}
    name = options.get("name") if isinstance(options.get("name"), str) else None
    description = options.get("description") if isinstance(options.get("description"), str) else ""
    copy = zep.space.create_graph(minted_id(), name=(name or "")[:512], description=(description or "")[:5_000])
    target = zep.addresses.target_of_graph(copy)
    await zep.memory.import_group(await zep.memory.export_group(source.group_id), group_id=copy.group_id)
    task = zep.tasks.done("graph_clone", {"source_graph_uuid": source.uuid, "graph_uuid": target.uuid})
    return {"graph": render.graph(target).model_dump(mode="json"), "task": task.model_dump(mode="json")}


# -- context -----------------------------------------------------------------------------------------


async def _context(zep: Zep4Space, target: Target, query: str, template: str | None) -> str:
    if target.user is not None:
        return await zep.space.user_context(target.user.user_id, query, template_id=template)
    if template is None:
        return await zep.memory.context([target.group_id], query)
    parsed = zep.space.stored_template(template)
    return await context_templates.templated_context(zep.memory, [target.group_id], query, parsed, summaries={})


@router.post("/graphs/{graph_uuid}/context", response_model=GraphContextOut, response_model_exclude_none=True)
async def get_context(graph_uuid: str, body: GraphContextIn, zep: Zep4) -> GraphContextOut:
    """The context block of a graph for ``query`` (a stored template's form if named); with
    ``include_results``, the edges and nodes found for it."""
    refuse_unsupported("graph.get_context", recency_bias=body.recency_bias, filters=body.filters)
    target = zep.addresses.graph(graph_uuid)
    template = template_name(zep.space, body.template_uuid) if body.template_uuid is not None else None
    context = await _context(zep, target, body.query, template)
    truncated = body.max_characters is not None and len(context) > body.max_characters
    if truncated:
        context = context[: body.max_characters]
    results = None
    if body.include_results:
        edges = await search_graph(zep, target, SearchIn(query=body.query), "edges", _RESULTS)
        nodes = await search_graph(zep, target, SearchIn(query=body.query), "nodes", _RESULTS)
        results = {
            "edges": [render.edge(f, target, names=edges.names, score=s).model_dump(mode="json")
                      for f, s in edges.facts],
            "nodes": [render.node(e, target, score=s).model_dump(mode="json") for e, s in nodes.entities],
        }
    return GraphContextOut(context=context, truncated=truncated, results=results)


# -- ontology ----------------------------------------------------------------------------------------


@router.get("/graphs/{graph_uuid}/ontology", response_model=OntologyOut)
async def get_ontology(graph_uuid: str, zep: Zep4) -> OntologyOut:
    """The graph's own entity and edge types, else the project's (``inherited``)."""
    target = zep.addresses.graph(graph_uuid)
    pid = zep.space.project.id
    own = stored_types(zep.control, pid, target.group_id)
    if own is not None:
        return ontology_out(own, inherited=False)
    return ontology_out(stored_types(zep.control, pid, "") or {"entity_types": [], "edge_types": []},
                         inherited=True)


@router.put("/graphs/{graph_uuid}/ontology", response_model=OntologyOut)
async def set_ontology(graph_uuid: str, body: OntologyIn, zep: Zep4) -> OntologyOut:
    """Replace the graph's own types (``inherited: true``: drop them, the project's apply)."""
    refuse_unsupported("graph.set_ontology", entity_type_hierarchy=body.entity_type_hierarchy)
    target = zep.addresses.graph(graph_uuid)
    if body.inherited:
        clear_types(zep.control, zep.space.project.id, target.group_id)
        return await get_ontology(graph_uuid, zep)
    entity_types, edge_types = v2_types(body)
    store_types(zep.control, zep.space.project.id, target.group_id, entity_types, edge_types)
    return await get_ontology(graph_uuid, zep)


# -- search ------------------------------------------------------------------------------------------


@router.post("/graphs/{graph_uuid}/search/edges", response_model=Page[EdgeOut])
async def search_edges(graph_uuid: str, body: SearchIn, zep: Zep4, page_size: SearchPage = None,
                       cursor: Cursor = None) -> Page[EdgeOut]:
    target = zep.addresses.graph(graph_uuid)
    hits = await search_graph(zep, target, body, "edges", page_size)
    return Page[EdgeOut](items=[render.edge(f, target, names=hits.names, score=s) for f, s in hits.facts])


@router.post("/graphs/{graph_uuid}/search/nodes", response_model=Page[NodeOut])
async def search_nodes(graph_uuid: str, body: SearchIn, zep: Zep4, page_size: SearchPage = None,
                       cursor: Cursor = None) -> Page[NodeOut]:
    target = zep.addresses.graph(graph_uuid)
    hits = await search_graph(zep, target, body, "nodes", page_size)
    mentions = await zep.memory.store.episodes_of_entities(target.group_id, [e.id for e, _ in hits.entities])
    return Page[NodeOut](items=[render.node(e, target, score=s, episode_ids=mentions.get(e.id))
                                for e, s in hits.entities])


@router.post("/graphs/{graph_uuid}/search/episodes", response_model=Page[EpisodeOut])
async def search_episodes(graph_uuid: str, body: SearchIn, zep: Zep4, page_size: SearchPage = None,
                          cursor: Cursor = None) -> Page[EpisodeOut]:
    target = zep.addresses.graph(graph_uuid)
    hits = await search_graph(zep, target, body, "episodes", page_size)
    return Page[EpisodeOut](items=[render.episode(e, target, score=s) for e, s in hits.episodes])


_WORD = re.compile(r"\w+")


def _overlap(query: str, text: str) -> float:
    wanted = {w.casefold() for w in _WORD.findall(query)}
    found = {w.casefold() for w in _WORD.findall(text)}
    return len(wanted & found) / len(wanted) if wanted else 0.0


@router.post("/graphs/{graph_uuid}/search/thread-summaries", response_model=Page[ThreadSummaryOut])
async def search_thread_summaries(graph_uuid: str, body: SearchIn, zep: Zep4, page_size: SearchPage = None,
                                  cursor: Cursor = None) -> Page[ThreadSummaryOut]:
    """The summaries of the user's threads, those sharing most words with the query first (a named
    graph has no threads: an empty page)."""
    target = zep.addresses.graph(graph_uuid)
    if target.user is None:
        return Page[ThreadSummaryOut](items=[])
    threads = zep.space.list_threads(user_id=target.user.user_id, limit=1_000, offset=0)
    summaries = [await summary_of(zep, t) for t in threads]
    scored = sorted(((s.model_copy(update={"score": _overlap(body.query, s.summary)})) for s in summaries),
                    key=lambda s: -(s.score or 0.0))
    return Page[ThreadSummaryOut](items=scored[: page_size or 10])


@router.post("/graphs/{graph_uuid}/thread-summaries/list", response_model=Page[ThreadSummaryOut])
async def list_thread_summaries(graph_uuid: str, zep: Zep4, page_size: PageSize = DEFAULT_PAGE,
                                cursor: Cursor = None) -> Page[ThreadSummaryOut]:
    """The summaries of the user's threads, oldest thread first (a named graph has none)."""
    target = zep.addresses.graph(graph_uuid)
    if target.user is None:
        return Page[ThreadSummaryOut](items=[], total_size=0)
    offset = window(cursor)
    threads = zep.space.list_threads(user_id=target.user.user_id, limit=page_size, offset=offset)
    total = zep.control.count_threads(zep.space.project.id, user_id=target.user.user_id)
    return page_of([await summary_of(zep, t) for t in threads], offset, page_size, total)


@router.post("/graphs/{graph_uuid}/warm", status_code=202, response_model=AsyncResultOut)
async def warm(graph_uuid: str, zep: Zep4) -> AsyncResultOut:
    """Nothing to warm: a graph's indexes are loaded when it is first searched. Answers a task
    already succeeded."""
    zep.addresses.graph(graph_uuid)
    return AsyncResultOut(task=zep.tasks.done("graph_warm", {"graph_uuid": graph_uuid}))


@router.post("/graphs/{graph_uuid}/search/observations", response_model=Page[dict[str, Any]])
async def search_observations(graph_uuid: str, body: SearchIn, zep: Zep4, page_size: SearchPage = None,
                              cursor: Cursor = None) -> Page[dict[str, Any]]:
    """chronomem keeps no observations (Zep's derived insights): always an empty page."""
    zep.addresses.graph(graph_uuid)
    return Page[dict[str, Any]](items=[])


@router.post("/graphs/{graph_uuid}/subgraph", response_model=SubgraphOut)
async def get_subgraph(graph_uuid: str, body: SubgraphIn, zep: Zep4) -> SubgraphOut:
    """The nodes and edges within ``depth`` hops of the seed nodes (at most ``max_nodes`` nodes and
    ``max_edges`` edges; ``truncated`` says when a bound cut it)."""
    refuse_unsupported("graph.get_subgraph", filters=body.filters)
    target = zep.addresses.graph(graph_uuid)
    found = await zep.space.subgraph(target.ref, [object_id(s) for s in body.seed_node_uuids],
                                     depth=body.depth if body.depth is not None else 1,
                                     max_nodes=body.max_nodes or 100, max_edges=body.max_edges or 500,
                                     direction=body.direction or "both")
    names = {e.id: e.name for e in found.entities}
    return SubgraphOut(nodes=[render.node(e, target) for e in found.entities],
                       edges=[render.edge(f, target, names=names) for f in found.facts], truncated=found.truncated,
                       truncation_reason=found.reason)
