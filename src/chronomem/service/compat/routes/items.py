"""``client.graph.episode / edge / node``: what a graph holds, addressed by uuid, listed by page.

Lists (``get_by_user_id`` / ``get_by_graph_id``) come oldest first, ``limit`` at a time; the cursor
of the next page is in the ``Zep-Next-Cursor`` response header (absent on the last page), and
``uuid_cursor`` (the last uuid of the previous page) works too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Body, Query, Response

from chronomem.app.groups import Page, encode_cursor
from chronomem.app.tenancy import GraphRef
from chronomem.errors import InvalidInputError
from chronomem.service.compat import render
from chronomem.service.compat.deps import Zep, ZepSpace
from chronomem.service.compat.errors import refuse_unsupported
from chronomem.service.compat.models import (
    EdgeOut,
    EpisodeMentionsOut,
    EpisodeOut,
    EpisodesOut,
    ListRequest,
    NodeOut,
    SuccessOut,
    UpdateEdgeRequest,
    UpdateNodeRequest,
)

__all__ = ["NEXT_CURSOR_HEADER", "router"]

router = APIRouter(tags=["graph"])

NEXT_CURSOR_HEADER = "Zep-Next-Cursor"
_DEFAULT_PAGE = 100
_SCAN_PAGE = 500
LastN = Annotated[int | None, Query(ge=1, le=1_000)]
OptionalList = Annotated[ListRequest | None, Body()]  # the SDK sends no body when no option is set
T = TypeVar("T")


# -- episodes ----------------------------------------------------------------------------------------


async def _latest_episodes(zep: ZepSpace, ref: GraphRef, lastn: int | None) -> EpisodesOut:
    episodes = await zep.space.list_episodes(ref, limit=lastn or _DEFAULT_PAGE)
    zep.locate.remember(ref, zep.space.group_of(ref), [e.id for e in episodes])
    return EpisodesOut(episodes=[render.episode(e) for e in episodes])


@router.get("/graph/episodes/user/{user_id}", response_model=EpisodesOut)
async def episodes_by_user(user_id: str, zep: Zep, lastn: LastN = None) -> EpisodesOut:
    """A user's latest episodes, newest first."""
    return await _latest_episodes(zep, GraphRef(user_id=user_id), lastn)


@router.get("/graph/episodes/graph/{graph_id}", response_model=EpisodesOut)
async def episodes_by_graph(graph_id: str, zep: Zep, lastn: LastN = None) -> EpisodesOut:
    return await _latest_episodes(zep, GraphRef(graph_id=graph_id), lastn)


@router.get("/graph/episodes/{uuid}", response_model=EpisodeOut)
async def get_episode(uuid: str, zep: Zep) -> EpisodeOut:
    _, _, episode = await zep.locate.episode(uuid)
    return render.episode(episode)


@router.delete("/graph/episodes/{uuid}", response_model=SuccessOut)
async def delete_episode(uuid: str, zep: Zep) -> SuccessOut:
    """Delete an episode and what only it supported (as ``DELETE /api/v3/graph/episodes`` does)."""
    ref, _, _ = await zep.locate.episode(uuid)
    await zep.space.delete_episode(ref, uuid)
    return SuccessOut(message=f"episode {uuid!r} deleted")


@router.get("/graph/episodes/{uuid}/mentions", response_model=EpisodeMentionsOut)
async def episode_mentions(uuid: str, zep: Zep) -> EpisodeMentionsOut:
    """The entities an episode mentions and the facts it supports."""
    ref, group_id, _ = await zep.locate.episode(uuid)
    store = zep.memory.store
    entity_ids = (await store.entities_of_episodes(group_id, [uuid])).get(uuid, [])
    entities = await store.get_entities(group_id, entity_ids)
    facts = await store.facts_of_episode(group_id, uuid)
    names = {e.id: e.name for e in entities}
    zep.locate.remember(ref, group_id, [*names, *(f.id for f in facts)])
    return EpisodeMentionsOut(nodes=[render.node(e) for e in entities],
                              edges=[render.edge(f, names=names) for f in facts])


# -- listing by page ---------------------------------------------------------------------------------


