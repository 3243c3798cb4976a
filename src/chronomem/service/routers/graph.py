"""Graphs and what is in them (Zep v3: ``/graph``): episodes, fact triples, entities, facts, search.

Every graph route names its graph with exactly one of ``user_id`` (a user's graph) and
``graph_id`` (a named graph of the project, created with ``POST /graphs``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response

from chronomem.app.tenancy import GraphRef
from chronomem.service.deps import CONFLICT_RESPONSE, ERROR_RESPONSES, Space
from chronomem.service.schemas import (
    AddEpisodeRequest,
    AddEpisodeResponse,
    AddFactRequest,
    EntityOut,
    EntityPage,
    EntityUpdate,
    EpisodeList,
    EpisodeMetadataUpdate,
    EpisodeOut,
    FactHistory,
    FactOut,
    FactPage,
    FactUpdate,
    GraphCreate,
    GraphList,
    GraphOut,
    NeighborList,
    NeighborOut,
    SearchRequest,
    SearchResponse,
    SubgraphRequest,
    SubgraphResponse,
)
from chronomem.service.search_mapping import render_results, search_options

__all__ = ["router"]

router = APIRouter(tags=["graph"], responses=ERROR_RESPONSES)

IdQuery = Annotated[str | None, Query(min_length=1, max_length=256)]
PageSize = Annotated[int, Query(ge=1, le=100)]
Cursor = Annotated[str | None, Query(max_length=256, description="next_cursor of the previous page")]


def graph_ref(user_id: IdQuery = None, graph_id: IdQuery = None) -> GraphRef:
    """The graph named in the query string (``InvalidInputError`` → 422 unless exactly one)."""
    return GraphRef(user_id=user_id, graph_id=graph_id)


Target = Annotated[GraphRef, Depends(graph_ref)]


def _ref(body: Any) -> GraphRef:
    return GraphRef(user_id=body.user_id, graph_id=body.graph_id)


# -- named graphs ------------------------------------------------------------------------------------


@router.post("/graphs", status_code=201, responses=CONFLICT_RESPONSE, response_model=GraphOut,
             summary="Create a named (shared) graph")
async def create_graph(body: GraphCreate, space: Space) -> GraphOut:
    return GraphOut.from_record(space.create_graph(body.graph_id, name=body.name, description=body.description))


@router.get("/graphs", response_model=GraphList, summary="List named graphs")
async def list_graphs(
    space: Space,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> GraphList:
    return GraphList(graphs=[GraphOut.from_record(g) for g in space.list_graphs(limit=limit, offset=offset)])


@router.get("/graphs/{graph_id}", response_model=GraphOut, summary="Get a named graph")
async def get_graph(graph_id: str, space: Space) -> GraphOut:
    return GraphOut.from_record(space.get_graph(graph_id))


@router.delete("/graphs/{graph_id}", status_code=204, summary="Delete a named graph and everything in it")
async def delete_graph(graph_id: str, space: Space) -> Response:
    await space.delete_graph(graph_id)
    return Response(status_code=204)


# -- episodes ----------------------------------------------------------------------------------------


@router.post("/graph/episodes", status_code=202, responses=CONFLICT_RESPONSE, response_model=AddEpisodeResponse,
             summary="Add an episode (text, json or message): stored now, extracted by workers")
async def add_episode(body: AddEpisodeRequest, space: Space) -> AddEpisodeResponse:
    episode, task = await space.add_episode(
        _ref(body), body.data, kind=body.type, speaker=body.speaker, role=body.role,
        reference_time=body.created_at, source_description=body.source_description, metadata=body.metadata,
        episode_id=body.uuid,
    )
    return AddEpisodeResponse(episode=EpisodeOut.from_domain(episode), task_id=task.task_id)


@router.get("/graph/episodes", response_model=EpisodeList, summary="A graph's latest episodes, newest first")
async def list_episodes(
    target: Target, space: Space, lastn: Annotated[int, Query(ge=1, le=100)] = 20
) -> EpisodeList:
    return EpisodeList(episodes=[EpisodeOut.from_domain(e) for e in await space.list_episodes(target, limit=lastn)])


@router.get("/graph/episodes/{uuid}", response_model=EpisodeOut, summary="Get an episode")
async def get_episode(uuid: str, target: Target, space: Space) -> EpisodeOut:
    return EpisodeOut.from_domain(await space.get_episode(target, uuid))


@router.patch("/graph/episodes/{uuid}", response_model=EpisodeOut,
              summary="Merge metadata onto an episode (a null removes a key); its content never changes")
async def update_episode_metadata(uuid: str, body: EpisodeMetadataUpdate, target: Target, space: Space) -> EpisodeOut:
    return EpisodeOut.from_domain(await space.update_episode_metadata(target, uuid, body.metadata))


@router.delete("/graph/episodes/{uuid}", status_code=204,
               summary="Delete an episode and what only it supported")
async def delete_episode(uuid: str, target: Target, space: Space) -> Response:
    await space.delete_episode(target, uuid)
    return Response(status_code=204)


# -- facts and entities ------------------------------------------------------------------------------


@router.post("/graph/facts", status_code=201, responses=CONFLICT_RESPONSE, response_model=FactOut,
             summary="Add a fact triple with timestamps (no model involved)")
async def add_fact(body: AddFactRequest, space: Space) -> FactOut:
    fact = await space.add_fact(
        _ref(body), body.source_node_name, body.fact_name, body.target_node_name, body.fact,
        valid_at=body.valid_at, invalid_at=body.invalid_at, participants=body.other_node_names,
        provenance=body.provenance(),
    )
    return FactOut.from_domain(fact)


@router.get("/graph/facts", response_model=FactPage,
            summary="A graph's facts, superseded versions included, oldest first, a page at a time")
async def list_facts(target: Target, space: Space, limit: PageSize = 50, cursor: Cursor = None) -> FactPage:
    page = await space.list_facts(target, limit=limit, cursor=cursor)
    return FactPage(facts=[FactOut.from_domain(f) for f in page.items], next_cursor=page.next_cursor)


@router.get("/graph/facts/{uuid}", response_model=FactOut, summary="Get a fact (an edge)")
async def get_fact(uuid: str, target: Target, space: Space) -> FactOut:
    return FactOut.from_domain(await space.get_fact(target, uuid))


@router.patch("/graph/facts/{uuid}", response_model=FactOut,
              summary="Change a fact's text, validity, relation type or attributes: a new version "
                      "(the one it replaces stays in its history)")
async def update_fact(uuid: str, body: FactUpdate, target: Target, space: Space) -> FactOut:
    changes = body.model_dump(exclude_unset=True, exclude={"source_episode_uuid", "source"})
    return FactOut.from_domain(await space.update_fact(target, uuid, source=body.provenance(), **changes))


@router.get("/graph/facts/{uuid}/history", response_model=FactHistory,
            summary="Every version of a fact, oldest first, with when our records held each")
async def fact_history(uuid: str, target: Target, space: Space) -> FactHistory:
    return FactHistory.from_domain(await space.fact_history(target, uuid))


@router.delete("/graph/facts/{uuid}", status_code=204, summary="Delete a fact")
async def delete_fact(uuid: str, target: Target, space: Space) -> Response:
    await space.delete_fact(target, uuid)
    return Response(status_code=204)


@router.get("/graph/entities", response_model=EntityPage, summary="A graph's entities, oldest first, a page at a time")
async def list_entities(target: Target, space: Space, limit: PageSize = 50, cursor: Cursor = None) -> EntityPage:
    page = await space.list_entities(target, limit=limit, cursor=cursor)
    return EntityPage(entities=[EntityOut.from_domain(e) for e in page.items], next_cursor=page.next_cursor)


@router.patch("/graph/entities/{uuid}", response_model=EntityOut,
              summary="Rename an entity or change its summary, labels or attributes (recorded as an edit)")
async def update_entity(uuid: str, body: EntityUpdate, target: Target, space: Space) -> EntityOut:
    return EntityOut.from_domain(await space.update_entity(target, uuid, **body.model_dump(exclude_unset=True)))


@router.get("/graph/entities/{uuid}", response_model=EntityOut, summary="Get an entity (a node)")
async def get_entity(uuid: str, target: Target, space: Space) -> EntityOut:
    return EntityOut.from_domain(await space.get_entity(target, uuid))


@router.delete("/graph/entities/{uuid}", status_code=204, summary="Delete an entity and its facts")
async def delete_entity(uuid: str, target: Target, space: Space) -> Response:
    await space.delete_entity(target, uuid)
    return Response(status_code=204)


# -- navigation --------------------------------------------------------------------------------------


@router.get("/graph/entities/{uuid}/neighbors", response_model=NeighborList,
            summary="The entities one current fact away, each with the facts that join them")
async def neighbors(uuid: str, target: Target, space: Space,
                    direction: Literal["in", "out", "both"] = "both") -> NeighborList:
    found = await space.neighbours(target, uuid, direction=direction)
    return NeighborList(neighbors=[NeighborOut(entity=EntityOut.from_domain(n.entity),
                                               facts=[FactOut.from_domain(f) for f in n.facts]) for n in found])


@router.post("/graph/subgraph", response_model=SubgraphResponse,
             summary="The entities within depth facts of the seeds, and the current facts among them")
async def subgraph(body: SubgraphRequest, space: Space) -> SubgraphResponse:
    found = await space.subgraph(_ref(body), body.seed_entity_uuids, depth=body.depth, max_nodes=body.max_entities,
                                 max_edges=body.max_facts, direction=body.direction)
    return SubgraphResponse(entities=[EntityOut.from_domain(e) for e in found.entities],
                            facts=[FactOut.from_domain(f) for f in found.facts], truncated=found.truncated,
                            truncation_reason=found.reason)  # type: ignore[arg-type]


# -- search ------------------------------------------------------------------------------------------


@router.post("/graph/search", response_model=SearchResponse,
             summary="Search facts, entities, episodes and communities, with filters and time travel")
async def search(body: SearchRequest, space: Space) -> SearchResponse:
    results = await space.search(_ref(body), body.query, **search_options(body))
    return render_results(results)
