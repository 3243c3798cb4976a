"""Zep's official SDK (``zep-cloud`` 3.x), unmodified, sync and async, against a real chronomem server
at ``/api/v2``: every call of the memory subset, its errors as the SDK raises them, and 501 for the
rest. The server runs the heuristic stand-in model, so ingestion really extracts facts."""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic import Field
from zep_cloud import EntityEdgeSourceTarget, SearchFilters
from zep_cloud.client import AsyncZep, Zep
from zep_cloud.core.api_error import ApiError
from zep_cloud.errors import BadRequestError, NotFoundError
from zep_cloud.external_clients.ontology import EdgeModel, EntityModel, EntityText
from zep_cloud.types import DateFilter, EdgeType, EntityProperty, EntityType, EpisodeData, Message, UserInstruction

import processes
from service_support import create_key, free_port, start_live_server

pytestmark = pytest.mark.integration


@dataclass
class Served:
    base_url: str
    key: str
    other_key: str


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data_dir = tmp_path_factory.mktemp("zep")
    key, other = create_key(data_dir, "zep-project"), create_key(data_dir, "other-project")
    port = free_port()
    with processes.stopping(start_live_server(data_dir, port, model="heuristic"), grace=20):
        yield Served(f"http://127.0.0.1:{port}/api/v2", key, other)


@dataclass
class Client:
    """The SDK client (sync or async), a name unique to the test (for ids), and a way to open
    further clients of the same kind (closed with this one)."""

    sdk: Any
    prefix: str
    base_url: str
    http: list[Any]

    def id(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def other(self, key: str) -> Any:
        """Another client of the same kind, for ``key``."""
        return _open(type(self.sdk), key, self.base_url, self.http)


def _open(kind: Any, key: str, base_url: str, http: list[Any]) -> Any:
    client = httpx.Client(timeout=30) if kind is Zep else httpx.AsyncClient(timeout=30)
    http.append(client)
    return kind(api_key=key, base_url=base_url, httpx_client=client)


async def call(result: Any) -> Any:
    """The result of an SDK call, awaited when the client is the async one."""
    return await result if inspect.isawaitable(result) else result


@pytest.fixture(params=["sync", "async"])
async def zep(request: pytest.FixtureRequest, served: Served) -> AsyncIterator[Client]:
    kind = Zep if request.param == "sync" else AsyncZep
    prefix = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())
    http: list[Any] = []
    yield Client(_open(kind, served.key, served.base_url, http), prefix, served.base_url, http)
    for client in http:
        await call(client.aclose() if isinstance(client, httpx.AsyncClient) else client.close())


async def wait_done(zep: Client, task_id: str) -> Any:
    async with asyncio.timeout(30):
        while True:
            task = await call(zep.sdk.task.get(task_id))
            if task.status in ("completed", "failed"):
                assert task.status == "completed", task
                return task
            await asyncio.sleep(0.05)


async def user_with_thread(zep: Client, *messages: str) -> tuple[str, str]:
    """A user Ada with a thread whose messages (said by Ada) are extracted."""
    user_id, thread_id = zep.id("ada"), zep.id("thread")
    await call(zep.sdk.user.add(user_id=user_id, first_name="Ada", last_name="Lovelace"))
    await call(zep.sdk.thread.create(thread_id=thread_id, user_id=user_id))
    if messages:
        added = await call(zep.sdk.thread.add_messages(
            thread_id, messages=[Message(role="user", name="Ada", content=m) for m in messages]))
        await wait_done(zep, added.task_id)
    return user_id, thread_id


# -- users -------------------------------------------------------------------------------------------


