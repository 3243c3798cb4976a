"""Zep's v4 SDK (``zep-cloud`` 4.x), unmodified, against a chronomem server at ``/api/v4``.

Run by tests/service/test_zep_v4_sdk.py inside .venv-zep4 (the 4.x SDK cannot share chronomem's
venv with the 3.x one): it makes every call of the memory subset with the sync client and again
with the async one, and prints what came back as one JSON object, which the test asserts on. An
answer the SDK's own pydantic models could not parse raises here, and the run fails.

    .venv-zep4/bin/python tests/service/zep4/sdk_calls.py --base-url URL --key KEY --other-key KEY2
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import time
import uuid
from typing import Any

import httpx
from zep_cloud import (
    AddMessage,
    BatchItemInput,
    DateFilter,
    DateFilterGroup,
    DateFilters,
    EdgeInput,
    EdgeNodeRef,
    EdgeSearchFilters,
    EdgeType,
    EntityProperty,
    EntityType,
    HyperedgeInput,
    NodeInput,
    UserInstruction,
)
from zep_cloud.client import AsyncZep, Zep
from zep_cloud.core.api_error import ApiError


async def call(result: Any) -> Any:
    """An SDK call's result, awaited when the client is the async one."""
    return await result if inspect.isawaitable(result) else result


async def collect(pager: Any) -> list[Any]:
    """Every item of a cursor pager (the SDK follows ``next_cursor``)."""
    pager = await call(pager)
    if hasattr(pager, "__aiter__"):
        return [item async for item in pager]
    return list(pager)


async def failure(make: Any) -> dict[str, Any]:
    """The status and v4 error body of a call (``make`` makes it) that must fail."""
    try:
        await call(make())
    except ApiError as exc:
        body = exc.body
        error = getattr(body, "error", None)
        if error is None and isinstance(body, dict):
            error = body.get("error")
        if error is not None and not isinstance(error, dict):
            error = error.dict() if hasattr(error, "dict") else vars(error)
        return {"status": exc.status_code, "type": type(exc).__name__, "error": error}
    return {"status": None}


async def status(make: Any) -> int | None:
    """The status a call that must fail answered."""
    return (await failure(make))["status"]  # type: ignore[no-any-return]


async def wait(zep: Any, task_uuid: str) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        task = await call(zep.task.get(task_uuid))
        if task.status not in ("pending", "processing"):
            return str(task.status)
        await asyncio.sleep(0.05)
    return "timeout"