async def _page(
    body: ListRequest, call: str, lister: Callable[[int, str | None], Awaitable[Page[T]]], key: Callable[[T], str]
) -> Page[T]:
    refuse_unsupported(call, filters=body.filters, direction=body.direction if body.direction != "asc" else None,
                       order_by=body.order_by if body.order_by not in (None, "created_at") else None)
    if body.cursor and body.uuid_cursor:
        raise InvalidInputError("give cursor or uuid_cursor, not both")
    limit = body.limit or _DEFAULT_PAGE
    cursor = body.cursor or (await _after(body.uuid_cursor, lister, key) if body.uuid_cursor else None)
    return await lister(limit, cursor)


async def _after(uuid: str, lister: Callable[[int, str | None], Awaitable[Page[T]]],
                 key: Callable[[T], str]) -> str:
    """The cursor of the position just after ``uuid`` (found by reading the listing in order)."""
    cursor, seen = None, 0
    while True:
        page = await lister(_SCAN_PAGE, cursor)
        for i, item in enumerate(page.items):
            if key(item) == uuid:
                return encode_cursor(seen + i + 1)
        if page.next_cursor is None:
            raise InvalidInputError(f"uuid_cursor {uuid!r} is not in this graph")
        seen += len(page.items)
        cursor = page.next_cursor


def _with_cursor(response: Response, page: Page[Any]) -> None:
    if page.next_cursor is not None:
        response.headers[NEXT_CURSOR_HEADER] = page.next_cursor


async def _edges_page(
    zep: ZepSpace, ref: GraphRef, body: ListRequest | None, response: Response, call: str
) -> list[EdgeOut]:
    async def lister(limit: int, cursor: str | None) -> Page[Any]:
        return await zep.space.list_facts(ref, limit=limit, cursor=cursor)

    page = await _page(body or ListRequest(), call, lister, lambda f: f.id)
    _with_cursor(response, page)
    group_id = zep.space.group_of(ref)
    ids = sorted({i for f in page.items for i in (f.source_id, f.target_id)})
    names = {e.id: e.name for e in await zep.memory.store.get_entities(group_id, ids)}
    zep.locate.remember(ref, group_id, [f.id for f in page.items])
    return [render.edge(f, names=names) for f in page.items]


async def _nodes_page(
    zep: ZepSpace, ref: GraphRef, body: ListRequest | None, response: Response, call: str
) -> list[NodeOut]:
    async def lister(limit: int, cursor: str | None) -> Page[Any]:
        return await zep.space.list_entities(ref, limit=limit, cursor=cursor)

    page = await _page(body or ListRequest(), call, lister, lambda e: e.id)
    _with_cursor(response, page)
    zep.locate.remember(ref, zep.space.group_of(ref), [e.id for e in page.items])
    return [render.node(e) for e in page.items]


@router.post("/graph/edge/user/{user_id}", response_model=list[EdgeOut])
async def edges_by_user(user_id: str, response: Response, zep: Zep, body: OptionalList = None) -> list[EdgeOut]:
    return await _edges_page(zep, GraphRef(user_id=user_id), body, response, "graph.edge.get_by_user_id")


@router.post("/graph/edge/graph/{graph_id}", response_model=list[EdgeOut])
async def edges_by_graph(graph_id: str, response: Response, zep: Zep, body: OptionalList = None) -> list[EdgeOut]:
    return await _edges_page(zep, GraphRef(graph_id=graph_id), body, response, "graph.edge.get_by_graph_id")


@router.post("/graph/node/user/{user_id}", response_model=list[NodeOut])
async def nodes_by_user(user_id: str, response: Response, zep: Zep, body: OptionalList = None) -> list[NodeOut]:
    return await _nodes_page(zep, GraphRef(user_id=user_id), body, response, "graph.node.get_by_user_id")


@router.post("/graph/node/graph/{graph_id}", response_model=list[NodeOut])
async def nodes_by_graph(graph_id: str, response: Response, zep: Zep, body: OptionalList = None) -> list[NodeOut]:
    return await _nodes_page(zep, GraphRef(graph_id=graph_id), body, response, "graph.node.get_by_graph_id")


# -- edges -------------------------------------------------------------------------------------------