async def test_users_add_get_update_list_and_delete(zep: Client) -> None:
    user_id = zep.id("grace")
    added = await call(zep.sdk.user.add(user_id=user_id, email="grace@example.com", first_name="Grace",
                                        metadata={"plan": "pro"}))
    assert (added.user_id, added.email, added.metadata) == (user_id, "grace@example.com", {"plan": "pro"})
    with pytest.raises(ApiError) as duplicate:
        await call(zep.sdk.user.add(user_id=user_id))
    assert duplicate.value.status_code == 409

    updated = await call(zep.sdk.user.update(user_id, last_name="Hopper"))
    assert (updated.first_name, updated.last_name) == ("Grace", "Hopper")
    assert (await call(zep.sdk.user.get(user_id))).last_name == "Hopper"
    listed = await call(zep.sdk.user.list_ordered(page_size=1000))
    assert user_id in {u.user_id for u in listed.users} and listed.total_count >= 1

    await call(zep.sdk.user.delete(user_id))
    with pytest.raises(NotFoundError):
        await call(zep.sdk.user.get(user_id))
    with pytest.raises(NotFoundError):
        await call(zep.sdk.user.delete(user_id))


async def test_user_node_and_threads(zep: Client) -> None:
    user_id, thread_id = await user_with_thread(zep, "I moved to Lisbon last May.")
    node = (await call(zep.sdk.user.get_node(user_id))).node
    assert node is not None and node.name == "Ada"
    threads = await call(zep.sdk.user.get_threads(user_id))
    assert [t.thread_id for t in threads] == [thread_id]


async def test_user_summary_instructions(zep: Client) -> None:
    user_id, _ = await user_with_thread(zep)
    await call(zep.sdk.user.add_user_summary_instructions(
        instructions=[UserInstruction(name="tone", text="Note the user's preferred tone.")], user_ids=[user_id]))
    listed = await call(zep.sdk.user.list_user_summary_instructions(user_id=user_id))
    assert [(i.name, i.text) for i in listed.instructions] == [("tone", "Note the user's preferred tone.")]
    await call(zep.sdk.user.delete_user_summary_instructions(instruction_names=["tone"], user_ids=[user_id]))
    assert (await call(zep.sdk.user.list_user_summary_instructions(user_id=user_id))).instructions == []
    with pytest.raises(NotFoundError):
        await call(zep.sdk.user.list_user_summary_instructions(user_id=zep.id("nobody")))


# -- threads -----------------------------------------------------------------------------------------


async def test_thread_messages_context_and_summary(zep: Client) -> None:
    user_id, thread_id = await user_with_thread(zep, "I moved to Lisbon last May.")
    again = await call(zep.sdk.thread.add_messages(
        thread_id, messages=[Message(role="user", name="Ada", content="Lisbon is sunny.")], return_context=True))
    assert "Lisbon" in again.context  # what the graph knew before these messages
    await wait_done(zep, again.task_id)
    batch = await call(zep.sdk.thread.add_messages_batch(thread_id, messages=[
        Message(role="assistant", content="Do you like it?"), Message(role="user", name="Ada", content="Yes!")]))
    assert len(batch.message_uuids) == 2
    await wait_done(zep, batch.task_id)

    messages = await call(zep.sdk.thread.get(thread_id))
    assert [m.content for m in messages.messages] == [
        "I moved to Lisbon last May.", "Lisbon is sunny.", "Do you like it?", "Yes!"]
    assert [m.role for m in messages.messages] == ["user", "user", "assistant", "user"]
    assert all(m.processed for m in messages.messages) and messages.total_count == 4
    assert [m.content for m in (await call(zep.sdk.thread.get(thread_id, lastn=1))).messages] == ["Yes!"]

    context = (await call(zep.sdk.thread.get_user_context(thread_id))).context
    assert "<FACTS>" in context and "Lisbon" in context
    summary = await call(zep.sdk.thread.get_summary(thread_id))
    assert summary.thread_id == thread_id and "Ada: Lisbon is sunny." in summary.summary  # the stand-in's words
    listed = await call(zep.sdk.thread.list_all(page_size=1000))
    assert thread_id in {t.thread_id for t in listed.threads}

    with pytest.raises(ApiError) as duplicate:
        await call(zep.sdk.thread.create(thread_id=thread_id, user_id=user_id))
    assert duplicate.value.status_code == 409
    await call(zep.sdk.thread.delete(thread_id))
    with pytest.raises(NotFoundError):
        await call(zep.sdk.thread.get(thread_id))
    with pytest.raises(NotFoundError):
        await call(zep.sdk.thread.get_user_context(thread_id))


