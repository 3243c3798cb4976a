"""``client.graph``: graphs, adding data (episodes, batches, fact triples), search and clone."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from chronomem.app.tenancy import GraphRef
from chronomem.errors import InvalidInputError
from chronomem.service.compat import render
from chronomem.service.compat.deps import Zep, ZepSpace
from chronomem.service.compat.errors import refuse_unsupported
from chronomem.service.compat.models import (
    AddDataBatchRequest,
    AddDataRequest,
    AddTripleRequest,
    AddTripleResponse,
    CloneGraphRequest,
    CloneGraphResponse,
    CreateGraphRequest,
    EpisodeDataIn,
    EpisodeOut,
    GraphListOut,
    GraphOut,
    SearchRequest,
    SearchResultsOut,
    SuccessOut,
    UpdateGraphRequest,
)
from chronomem.service.compat.search import run_search

__all__ = ["router"]

router = APIRouter(tags=["graph"])


def target(user_id: str | None, graph_id: str | None) -> GraphRef:
    return GraphRef(user_id=user_id, graph_id=graph_id)


# -- named graphs ------------------------------------------------------------------------------------


@router.post("/graph/create", status_code=201, response_model=GraphOut)
async def create(body: CreateGraphRequest, zep: Zep) -> GraphOut:
    refuse_unsupported("graph.create", time_zone=body.time_zone)
    record = zep.space.create_graph(body.graph_id, name=body.name or "", description=body.description or "")
    return render.graph(record)


@router.get("/graph/list-all", response_model=GraphListOut)
async def list_all(
    zep: Zep,
    page_number: Annotated[int, Query(alias="pageNumber", ge=1, le=100_000)] = 1,
    page_size: Annotated[int, Query(alias="pageSize", ge=1, le=1_000)] = 100,
    search: Annotated[str | None, Query(max_length=256)] = None,
    order_by: Annotated[str | None, Query(max_length=64)] = None,
    asc: bool | None = None,
) -> GraphListOut:
    refuse_unsupported("graph.list_all", search=search, order_by=order_by)
    graphs = zep.space.list_graphs(limit=page_size, offset=(page_number - 1) * page_size)
    if asc is False:
        graphs.reverse()
    return GraphListOut(graphs=[render.graph(g) for g in graphs], page_number=page_number, page_size=page_size,
                        row_count=len(graphs), total_count=zep.control.count_graphs(zep.space.project.id))


@router.post("/graph/clone", response_model=CloneGraphResponse)
async def clone(body: CloneGraphRequest, zep: Zep) -> CloneGraphResponse:
    """Copy a user's graph or a named graph into a new user or graph (created here), exactly:
    every episode, entity, fact and vector. Done before the answer; the task covers the copied
    episodes (already done)."""
    source = target(body.source_user_id, body.source_graph_id)
    destination = target(body.target_user_id, body.target_graph_id)
    source_group = zep.space.group_of(source)
    if destination.user_id is not None:
        group_id = zep.space.create_user(destination.user_id).group_id
    else:
        assert destination.graph_id is not None
        group_id = zep.space.create_graph(destination.graph_id).group_id
    export = await zep.memory.export_group(source_group)
    await zep.memory.import_group(export, group_id=group_id)
    task_id = None
    if export.episodes:
        task_id = zep.control.create_task(zep.space.project.id, group_id, [e.id for e in export.episodes]).task_id
    return CloneGraphResponse(graph_id=destination.graph_id, user_id=destination.user_id, task_id=task_id)


# -- adding data -------------------------------------------------------------------------------------


def _episode_fields(item: AddDataRequest | EpisodeDataIn) -> dict[str, Any]:
    return {"kind": item.type, "reference_time": item.created_at, "source_description": item.source_description or "",
            "metadata": item.metadata}


@router.post("/graph", response_model=EpisodeOut, status_code=202)
async def add(body: AddDataRequest, zep: Zep) -> EpisodeOut:
    """Store one episode (text, json or message) durably and queue it for extraction."""
    refuse_unsupported("graph.add", document_id=body.document_id, strict_ontology=body.strict_ontology)
    ref = target(body.user_id, body.graph_id)
    episode, task = await zep.space.add_episode(ref, body.data, **_episode_fields(body))
    zep.locate.remember(ref, task.group_id, [episode.id])
    return render.episode(episode, task_id=task.task_id)


@router.post("/graph-batch", response_model=list[EpisodeOut], status_code=202)
async def add_batch(body: AddDataBatchRequest, zep: Zep) -> list[EpisodeOut]:
    """Store several episodes durably, in order, under one task."""
    refuse_unsupported("graph.add_batch", document_id=body.document_id, strict_ontology=body.strict_ontology)
    ref = target(body.user_id, body.graph_id)
    episodes, task = await zep.space.add_episodes(ref, [(e.data, _episode_fields(e)) for e in body.episodes])
    zep.locate.remember(ref, task.group_id, [e.id for e in episodes])
    return [render.episode(e, task_id=task.task_id) for e in episodes]


async def _node_name(zep: ZepSpace, ref: GraphRef, name: str | None, uuid: str | None, side: str) -> str:
    if uuid is not None:
        return (await zep.space.get_entity(ref, uuid)).name
    if not name:
        raise InvalidInputError(f"give {side}_node_name or {side}_node_uuid")
    return name


@router.post("/graph/add-fact-triple", response_model=AddTripleResponse)
async def add_fact_triple(body: AddTripleRequest, zep: Zep) -> AddTripleResponse:
    """A fact between two named (or existing) nodes, resolved without a model, written at once."""
    refuse_unsupported(
        "graph.add_fact_triple", created_at=body.created_at, expired_at=body.expired_at,
        source_node_labels=body.source_node_labels, target_node_labels=body.target_node_labels,
        source_node_summary=body.source_node_summary, target_node_summary=body.target_node_summary,
        source_node_attributes=body.source_node_attributes, target_node_attributes=body.target_node_attributes,
        edge_attributes=body.edge_attributes, metadata=body.metadata,
    )
    ref = target(body.user_id, body.graph_id)
    source = await _node_name(zep, ref, body.source_node_name, body.source_node_uuid, "source")
    destination = await _node_name(zep, ref, body.target_node_name, body.target_node_uuid, "target")
    fact = await zep.space.add_fact(ref, source, body.fact_name, destination, body.fact,
                                    valid_at=body.valid_at, invalid_at=body.invalid_at)
    group_id = zep.space.group_of(ref)
    nodes = {e.id: e for e in await zep.memory.store.get_entities(group_id, [fact.source_id, fact.target_id])}
    zep.locate.remember(ref, group_id, [fact.id, *nodes])
    names = {i: e.name for i, e in nodes.items()}
    return AddTripleResponse(
        edge=render.edge(fact, names=names),
        source_node=render.node(nodes[fact.source_id]) if fact.source_id in nodes else None,
        target_node=render.node(nodes[fact.target_id]) if fact.target_id in nodes else None,
    )


# -- search ------------------------------------------------------------------------------------------


@router.post("/graph/search", response_model=SearchResultsOut, response_model_exclude_none=True)
async def search(body: SearchRequest, zep: Zep) -> SearchResultsOut:
    ref = target(body.user_id, body.graph_id)
    group_id = zep.space.group_of(ref)
    hits = await run_search(zep.space, zep.memory, ref, group_id, body)
    if hits.scope == "facts":
        zep.locate.remember(ref, group_id, [f.id for f, _ in hits.facts])
        return SearchResultsOut(edges=[render.edge(f, names=hits.names, score=s) for f, s in hits.facts])
    if hits.scope == "entities":
        zep.locate.remember(ref, group_id, [e.id for e, _ in hits.entities])
        return SearchResultsOut(nodes=[render.node(e, score=s) for e, s in hits.entities])
    zep.locate.remember(ref, group_id, [e.id for e, _ in hits.episodes])
    return SearchResultsOut(episodes=[render.episode(e, score=s) for e, s in hits.episodes])


# -- one named graph (after the fixed paths above, which this pattern would shadow) --------------------


@router.get("/graph/{graph_id}", response_model=GraphOut)
async def get(graph_id: str, zep: Zep) -> GraphOut:
    return render.graph(zep.space.get_graph(graph_id))


@router.patch("/graph/{graph_id}", response_model=GraphOut)
async def update(graph_id: str, body: UpdateGraphRequest, zep: Zep) -> GraphOut:
    refuse_unsupported("graph.update", time_zone=body.time_zone)
    return render.graph(zep.space.update_graph(graph_id, name=body.name, description=body.description))


@router.delete("/graph/{graph_id}", response_model=SuccessOut)
async def delete(graph_id: str, zep: Zep) -> SuccessOut:
    await zep.space.delete_graph(graph_id)
    return SuccessOut(message=f"graph {graph_id!r} deleted")
