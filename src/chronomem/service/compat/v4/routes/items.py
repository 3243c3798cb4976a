"""``client.graph.episode / edge / node / hyperedge``: what a graph holds, under its UUID."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from chronomem.app.addresses import Target, object_id, wire_id
from chronomem.domain import Entity, Fact
from chronomem.errors import InvalidInputError, NotFoundError
from chronomem.service.compat.search import edge_passes
from chronomem.service.compat.v4 import render
from chronomem.service.compat.v4.deps import Zep4, Zep4Space
from chronomem.service.compat.v4.errors import refuse_unsupported
from chronomem.service.compat.v4.idempotency import IdempotentRoute
from chronomem.service.compat.v4.models import (
    AddEdgesIn,
    AddEpisodeIn,
    AddEpisodeOut,
    AddHyperedgeIn,
    AddNodesIn,
    AsyncResultOut,
    EdgeOut,
    EdgeUpdateIn,
    EpisodeOut,
    EpisodeUpdateIn,
    HyperedgeMemberOut,
    HyperedgeOut,
    HyperedgeUpdateIn,
    ListIn,
    NeighborEntryOut,
    NeighborsIn,
    NodeOut,
    NodeRefIn,
    NodeUpdateIn,
    Page,
)
from chronomem.service.compat.v4.pages import DEFAULT_PAGE, Cursor, PageSize, page_of, window
from chronomem.service.compat.v4.search import dates_pass, v3_filters

__all__ = ["router"]

router = APIRouter(tags=["graph"], route_class=IdempotentRoute)
OptionalList = Annotated[ListIn | None, Body()]
_SCAN = 500


# -- episodes ----------------------------------------------------------------------------------------


@router.post("/graphs/{graph_uuid}/episodes", status_code=202, response_model=AddEpisodeOut)
async def add_episode(graph_uuid: str, body: AddEpisodeIn, zep: Zep4) -> AddEpisodeOut:
    """Store one episode (text, json or message) durably and queue it for extraction."""
    refuse_unsupported("graph.episode.add", document_id=body.document_id, strict_ontology=body.strict_ontology)
    target = zep.addresses.graph(graph_uuid)
    episode, task = await zep.space.add_episode(
        target.ref, body.data, kind=body.type, reference_time=body.reference_time,
        source_description=body.source_description or "", metadata=body.metadata)
    return AddEpisodeOut(episode=render.episode(episode, target), task=await zep.tasks.ingest(task, "episode_add"))


@router.post("/graphs/{graph_uuid}/episodes/list", response_model=Page[EpisodeOut])
async def list_episodes(graph_uuid: str, zep: Zep4, body: OptionalList = None, page_size: PageSize = DEFAULT_PAGE,
                        cursor: Cursor = None, order_by: str | None = None,
                        order: str | None = None) -> Page[EpisodeOut]:
    """A graph's episodes, newest first (``order=asc``: oldest first); ``mentioned_node_uuids``
    keeps those that mention one of the nodes."""
    refuse_unsupported("graph.episode.list", order_by=order_by if order_by not in (None, "created_at") else None)
    filters = body.filters if body else None
    if filters is not None:
        refuse_unsupported("graph.episode.list", metadata_filters=filters.metadata_filters,
                           content_policy_violated=filters.content_policy_violated)
    target = zep.addresses.graph(graph_uuid)
    offset = window(cursor)
    mentioned_only = filters is not None and bool(filters.mentioned_node_uuids)
    # newest first, unfiltered: read no further than the page (and one more, to know there is a next)
    reach = None if order == "asc" or mentioned_only else offset + page_size + 1
    episodes = await zep.memory.list_episodes(target.group_id, limit=reach)
    if filters is not None and filters.mentioned_node_uuids:
        nodes = [object_id(n) for n in filters.mentioned_node_uuids]
        mentioned = {e for ids in (await zep.memory.store.episodes_of_entities(target.group_id, nodes)).values()
                     for e in ids}
        episodes = [e for e in episodes if e.id in mentioned]
    if order == "asc":
        episodes.reverse()
    shown = [render.episode(e, target) for e in episodes[offset:offset + page_size + 1]]
    return page_of(shown, offset, page_size, len(episodes) if reach is None else None)


@router.get("/graphs/{graph_uuid}/episodes/{episode_uuid}", response_model=EpisodeOut)
async def get_episode(graph_uuid: str, episode_uuid: str, zep: Zep4) -> EpisodeOut:
    target = zep.addresses.graph(graph_uuid)
    return render.episode(await zep.space.get_episode(target.ref, object_id(episode_uuid)), target)


@router.patch("/graphs/{graph_uuid}/episodes/{episode_uuid}", response_model=EpisodeOut)
async def update_episode(graph_uuid: str, episode_uuid: str, body: EpisodeUpdateIn, zep: Zep4) -> EpisodeOut:
    """Merge metadata onto an episode (a key set to null is removed; at most 10 keys after the
    merge; strings, numbers, booleans or arrays of those). Its content never changes."""
    target = zep.addresses.graph(graph_uuid)
    episode = await zep.space.update_episode_metadata(target.ref, object_id(episode_uuid), body.metadata or {})
    return render.episode(episode, target)


@router.delete("/graphs/{graph_uuid}/episodes/{episode_uuid}", response_model=AsyncResultOut)
async def delete_episode(graph_uuid: str, episode_uuid: str, zep: Zep4) -> AsyncResultOut:
    """Forget an episode and what only it supported (done before the answer)."""
    target = zep.addresses.graph(graph_uuid)
    await zep.space.delete_episode(target.ref, object_id(episode_uuid))
    return AsyncResultOut(task=zep.tasks.done("episode_delete", {"episode_uuid": episode_uuid}))


# -- edges -------------------------------------------------------------------------------------------


async def _names(zep: Zep4Space, target: Target, facts: list[Fact]) -> dict[str, str]:
    ids = sorted({i for f in facts for i in f.entity_ids})
    return {e.id: e.name for e in await zep.memory.store.get_entities(target.group_id, ids)}


async def _edge_out(zep: Zep4Space, target: Target, fact: Fact) -> EdgeOut:
    return render.edge(fact, target, names=await _names(zep, target, [fact]))


async def _node_name(zep: Zep4Space, target: Target, ref: NodeRefIn, side: str) -> str:
    refuse_unsupported(f"graph.edge.add ({side}_node)", labels=ref.labels, summary=ref.summary,
                       attributes=ref.attributes)
    if ref.uuid is not None:
        return (await zep.space.get_entity(target.ref, object_id(ref.uuid))).name
    if not ref.name:
        raise InvalidInputError(f"{side}_node: give uuid or name")
    return ref.name


@router.post("/graphs/{graph_uuid}/edges", status_code=202, response_model=dict[str, Any])
async def add_edges(graph_uuid: str, body: AddEdgesIn, zep: Zep4) -> dict[str, Any]:
    """Fact triples between named (or existing) nodes, resolved without a model and written at
    once; restating a stored fact adds nothing new (Zep's ``deduplicate``)."""
    target = zep.addresses.graph(graph_uuid)
    added = []
    for item in body.edges:
        refuse_unsupported("graph.edge.add", expired_at=item.expired_at, attributes=item.attributes,
                           metadata=item.metadata)
        source = await _node_name(zep, target, item.source_node, "source")
        destination = await _node_name(zep, target, item.target_node, "target")
        fact = await zep.space.add_fact(target.ref, source, item.fact_name, destination, item.fact,
                                        valid_at=item.valid_at, invalid_at=item.invalid_at)
        added.append({"uuid": wire_id(fact.id), "fact": fact.fact, "fact_name": fact.relation_type,
                      "source_node_uuid": wire_id(fact.source_id), "target_node_uuid": wire_id(fact.target_id),
                      "valid_at": fact.valid_at.isoformat() if fact.valid_at else None,
                      "invalid_at": fact.invalid_at.isoformat() if fact.invalid_at else None})
    task = zep.tasks.done("edge_add", {"edges": [{"edge_uuid": a["uuid"]} for a in added]})
    return {"edges": added, "task": task.model_dump(mode="json")}


@router.post("/graphs/{graph_uuid}/edges/list", response_model=Page[EdgeOut])
async def list_edges(graph_uuid: str, zep: Zep4, body: OptionalList = None, page_size: PageSize = DEFAULT_PAGE,
                     cursor: Cursor = None, order_by: str | None = None, order: str | None = None) -> Page[EdgeOut]:
    """A graph's facts, superseded versions included, oldest first; the filters of a search apply."""
    refuse_unsupported("graph.edge.list", order_by=order_by if order_by not in (None, "created_at") else None,
                       order=order if order not in (None, "asc") else None)
    target = zep.addresses.graph(graph_uuid)
    filters = body.filters if body else None
    offset = window(cursor)
    if filters is None:
        page = await zep.space.list_facts(target.ref, limit=page_size + 1, cursor=cursor)
        facts = page.items
    else:
        wanted = v3_filters("graph.edge.list", filters)
        assert wanted is not None
        labels = ({e.id: e.labels for e in await _all_entities(zep, target)}
                  if wanted.exclude_node_labels or wanted.node_labels else {})
        every = await zep.memory.list_facts(target.group_id)
        facts = [f for f in every if edge_passes(f, wanted, labels) and dates_pass(f, filters.date_filters)
                 and (not wanted.node_labels or any(set(labels.get(i, ())) & set(wanted.node_labels)
                                                   for i in f.entity_ids))
                 and (not wanted.edge_types or f.relation_type in wanted.edge_types)][offset:offset + page_size + 1]
    names = await _names(zep, target, facts[:page_size])
    return page_of([render.edge(f, target, names=names) for f in facts], offset, page_size)


async def _all_entities(zep: Zep4Space, target: Target) -> list[Entity]:
    return await zep.memory.list_entities(target.group_id)


@router.get("/graphs/{graph_uuid}/edges/{edge_uuid}", response_model=EdgeOut)
async def get_edge(graph_uuid: str, edge_uuid: str, zep: Zep4) -> EdgeOut:
    target = zep.addresses.graph(graph_uuid)
    return await _edge_out(zep, target, await zep.space.get_fact(target.ref, object_id(edge_uuid)))


@router.patch("/graphs/{graph_uuid}/edges/{edge_uuid}", response_model=EdgeOut)
async def update_edge(graph_uuid: str, edge_uuid: str, body: EdgeUpdateIn, zep: Zep4) -> EdgeOut:
    """Change a fact's text or attributes: a new version, recorded as an edit."""
    target = zep.addresses.graph(graph_uuid)
    fact = await zep.space.update_fact(target.ref, object_id(edge_uuid), fact=body.fact, attributes=body.attributes)
    return await _edge_out(zep, target, fact)


@router.delete("/graphs/{graph_uuid}/edges/{edge_uuid}", response_model=AsyncResultOut)
async def delete_edge(graph_uuid: str, edge_uuid: str, zep: Zep4) -> AsyncResultOut:
    target = zep.addresses.graph(graph_uuid)
    await zep.space.delete_fact(target.ref, object_id(edge_uuid))
    return AsyncResultOut(task=zep.tasks.done("edge_delete", {"edge_uuid": edge_uuid}))


# -- nodes -------------------------------------------------------------------------------------------


async def _node_out(zep: Zep4Space, target: Target, entity: Entity) -> NodeOut:
    mentions = (await zep.memory.store.episodes_of_entities(target.group_id, [entity.id])).get(entity.id, [])
    return render.node(entity, target, episode_ids=mentions)


@router.post("/graphs/{graph_uuid}/nodes", status_code=202, response_model=dict[str, Any])
async def add_nodes(graph_uuid: str, body: AddNodesIn, zep: Zep4) -> dict[str, Any]:
    """Nodes added by hand, written at once, each recorded as an edit episode that mentions it; a
    node the graph already has under an equal name is answered as it is."""
    target = zep.addresses.graph(graph_uuid)
    added = []
    for item in body.nodes:
        refuse_unsupported("graph.node.add", metadata=item.metadata)
        entity, _ = await zep.space.add_entity(target.ref, item.name, summary=item.summary or "",
                                               labels=[item.label] if item.label else [],
                                               attributes=item.attributes)
        added.append({"uuid": wire_id(entity.id), "name": entity.name, "label": entity.labels[0],
                      "summary": entity.summary, "attributes": entity.attributes,
                      "created_at": entity.created_at.isoformat()})
    task = zep.tasks.done("node_add", {"nodes": [{"node_uuid": a["uuid"]} for a in added]})
    return {"nodes": added, "task": task.model_dump(mode="json")}


@router.post("/graphs/{graph_uuid}/nodes/list", response_model=Page[NodeOut])
async def list_nodes(graph_uuid: str, zep: Zep4, body: OptionalList = None, page_size: PageSize = DEFAULT_PAGE,
                     cursor: Cursor = None, order_by: str | None = None, order: str | None = None) -> Page[NodeOut]:
    """A graph's nodes, oldest first (``node_labels`` and ``exclude_node_labels`` apply)."""
    refuse_unsupported("graph.node.list", order_by=order_by if order_by not in (None, "created_at") else None,
                       order=order if order not in (None, "asc") else None)
    target = zep.addresses.graph(graph_uuid)
    filters = body.filters if body else None
    offset = window(cursor)
    if filters is None:
        entities = (await zep.space.list_entities(target.ref, limit=page_size + 1, cursor=cursor)).items
    else:
        refuse_unsupported("graph.node.list", property_filters=filters.property_filters,
                           metadata_filters=filters.metadata_filters, edge_types=filters.edge_types,
                           edge_uuids=filters.edge_uuids, episode_uuids=filters.episode_uuids)
        entities = [e for e in await _all_entities(zep, target)
                    if (not filters.node_labels or set(e.labels) & set(filters.node_labels))
                    and not set(e.labels) & set(filters.exclude_node_labels or ())
                    and dates_pass(e, filters.date_filters)][offset:offset + page_size + 1]
    mentions = await zep.memory.store.episodes_of_entities(target.group_id, [e.id for e in entities[:page_size]])
    return page_of([render.node(e, target, episode_ids=mentions.get(e.id)) for e in entities], offset, page_size)


@router.get("/graphs/{graph_uuid}/nodes/{node_uuid}", response_model=NodeOut)
async def get_node(graph_uuid: str, node_uuid: str, zep: Zep4) -> NodeOut:
    target = zep.addresses.graph(graph_uuid)
    return await _node_out(zep, target, await zep.space.get_entity(target.ref, object_id(node_uuid)))


@router.patch("/graphs/{graph_uuid}/nodes/{node_uuid}", response_model=NodeOut)
async def update_node(graph_uuid: str, node_uuid: str, body: NodeUpdateIn, zep: Zep4) -> NodeOut:
    """Rename a node or change its summary or attributes (recorded as an edit)."""
    target = zep.addresses.graph(graph_uuid)
    entity = await zep.space.update_entity(target.ref, object_id(node_uuid), name=body.name, summary=body.summary,
                                           attributes=body.attributes)
    return await _node_out(zep, target, entity)


@router.delete("/graphs/{graph_uuid}/nodes/{node_uuid}", response_model=AsyncResultOut)
async def delete_node(graph_uuid: str, node_uuid: str, zep: Zep4) -> AsyncResultOut:
    """Forget a node and every fact it takes part in (done before the answer)."""
    target = zep.addresses.graph(graph_uuid)
    await zep.space.delete_entity(target.ref, object_id(node_uuid))
    return AsyncResultOut(task=zep.tasks.done("node_delete", {"node_uuid": node_uuid}))


@router.post("/graphs/{graph_uuid}/nodes/{node_uuid}/neighbors", response_model=Page[NeighborEntryOut])
async def list_neighbors(graph_uuid: str, node_uuid: str, zep: Zep4, body: Annotated[NeighborsIn | None, Body()] = None,
                         page_size: PageSize = DEFAULT_PAGE, cursor: Cursor = None, order_by: str | None = None,
                         order: str | None = None) -> Page[NeighborEntryOut]:
    """The nodes one edge away, each with the current edges that join them, in the order they
    were joined."""
    refuse_unsupported("graph.node.list_neighbors", filters=body.filters if body else None,
                       order_by=order_by if order_by not in (None, "created_at") else None,
                       order=order if order not in (None, "asc") else None)
    target = zep.addresses.graph(graph_uuid)
    found = await zep.space.neighbours(target.ref, object_id(node_uuid),
                                       direction=(body.direction if body and body.direction else "both"))
    offset = window(cursor)
    shown = found[offset:offset + page_size]
    names = {n.entity.id: n.entity.name for n in shown} | {object_id(node_uuid): ""}
    names.update(await _names(zep, target, [f for n in shown for f in n.facts]))
    entries = [NeighborEntryOut(node=render.node(n.entity, target),
                                edges=[render.edge(f, target, names=names) for f in n.facts]) for n in shown]
    return page_of(entries, offset, page_size, len(found))


# -- hyperedges: chronomem's facts over three or more entities ----------------------------------------


def _hyperedge(fact: Fact, target: Target) -> HyperedgeOut:
    members = [HyperedgeMemberOut(uuid=wire_id(fact.id), name=fact.relation_type,
                                  source_node_uuid=wire_id(fact.source_id), target_node_uuid=wire_id(other))
               for other in (fact.target_id, *fact.other_entity_ids)]
    return HyperedgeOut(uuid=wire_id(fact.id), graph_uuid=target.uuid, user_uuid=target.user_uuid, fact=fact.fact,
                        edges=members, created_at=fact.created_at, valid_at=fact.valid_at,
                        invalid_at=fact.invalid_at, expired_at=fact.expired_at)


@router.post("/graphs/{graph_uuid}/hyperedges", status_code=202, response_model=dict[str, Any])
async def add_hyperedge(graph_uuid: str, body: AddHyperedgeIn, zep: Zep4) -> dict[str, Any]:
    """One fact joining the distinct nodes its member edges name (at least 3), written at once; the
    first member's relation names it."""
    refuse_unsupported("graph.hyperedge.add", expired_at=body.expired_at, attributes=body.attributes,
                       metadata=body.metadata)
    target = zep.addresses.graph(graph_uuid)
    names: list[str] = []
    for member in body.edges:
        for side, ref in (("source", member.source_node), ("target", member.target_node)):
            name = await _node_name(zep, target, ref, side)
            if name.casefold() not in {n.casefold() for n in names}:
                names.append(name)
    if len(names) < 3:
        raise InvalidInputError("a hyperedge joins at least 3 distinct nodes")
    fact = await zep.space.add_fact(target.ref, names[0], body.edges[0].name, names[1], body.fact,
                                    valid_at=body.valid_at, invalid_at=body.invalid_at, participants=names[2:])
    out = _hyperedge(fact, target).model_dump(mode="json")
    task = zep.tasks.done("hyperedge_add", {"hyperedge_uuid": out["uuid"]})
    return {"hyperedge": out, "task": task.model_dump(mode="json")}


@router.post("/graphs/{graph_uuid}/hyperedges/list", response_model=Page[HyperedgeOut])
async def list_hyperedges(graph_uuid: str, zep: Zep4, body: OptionalList = None, page_size: PageSize = DEFAULT_PAGE,
                          cursor: Cursor = None) -> Page[HyperedgeOut]:
    refuse_unsupported("graph.hyperedge.list", filters=body.filters if body else None)
    target = zep.addresses.graph(graph_uuid)
    offset = window(cursor)
    hyper = [f for f in await zep.memory.list_facts(target.group_id) if f.other_entity_ids]
    return page_of([_hyperedge(f, target) for f in hyper[offset:offset + page_size + 1]], offset, page_size)


async def _hyper_fact(zep: Zep4Space, target: Target, address: str) -> Fact:
    fact = await zep.space.get_fact(target.ref, object_id(address))
    if not fact.other_entity_ids:
        raise NotFoundError(f"hyperedge {address!r} not found (an edge of two nodes)")
    return fact


@router.get("/graphs/{graph_uuid}/hyperedges/{hyperedge_uuid}", response_model=HyperedgeOut)
async def get_hyperedge(graph_uuid: str, hyperedge_uuid: str, zep: Zep4) -> HyperedgeOut:
    target = zep.addresses.graph(graph_uuid)
    return _hyperedge(await _hyper_fact(zep, target, hyperedge_uuid), target)


@router.delete("/graphs/{graph_uuid}/hyperedges/{hyperedge_uuid}", response_model=AsyncResultOut)
async def delete_hyperedge(graph_uuid: str, hyperedge_uuid: str, zep: Zep4) -> AsyncResultOut:
    target = zep.addresses.graph(graph_uuid)
    fact = await _hyper_fact(zep, target, hyperedge_uuid)
    await zep.space.delete_fact(target.ref, fact.id)
    return AsyncResultOut(task=zep.tasks.done("hyperedge_delete", {"hyperedge_uuid": hyperedge_uuid}))


@router.patch("/graphs/{graph_uuid}/hyperedges/{hyperedge_uuid}", response_model=HyperedgeOut)
async def update_hyperedge(graph_uuid: str, hyperedge_uuid: str, body: HyperedgeUpdateIn, zep: Zep4) -> HyperedgeOut:
    """Correct a hyperedge's text: a new version of the fact, the old one kept in its history."""
    target = zep.addresses.graph(graph_uuid)
    fact = await _hyper_fact(zep, target, hyperedge_uuid)
    return _hyperedge(await zep.space.update_fact(target.ref, fact.id, fact=body.fact), target)