async def test_context_templates(zep: Client) -> None:
    _, thread_id = await user_with_thread(zep, "I moved to Lisbon last May.", "I work at Acme.")
    template_id = zep.id("tpl")
    await call(zep.sdk.context.create_context_template(
        template_id=template_id, template="# FACTS\n%{edges limit=1}\n# USER\n%{user_summary}"))
    with pytest.raises(ApiError) as duplicate:
        await call(zep.sdk.context.create_context_template(template_id=template_id, template="%{edges}"))
    assert duplicate.value.status_code == 409
    with pytest.raises(BadRequestError):
        await call(zep.sdk.context.create_context_template(template_id=zep.id("bad"), template="%{weather}"))

    context = (await call(zep.sdk.thread.get_user_context(thread_id, template_id=template_id))).context
    facts, user = context.split("# USER")
    assert facts.startswith("# FACTS\n- ") and facts.count("\n- ") == 1  # limit=1
    assert "Lisbon" in user  # the user summary, written by the stand-in model from the facts
    assert template_id in {t.template_id for t in (await call(zep.sdk.context.list_context_templates())).templates}
    with pytest.raises(NotFoundError):
        await call(zep.sdk.thread.get_user_context(thread_id, template_id=zep.id("missing")))


# -- graphs and data ---------------------------------------------------------------------------------


async def test_graph_create_add_clone_update_and_delete(zep: Client) -> None:
    graph_id = zep.id("kb")
    created = await call(zep.sdk.graph.create(graph_id=graph_id, name="KB", description="shared"))
    assert (created.graph_id, created.name) == (graph_id, "KB")
    with pytest.raises(ApiError) as duplicate:
        await call(zep.sdk.graph.create(graph_id=graph_id))
    assert duplicate.value.status_code == 409

    text = await call(zep.sdk.graph.add(graph_id=graph_id, type="text", data="Alice works at Acme."))
    record = await call(zep.sdk.graph.add(graph_id=graph_id, type="json", data='{"name": "Acme", "city": "Oslo"}'))
    assert (text.source, record.source) == ("text", "json")
    batch = await call(zep.sdk.graph.add_batch(graph_id=graph_id, episodes=[
        EpisodeData(type="text", data="Bob lives in Paris."), EpisodeData(type="message", data="Bob: hello")]))
    assert [e.source for e in batch] == ["text", "message"] and batch[0].task_id == batch[1].task_id
    for task_id in {text.task_id, record.task_id, batch[0].task_id}:
        await wait_done(zep, task_id)

    assert (await call(zep.sdk.graph.get(graph_id))).description == "shared"
    assert (await call(zep.sdk.graph.update(graph_id, name="Knowledge"))).name == "Knowledge"
    assert graph_id in {g.graph_id for g in (await call(zep.sdk.graph.list_all(page_size=1000))).graphs}

    copy_id, copy_user = zep.id("kb-copy"), zep.id("kb-user")
    assert (await call(zep.sdk.graph.clone(source_graph_id=graph_id, target_graph_id=copy_id))).graph_id == copy_id
    await call(zep.sdk.graph.clone(source_graph_id=graph_id, target_user_id=copy_user))
    original = await call(zep.sdk.graph.search(graph_id=graph_id, query="Who works at Acme?"))
    for clone in ({"graph_id": copy_id}, {"user_id": copy_user}):
        copied = await call(zep.sdk.graph.search(**clone, query="Who works at Acme?"))
        assert [e.fact for e in copied.edges] == [e.fact for e in original.edges] != []

    await call(zep.sdk.graph.delete(graph_id))
    with pytest.raises(NotFoundError):
        await call(zep.sdk.graph.get(graph_id))
    with pytest.raises(BadRequestError):
        await call(zep.sdk.graph.add(type="text", data="no graph named"))