async def scenario(zep: Any, other: Any, stranger: Any, native: httpx.Client, tag: str) -> dict[str, Any]:
    out: dict[str, Any] = {}

    # -- users --------------------------------------------------------------------------------------
    ada = await call(zep.user.create(user_id=f"{tag}-ada", first_name="Ada", last_name="Lovelace",
                                     email="ada@example.com", metadata={"plan": "pro"}))
    out["user"] = {"uuid": ada.uuid_, "graph_uuid": ada.graph_uuid, "user_id": ada.user_id,
                   "metadata": ada.metadata, "is_uuid": str(uuid.UUID(ada.uuid_)) == ada.uuid_}
    out["user_duplicate"] = await failure(lambda: zep.user.create(user_id=f"{tag}-ada"))
    anonymous = await call(zep.user.create(first_name="Bo"))
    out["user_anonymous_id"] = anonymous.user_id
    updated = await call(zep.user.update(ada.uuid_, last_name="Byron"))
    out["user_updated"] = [updated.first_name, updated.last_name, (await call(zep.user.get(ada.uuid_))).last_name]
    listed = await collect(zep.user.list(page_size=1))
    out["user_list"] = {"has_both": {ada.uuid_, anonymous.uuid_} <= {u.uuid_ for u in listed},
                        "count": len(listed), "distinct": len({u.uuid_ for u in listed})}
    out["user_lookup"] = (await call(zep.user.lookup(user_id=f"{tag}-ada"))).uuid_ == ada.uuid_
    out["user_missing"] = await failure(lambda: zep.user.get(str(uuid.uuid4())))
    out["user_other_project"] = await failure(lambda: other.user.get(ada.uuid_))
    out["unauthorized"] = await failure(lambda: stranger.user.get(ada.uuid_))
    key = f"{tag}-{uuid.uuid4()}"
    first = await call(zep.user.create(user_id=f"{tag}-idem", idempotency_key=key))
    again = await call(zep.user.create(user_id=f"{tag}-idem", idempotency_key=key))
    out["idempotent_create"] = first.uuid_ == again.uuid_

    # -- threads and messages -----------------------------------------------------------------------
    thread = await call(zep.thread.create(user_uuid=ada.uuid_))
    out["thread"] = {"user_uuid": thread.user_uuid == ada.uuid_, "graph_uuid": thread.graph_uuid == ada.uuid_,
                     "thread_id": thread.thread_id}
    added = await call(zep.thread.add_messages(thread.uuid_, return_context=True, messages=[
        AddMessage(role="user", name="Ada", content="I moved to Lisbon in May 2024.",
                   reference_time="2024-05-02T10:00:00Z"),
        AddMessage(role="assistant", name="Assistant", content="How do you like Lisbon so far?"),
    ]))
    out["add_messages"] = {
        "count": len(added.messages), "reference_time": added.messages[0].reference_time,
        "roles": [m.role for m in added.messages], "context_is_str": isinstance(added.context, str),
        "task_status": await wait(zep, added.task.uuid_),
    }
    messages = await collect(zep.thread.list_messages(thread.uuid_, page_size=1))
    out["list_messages"] = [m.content for m in messages]
    out["get_message"] = (await call(zep.thread.message.get(thread.uuid_, added.messages[0].uuid_))).content
    out["thread_context"] = (await call(zep.thread.get_context(thread.uuid_))).context
    out["thread_episodes"] = [e.content for e in await collect(zep.thread.list_episodes(thread.uuid_))]
    out["thread_summary"] = (await call(zep.thread.get_summary(thread.uuid_))).summary
    out["thread_list"] = [t.uuid_ for t in await collect(zep.thread.list(user_uuid=ada.uuid_))] == [thread.uuid_]
    out["thread_get"] = (await call(zep.thread.get(thread.uuid_))).uuid_ == thread.uuid_
    node = await call(zep.user.get_node(ada.uuid_))
    out["user_node"] = {"name": node.name, "episodes": len(node.episode_uuids)}
    # a thread made through the native API (an external id): found by lookup, then by its UUID
    native.post("/api/v3/threads", json={"thread_id": f"{tag}-legacy", "user_id": f"{tag}-ada"}).raise_for_status()
    legacy = await call(zep.thread.lookup(thread_id=f"{tag}-legacy"))
    out["thread_lookup"] = {"thread_id": legacy.thread_id,
                            "get": (await call(zep.thread.get(legacy.uuid_))).thread_id}

    # -- the user's graph -----------------------------------------------------------------------------
    out["user_graph_context"] = (await call(zep.graph.get_context(ada.uuid_, query="Where does Ada live?"))).context
    found = await collect(zep.graph.search_edges(ada.uuid_, query="Ada Lisbon", page_size=5))
    out["user_search_edges"] = [e.fact for e in found]
    summaries = await collect(zep.graph.search_thread_summaries(ada.uuid_, query="Lisbon"))
    out["thread_summaries"] = len(summaries)
    out["observations"] = len(await collect(zep.graph.search_observations(ada.uuid_, query="Lisbon")))
    out["graph_lookup"] = (await call(zep.graph.lookup(user_id=f"{tag}-ada"))).uuid_ == ada.uuid_
    batch = await call(zep.lookup.batch(users=[f"{tag}-ada", f"{tag}-nobody"], threads=[f"{tag}-legacy"]))
    out["lookup_batch"] = [(i.resource_type, i.found, i.uuid_ == ada.uuid_) for i in batch.items]

    # -- a named graph: episodes, edges, nodes, hyperedges --------------------------------------------
    graph = await call(zep.graph.create(name=f"{tag}-kb", description="the knowledge base"))
    out["graph"] = {"type": graph.type, "graph_id": graph.graph_id, "name": graph.name}
    renamed = await call(zep.graph.update(graph.uuid_, name=f"{tag}-kb2"))
    out["graph_updated"] = [renamed.name, (await call(zep.graph.get(graph.uuid_))).description]
    graphs = {g.uuid_: g.type for g in await collect(zep.graph.list(page_size=2))}
    out["graph_list"] = [graphs.get(graph.uuid_), graphs.get(ada.uuid_)]
    episode = await call(zep.graph.episode.add(graph.uuid_, data="Grace Hopper joined Acme Corp as CTO in 2021.",
                                               type="text", source_description="press release"))
    out["episode_add"] = {"source": episode.episode.source, "task": await wait(zep, episode.task.uuid_)}
    out["episode_get"] = (await call(zep.graph.episode.get(graph.uuid_, episode.episode.uuid_))).content
    out["episode_list"] = len(await collect(zep.graph.episode.list(graph.uuid_, page_size=1)))
    episode_uuid = episode.episode.uuid_
    first_update = await call(zep.graph.episode.update(graph.uuid_, episode_uuid, metadata={
        "source": "press", "year": 2021, "tags": ["cto", "acme"], "checked": True}))
    merged = await call(zep.graph.episode.update(graph.uuid_, episode_uuid, metadata={"checked": None, "year": 2022}))
    out["episode_update"] = {
        "first": first_update.metadata, "merged": merged.metadata, "content": merged.content,
        "eleven_keys": await failure(lambda: zep.graph.episode.update(
            graph.uuid_, episode_uuid, metadata={f"k{n}": n for n in range(11)})),
        "nested": await failure(lambda: zep.graph.episode.update(
            graph.uuid_, episode_uuid, metadata={"year": 2023, "place": {"city": "Arlington"}})),
        "other_project": await status(lambda: other.graph.episode.update(
            graph.uuid_, episode_uuid, metadata={"year": 1999})),
        "after": (await call(zep.graph.episode.get(graph.uuid_, episode_uuid))).metadata,
    }
    added_edges = await call(zep.graph.edge.add(graph.uuid_, edges=[EdgeInput(
        fact="Grace Hopper lives in Arlington", fact_name="LIVES_IN", source_node=EdgeNodeRef(name="Grace Hopper"),
        target_node=EdgeNodeRef(name="Arlington"), valid_at="2020-01-01T00:00:00Z")]))
    edge_uuid = added_edges.edges[0].uuid_
    edge = await call(zep.graph.edge.get(graph.uuid_, edge_uuid))
    out["edge"] = {"name": edge.name, "source": edge.source_node_name, "target": edge.target_node_name,
                   "valid_at": edge.valid_at}
    changed = await call(zep.graph.edge.update(graph.uuid_, edge_uuid, fact="Grace Hopper lives in Arlington, VA"))
    out["edge_updated"] = changed.fact
    edges = await collect(zep.graph.edge.list(graph.uuid_, page_size=1))
    out["edge_list"] = edge_uuid in {e.uuid_ for e in edges}
    typed = await collect(zep.graph.edge.list(graph.uuid_, filters=EdgeSearchFilters(edge_types=["LIVES_IN"])))
    out["edge_list_typed"] = sorted({e.name for e in typed})
    searched = await collect(zep.graph.search_edges(graph.uuid_, query="Where does Grace Hopper live?",
                                                    page_size=5))
    out["search_edges"] = [e.fact for e in searched]
    dated = await collect(zep.graph.search_edges(graph.uuid_, query="Grace Hopper", filters=EdgeSearchFilters(
        date_filters=DateFilters(any_of=[DateFilterGroup(all_of=[DateFilter(
            field="valid_at", operator="lt", value="2020-06-01T00:00:00Z")])]))))
    out["search_edges_dated"] = [e.fact for e in dated]
    out["search_nodes"] = [n.name for n in await collect(zep.graph.search_nodes(graph.uuid_, query="Grace Hopper"))]
    out["search_episodes"] = [e.content for e in await collect(zep.graph.search_episodes(graph.uuid_, query="CTO"))]
    out["search_too_many"] = await failure(lambda: zep.graph.search_edges(graph.uuid_, query="x", page_size=51))
    added_nodes = await call(zep.graph.node.add(graph.uuid_, nodes=[
        NodeInput(name="Ada Lovelace", label="Person", summary="Wrote the first program."),
        NodeInput(name="Grace Hopper")]))  # Grace is in the graph already: answered as she is
    out["node_add"] = [[n.name for n in added_nodes.nodes], added_nodes.task.status]
    nodes = {n.name: n for n in await collect(zep.graph.node.list(graph.uuid_, page_size=1))}
    out["node_added"] = [nodes["Ada Lovelace"].labels, nodes["Ada Lovelace"].summary,
                         added_nodes.nodes[1].uuid_ == nodes["Grace Hopper"].uuid_]
    grace = nodes["Grace Hopper"]
    out["node_get"] = (await call(zep.graph.node.get(graph.uuid_, grace.uuid_))).name
    out["node_updated"] = (await call(zep.graph.node.update(graph.uuid_, grace.uuid_,
                                                            summary="Computer scientist."))).summary
    neighbours = await collect(zep.graph.node.list_neighbors(graph.uuid_, grace.uuid_))
    out["neighbors"] = sorted(n.node.name for n in neighbours)
    sub = await call(zep.graph.get_subgraph(graph.uuid_, seed_node_uuids=[grace.uuid_], depth=1))
    out["subgraph"] = {"nodes": sorted(n.name for n in sub.nodes), "edges": len(sub.edges), "truncated": sub.truncated}
    hyper = await call(zep.graph.hyperedge.add(graph.uuid_, fact="Grace, Alan and Ada met at the summit", edges=[
        HyperedgeInput(name="MET_AT", source_node=EdgeNodeRef(name="Grace Hopper"),
                       target_node=EdgeNodeRef(name="Summit")),
        HyperedgeInput(name="MET_AT", source_node=EdgeNodeRef(name="Alan Turing"),
                       target_node=EdgeNodeRef(name="Summit")),
    ]))
    hyper_uuid = hyper.hyperedge.uuid_
    got = await call(zep.graph.hyperedge.get(graph.uuid_, hyper_uuid))
    out["hyperedge"] = {"members": len(got.edges), "listed": hyper_uuid in
                        {h.uuid_ for h in await collect(zep.graph.hyperedge.list(graph.uuid_))}}
    out["hyperedge_two_nodes"] = await failure(lambda: zep.graph.hyperedge.add(graph.uuid_, fact="A and B", edges=[
        HyperedgeInput(name="KNOWS", source_node=EdgeNodeRef(name="A"), target_node=EdgeNodeRef(name="B"))]))
    corrected = await call(zep.graph.hyperedge.update(graph.uuid_, hyper_uuid, fact="Grace, Alan and Ada met in 1950"))
    out["hyperedge_updated"] = corrected.fact
    deleted = await call(zep.graph.hyperedge.delete(graph.uuid_, hyper_uuid))
    gone = await status(lambda: zep.graph.hyperedge.get(graph.uuid_, hyper_uuid))
    out["hyperedge_deleted"] = [deleted.task.status, gone]
    out["graph_context"] = (await call(zep.graph.get_context(graph.uuid_, query="Where does Grace Hopper live?"))
                            ).context

    # -- ontology and context templates -------------------------------------------------------------
    out["ontology_default"] = (await call(zep.graph.get_ontology(graph.uuid_))).inherited
    ontology = await call(zep.graph.set_ontology(
        graph.uuid_, entity_types=[EntityType(name="Person", description="A person.", properties=[
            EntityProperty(name="role", type="text", description="Their role.")])],
        edge_types=[EdgeType(name="WORKS_AT", description="Employment.")]))
    out["ontology_set"] = [ontology.inherited, [t.name for t in ontology.entity_types or []],
                           [p.type for t in ontology.entity_types or [] for p in t.properties or []]]
    out["ontology_inherit"] = (await call(zep.graph.set_ontology(graph.uuid_, inherited=True))).inherited
    template = await call(zep.context.create_template(name=f"{tag}-facts", template="FACTS:\n%{edges limit=5}"))
    out["template"] = {"get": (await call(zep.context.get_template(template.uuid_))).name,
                       "listed": template.uuid_ in {t.uuid_ for t in await collect(zep.context.list_templates())}}
    await call(zep.context.update_template(template.uuid_, name=f"{tag}-facts", template="KNOWN:\n%{edges limit=5}"))
    out["templated_context"] = (await call(zep.thread.get_context(thread.uuid_, template_uuid=template.uuid_))).context
    await call(zep.context.delete_template(template.uuid_))
    out["template_deleted"] = await status(lambda: zep.context.get_template(template.uuid_))

    project = await call(zep.project.set_ontology(entity_types=[EntityType(name="Pet", description="An animal.")]))
    out["project_ontology"] = [project.inherited, [t.name for t in project.entity_types or []],
                               (await call(zep.project.set_ontology(inherited=True))).inherited]
    instructions = await call(zep.user.set_summary_instructions(
        ada.uuid_, instructions=[UserInstruction(name="tone", text="Note the user's preferred tone.")]))
    out["summary_instructions"] = [instructions.inherited, [i.name for i in instructions.instructions or []],
                                   (await call(zep.user.get_summary_instructions(ada.uuid_))).inherited]
    out["thread_summary_list"] = len(await collect(zep.graph.thread_summary.list(ada.uuid_)))
    out["warm"] = (await call(zep.graph.warm(graph.uuid_))).task.status

    # -- a batch: messages and episodes queued as one unit ---------------------------------------
    batch = await call(zep.batch.create(metadata={"source": "import"}))
    items = await call(zep.batch.add_items(batch.uuid_, items=[
        BatchItemInput(type="thread_message", thread_uuid=thread.uuid_, role="user", name="Ada",
                       content="I started learning the cello.", reference_time="2024-06-01T09:00:00Z"),
        BatchItemInput(type="graph_episode", graph_uuid=graph.uuid_, data="Acme Corp opened an office in Oslo.",
                       data_type="text"),
        BatchItemInput(type="graph_episode", graph_uuid=str(uuid.uuid4()), data="lost", data_type="text"),
    ]))
    out["batch_items"] = [len(items.items), [r.index for r in items.rejected_items or []],
                          (await call(zep.batch.get(batch.uuid_))).status]
    processed = await call(zep.batch.process(batch.uuid_))
    out["batch_process"] = [await wait(zep, processed.task.uuid_), (await call(zep.batch.get(batch.uuid_))).status,
                            sorted(i.status for i in await collect(zep.batch.list_items(batch.uuid_)))]
    out["batch_again"] = await status(lambda: zep.batch.process(batch.uuid_))
    out["batch_listed"] = batch.uuid_ in {b.uuid_ for b in await collect(zep.batch.list())}
    out["batch_found"] = [e.content for e in await collect(zep.graph.search_episodes(graph.uuid_, query="Oslo office"))]

    # -- a retried add_messages (same Idempotency-Key) adds its messages once -------------------------
    retried = await call(zep.thread.create(user_uuid=ada.uuid_))
    key = f"{tag}-{uuid.uuid4()}"
    sent = [AddMessage(role="user", name="Ada", content="I booked a trip to Porto.")]
    first_add = await call(zep.thread.add_messages(retried.uuid_, messages=sent, idempotency_key=key))
    second_add = await call(zep.thread.add_messages(retried.uuid_, messages=sent, idempotency_key=key))
    out["idempotent_add_messages"] = [
        [m.uuid_ for m in first_add.messages] == [m.uuid_ for m in second_add.messages],
        len(await collect(zep.thread.list_messages(retried.uuid_))),
        await status(lambda: zep.thread.add_messages(thread.uuid_, messages=sent, idempotency_key=key)),
    ]

    # -- another project's key reaches nothing of this one -------------------------------------------
    out["other_project"] = [await status(make) for make in (
        lambda: other.thread.get(thread.uuid_), lambda: other.graph.get(graph.uuid_),
        lambda: other.graph.edge.get(graph.uuid_, edge_uuid), lambda: other.graph.node.get(graph.uuid_, grace.uuid_),
        lambda: other.graph.search_edges(ada.uuid_, query="Lisbon"), lambda: other.task.get(episode.task.uuid_),
        lambda: other.batch.get(batch.uuid_), lambda: other.graph.episode.delete(graph.uuid_, episode.episode.uuid_),
        lambda: other.user.delete(ada.uuid_))]

    # -- clone, tasks, deletes ----------------------------------------------------------------------
    clone = await call(zep.graph.clone(graph.uuid_, request={"name": f"{tag}-copy"}))
    copied = await collect(zep.graph.edge.list(clone.graph.uuid_))
    out["clone"] = {"task": clone.task.status, "edges": len(copied), "differs": clone.graph.uuid_ != graph.uuid_}
    tasks = await collect(zep.task.list(page_size=5))
    out["task_list"] = {"any": len(tasks) > 0, "statuses": sorted({t.status for t in tasks})}
    removed = await call(zep.graph.edge.delete(graph.uuid_, edge_uuid))
    out["edge_deleted"] = [removed.task.status, await status(lambda: zep.graph.edge.get(graph.uuid_, edge_uuid))]
    removed = await call(zep.graph.node.delete(graph.uuid_, grace.uuid_))
    out["node_deleted"] = [removed.task.status, await status(lambda: zep.graph.node.get(graph.uuid_, grace.uuid_))]
    removed = await call(zep.graph.episode.delete(graph.uuid_, episode.episode.uuid_))
    out["episode_deleted"] = [removed.task.status,
                              await status(lambda: zep.graph.episode.get(graph.uuid_, episode.episode.uuid_))]
    out["task_get"] = (await call(zep.task.get(removed.task.uuid_))).status
    removed = await call(zep.graph.delete(graph.uuid_))
    out["graph_deleted"] = [removed.task.status, await status(lambda: zep.graph.get(graph.uuid_))]
    removed = await call(zep.thread.delete(thread.uuid_))
    out["thread_deleted"] = [removed.task.status, await status(lambda: zep.thread.get(thread.uuid_))]
    out["not_implemented"] = await failure(lambda: zep.project.get())
    removed = await call(zep.user.delete(ada.uuid_))
    out["user_deleted"] = [removed.task.status, await status(lambda: zep.user.get(ada.uuid_))]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--other-key", required=True)
    args = parser.parse_args()
    v4, root = args.base_url.rstrip("/") + "/api/v4", args.base_url.rstrip("/")
    native = httpx.Client(base_url=root, headers={"Authorization": f"Bearer {args.key}"}, timeout=30)
    report: dict[str, Any] = {}
    run = uuid.uuid4().hex[:8]  # external ids unique to this run

    def sync_client(key: str) -> Zep:
        return Zep(api_key=key, base_url=v4, max_retries=0, timeout=30)

    report["sync"] = asyncio.run(scenario(sync_client(args.key), sync_client(args.other_key),
                                          sync_client("cmk_nobody_secret"), native, f"sync-{run}"))

    async def run_async() -> dict[str, Any]:
        def client(key: str) -> AsyncZep:
            return AsyncZep(api_key=key, base_url=v4, max_retries=0, timeout=30)

        clients = client(args.key), client(args.other_key), client("cmk_nobody_secret")
        return await scenario(*clients, native, f"async-{run}")

    report["async"] = asyncio.run(run_async())
    print(json.dumps(report, default=str))


if __name__ == "__main__":
    main()