async def _edge(zep: ZepSpace, group_id: str, fact: Any) -> EdgeOut:
    names = {e.id: e.name for e in await zep.memory.store.get_entities(group_id, [fact.source_id, fact.target_id])}
    return render.edge(fact, names=names)


@router.get("/graph/edge/{uuid}", response_model=EdgeOut)
async def get_edge(uuid: str, zep: Zep) -> EdgeOut:
    _, group_id, fact = await zep.locate.fact(uuid)
    return await _edge(zep, group_id, fact)


@router.patch("/graph/edge/{uuid}", response_model=EdgeOut)
async def update_edge(uuid: str, body: UpdateEdgeRequest, zep: Zep) -> EdgeOut:
    """Change a fact's text, relation type, validity or attributes (recorded as an edit)."""
    refuse_unsupported("graph.edge.update", expired_at=body.expired_at)
    ref, group_id, _ = await zep.locate.fact(uuid)
    fact = await zep.space.update_fact(ref, uuid, fact=body.fact, relation_type=body.name, valid_at=body.valid_at,
                                       invalid_at=body.invalid_at, attributes=body.attributes)
    return await _edge(zep, group_id, fact)


@router.delete("/graph/edge/{uuid}", response_model=SuccessOut)
async def delete_edge(uuid: str, zep: Zep) -> SuccessOut:
    ref, _, _ = await zep.locate.fact(uuid)
    await zep.space.delete_fact(ref, uuid)
    return SuccessOut(message=f"edge {uuid!r} deleted")


# -- nodes -------------------------------------------------------------------------------------------


@router.get("/graph/node/{uuid}", response_model=NodeOut)
async def get_node(uuid: str, zep: Zep) -> NodeOut:
    _, _, entity = await zep.locate.entity(uuid)
    return render.node(entity)


@router.patch("/graph/node/{uuid}", response_model=NodeOut)
async def update_node(uuid: str, body: UpdateNodeRequest, zep: Zep) -> NodeOut:
    """Rename a node or change its summary, labels or attributes (recorded as an edit)."""
    ref, _, _ = await zep.locate.entity(uuid)
    entity = await zep.space.update_entity(ref, uuid, name=body.name, summary=body.summary, labels=body.labels,
                                           attributes=body.attributes)
    return render.node(entity)


@router.delete("/graph/node/{uuid}", response_model=SuccessOut)
async def delete_node(uuid: str, zep: Zep) -> SuccessOut:
    """Delete a node and every fact it takes part in."""
    ref, _, _ = await zep.locate.entity(uuid)
    await zep.space.delete_entity(ref, uuid)
    return SuccessOut(message=f"node {uuid!r} deleted")


@router.get("/graph/node/{uuid}/entity-edges", response_model=list[EdgeOut])
async def node_edges(uuid: str, zep: Zep) -> list[EdgeOut]:
    """Every fact the node takes part in, ended and superseded ones too (as Zep lists them)."""
    ref, group_id, _ = await zep.locate.entity(uuid)
    facts = await zep.memory.store.facts_of_entities(group_id, [uuid], include_superseded=True)
    names = await _names_of(zep, group_id, [i for f in facts for i in (f.source_id, f.target_id)])
    zep.locate.remember(ref, group_id, [f.id for f in facts])
    return [render.edge(f, names=names) for f in facts]


@router.get("/graph/node/{uuid}/episodes", response_model=EpisodesOut)
async def node_episodes(uuid: str, zep: Zep) -> EpisodesOut:
    """The episodes that mention the node, oldest first."""
    ref, group_id, _ = await zep.locate.entity(uuid)
    episode_ids = (await zep.memory.store.episodes_of_entities(group_id, [uuid])).get(uuid, [])
    episodes = await zep.memory.get_episodes(group_id, episode_ids)
    zep.locate.remember(ref, group_id, [e.id for e in episodes])
    return EpisodesOut(episodes=[render.episode(e) for e in episodes])


async def _names_of(zep: ZepSpace, group_id: str, ids: list[str]) -> dict[str, str]:
    return {e.id: e.name for e in await zep.memory.store.get_entities(group_id, sorted(set(ids)))}