async def test_fact_triples_edges_and_nodes(zep: Client) -> None:
    user_id, _ = await user_with_thread(zep)
    triple = await call(zep.sdk.graph.add_fact_triple(
        user_id=user_id, source_node_name="Ada", target_node_name="Lisbon", fact_name="LIVES_IN",
        fact="Ada lives in Lisbon", valid_at="2024-05-01T00:00:00Z"))
    edge = triple.edge
    assert (edge.name, edge.source_node_name, edge.target_node_name) == ("LIVES_IN", "Ada", "Lisbon")
    assert edge.valid_at.startswith("2024-05-01")
    work = await call(zep.sdk.graph.add_fact_triple(
        user_id=user_id, source_node_uuid=triple.source_node.uuid_, target_node_name="Acme", fact_name="WORKS_AT",
        fact="Ada works at Acme"))
    assert work.edge.source_node_uuid == triple.source_node.uuid_

    assert (await call(zep.sdk.graph.edge.get(edge.uuid_))).fact == "Ada lives in Lisbon"
    updated = await call(zep.sdk.graph.edge.update(edge.uuid_, fact="Ada lives in Porto",
                                                   invalid_at="2025-01-01T00:00:00Z"))
    assert (updated.fact, updated.invalid_at[:10]) == ("Ada lives in Porto", "2025-01-01")
    assert (await call(zep.sdk.graph.edge.get(edge.uuid_))).fact == "Ada lives in Porto"
    with pytest.raises(BadRequestError):  # validity that ends before it starts; nothing changed
        await call(zep.sdk.graph.edge.update(edge.uuid_, valid_at="2026-01-01T00:00:00Z"))
    assert (await call(zep.sdk.graph.edge.get(edge.uuid_))).valid_at.startswith("2024-05-01")

    node_id = triple.source_node.uuid_
    renamed = await call(zep.sdk.graph.node.update(node_id, name="Ada L.", summary="A mathematician."))
    assert (renamed.name, renamed.summary) == ("Ada L.", "A mathematician.")
    assert (await call(zep.sdk.graph.node.get(node_id))).name == "Ada L."
    edges_of_node = await call(zep.sdk.graph.node.get_edges(node_id))  # ended ones too, as Zep lists them
    assert {e.fact for e in edges_of_node} == {"Ada lives in Porto", "Ada works at Acme"}
    provenance = (await call(zep.sdk.graph.node.get_episodes(node_id))).episodes
    assert any('"edit": "entity"' in e.content for e in provenance)  # the rename is recorded

    first = await call(zep.sdk.graph.edge.get_by_user_id(user_id, limit=1))
    rest = await call(zep.sdk.graph.edge.get_by_user_id(user_id, limit=10, uuid_cursor=first[0].uuid_))
    assert len(first) == 1 and first[0].uuid_ not in {e.uuid_ for e in rest} and len(rest) == 1
    nodes = await call(zep.sdk.graph.node.get_by_user_id(user_id, limit=10))
    assert {n.name for n in nodes} == {"Ada L.", "Lisbon", "Acme"}

    await call(zep.sdk.graph.edge.delete(edge.uuid_))
    with pytest.raises(NotFoundError):
        await call(zep.sdk.graph.edge.get(edge.uuid_))
    await call(zep.sdk.graph.node.delete(node_id))
    with pytest.raises(NotFoundError):
        await call(zep.sdk.graph.node.get(node_id))
    with pytest.raises(NotFoundError):
        await call(zep.sdk.graph.edge.get(work.edge.uuid_))  # the node took its facts with it


async def test_episodes(zep: Client) -> None:
    user_id, _ = await user_with_thread(zep, "I moved to Lisbon last May.")
    graph_id = zep.id("g")
    await call(zep.sdk.graph.create(graph_id=graph_id))
    added = await call(zep.sdk.graph.add(graph_id=graph_id, type="text", data="Bob lives in Paris."))
    await wait_done(zep, added.task_id)

    [message] = (await call(zep.sdk.graph.episode.get_by_user_id(user_id, lastn=5))).episodes
    assert (message.content, message.source, message.role_type) == ("I moved to Lisbon last May.", "message", "user")
    assert [e.uuid_ for e in (await call(zep.sdk.graph.episode.get_by_graph_id(graph_id))).episodes] == [added.uuid_]
    assert (await call(zep.sdk.graph.episode.get(message.uuid_))).content == message.content
    mentions = await call(zep.sdk.graph.episode.get_nodes_and_edges(message.uuid_))
    assert "Lisbon" in {n.name for n in mentions.nodes} and mentions.edges

    await call(zep.sdk.graph.episode.delete(message.uuid_))
    with pytest.raises(ApiError) as gone:
        await call(zep.sdk.graph.episode.get(message.uuid_))
    assert gone.value.status_code == 404
    with pytest.raises(NotFoundError):
        await call(zep.sdk.graph.episode.delete(message.uuid_))


# -- search ------------------------------------------------------------------------------------------


async def test_search_scopes_rerankers_and_filters(zep: Client) -> None:
    user_id, _ = await user_with_thread(zep)
    lives = await call(zep.sdk.graph.add_fact_triple(
        user_id=user_id, source_node_name="Ada", target_node_name="Lisbon", fact_name="LIVES_IN",
        fact="Ada lives in Lisbon", valid_at="2024-05-01T00:00:00Z"))
    await call(zep.sdk.graph.add_fact_triple(
        user_id=user_id, source_node_name="Ada", target_node_name="Acme", fact_name="WORKS_AT",
        fact="Ada works at Acme", valid_at="2020-01-01T00:00:00Z"))
    ada = lives.source_node.uuid_

    for reranker in ("rrf", "mmr", "episode_mentions", "cross_encoder"):
        found = await call(zep.sdk.graph.search(user_id=user_id, query="Where does Ada live?", reranker=reranker))
        assert found.edges[0].fact == "Ada lives in Lisbon", reranker
    near = await call(zep.sdk.graph.search(user_id=user_id, query="Ada", reranker="node_distance",
                                           center_node_uuid=ada))
    assert {e.fact for e in near.edges} == {"Ada lives in Lisbon", "Ada works at Acme"}
    with pytest.raises(BadRequestError):
        await call(zep.sdk.graph.search(user_id=user_id, query="Ada", reranker="node_distance"))

    one = await call(zep.sdk.graph.search(user_id=user_id, query="Ada", limit=1))
    assert len(one.edges) == 1
    typed = await call(zep.sdk.graph.search(user_id=user_id, query="Ada",
                                            search_filters=SearchFilters(edge_types=["WORKS_AT"])))
    assert [e.fact for e in typed.edges] == ["Ada works at Acme"]
    recent = await call(zep.sdk.graph.search(user_id=user_id, query="Ada", search_filters=SearchFilters(
        valid_at=[[DateFilter(comparison_operator=">", date="2023-01-01T00:00:00Z")]])))
    assert [e.fact for e in recent.edges] == ["Ada lives in Lisbon"]
    either = await call(zep.sdk.graph.search(user_id=user_id, query="Ada", search_filters=SearchFilters(
        valid_at=[[DateFilter(comparison_operator="<", date="2021-01-01T00:00:00Z")],
                  [DateFilter(comparison_operator=">", date="2024-01-01T00:00:00Z")]])))
    assert len(either.edges) == 2
    excluded = await call(zep.sdk.graph.search(user_id=user_id, query="Ada",
                                               search_filters=SearchFilters(exclude_edge_types=["LIVES_IN"])))
    assert [e.fact for e in excluded.edges] == ["Ada works at Acme"]
    from_ada = await call(zep.sdk.graph.search(user_id=user_id, query="Lisbon", bfs_origin_node_uuids=[ada]))
    assert "Ada lives in Lisbon" in {e.fact for e in from_ada.edges}

    nodes = await call(zep.sdk.graph.search(user_id=user_id, query="Lisbon", scope="nodes"))
    assert nodes.nodes[0].name == "Lisbon" and nodes.edges is None
    labelled = await call(zep.sdk.graph.search(user_id=user_id, query="Lisbon", scope="nodes",
                                               search_filters=SearchFilters(node_labels=["Place"])))
    assert labelled.nodes == []
    await call(zep.sdk.graph.add(user_id=user_id, type="text", data="Ada visited Rome in June."))
    episodes = await call(zep.sdk.graph.search(user_id=user_id, query="Rome", scope="episodes"))
    assert episodes.episodes[0].content == "Ada visited Rome in June."


# -- ontology, tasks, auth and what is not implemented -----------------------------------------------


class Destination(EntityModel):
    """A place travellers visit."""

    country: EntityText = Field(description="the country", default=None)


class Visits(EdgeModel):
    """A person visits a destination."""


async def test_entity_types(zep: Client) -> None:
    user_id, _ = await user_with_thread(zep)
    await call(zep.sdk.graph.set_entity_types_internal(entity_types=[EntityType(
        name="Pet", description="An animal someone keeps.",
        properties=[EntityProperty(name="species", type="Text", description="its species")])]))
    types = await call(zep.sdk.graph.list_entity_types())
    assert [(t.name, [p.name for p in t.properties]) for t in types.entity_types] == [("Pet", ["species"])]

    await call(zep.sdk.graph.set_ontology(
        entities={"Destination": Destination},
        edges={"VISITS": (Visits, [EntityEdgeSourceTarget(target="Destination")])},
        user_ids=[user_id]))
    mine = await call(zep.sdk.graph.list_entity_types(user_id=user_id))
    assert [t.name for t in mine.entity_types] == ["Destination"] and [t.name for t in mine.edge_types] == ["VISITS"]
    with pytest.raises(BadRequestError):  # a signature naming a type that does not exist
        await call(zep.sdk.graph.set_entity_types_internal(edge_types=[EdgeType(
            name="OWNS", description="owns", source_targets=[EntityEdgeSourceTarget(source="Ghost", target="Pet")])]))


async def test_tasks_auth_and_isolation(zep: Client, served: Served) -> None:
    user_id, thread_id = await user_with_thread(zep)
    with pytest.raises(NotFoundError):
        await call(zep.sdk.task.get("no-such-task"))
    with pytest.raises(ApiError) as unauthorized:
        await call(zep.other("cmk_wrong_key").user.get(user_id))
    assert unauthorized.value.status_code == 401
    other = zep.other(served.other_key)
    with pytest.raises(NotFoundError):
        await call(other.user.get(user_id))
    with pytest.raises(NotFoundError):
        await call(other.thread.get(thread_id))
    triple = await call(zep.sdk.graph.add_fact_triple(user_id=user_id, source_node_name="Ada", fact_name="OWNS",
                                                      target_node_name="Rex", fact="Ada owns Rex"))
    for attempt in (lambda: other.graph.edge.get(triple.edge.uuid_),
                    lambda: other.graph.node.get(triple.target_node.uuid_),
                    lambda: other.graph.node.update(triple.target_node.uuid_, name="Stolen")):
        with pytest.raises(NotFoundError):  # uuids of another project are not found, even by uuid alone
            await call(attempt())
    assert (await call(zep.sdk.graph.node.get(triple.target_node.uuid_))).name == "Rex"


async def test_calls_outside_the_subset_answer_501_naming_the_call(zep: Client) -> None:
    _, thread_id = await user_with_thread(zep)
    with pytest.raises(ApiError) as batch:
        await call(zep.sdk.batch.list())
    assert batch.value.status_code == 501 and "batch.list" in batch.value.body["message"]
    with pytest.raises(ApiError) as warm:
        await call(zep.sdk.user.warm(zep.id("ada")))
    assert warm.value.status_code == 501 and "user.warm" in warm.value.body["message"]
    with pytest.raises(ApiError) as option:
        await call(zep.sdk.thread.add_messages(thread_id, messages=[Message(role="user", content="hi")],
                                               ignore_roles=["assistant"]))
    assert option.value.status_code == 501 and "ignore_roles" in option.value.body["message"]
    assert (await call(zep.sdk.thread.get(thread_id))).messages == []  # refused, nothing stored


def test_native_and_compat_documents_stay_apart(served: Served) -> None:
    """The compatibility API has its own OpenAPI document; the native one does not list its routes."""
    root = served.base_url.removesuffix("/api/v2")
    native = httpx.get(f"{root}/openapi.json").json()["paths"]
    compat = httpx.get(f"{served.base_url}/openapi.json").json()["paths"]
    assert "/api/v3/users" in native and not any(p.startswith("/api/v2") for p in native)
    assert "/users" in compat and "/graph/search" in compat
