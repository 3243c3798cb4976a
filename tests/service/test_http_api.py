"""The HTTP API as a client sees it: resources, durable asynchronous ingestion, tasks, errors."""

from __future__ import annotations

import pytest

from service_support import Service, wait_for_task

API = "/api/v3"


async def make_user(service: Service, key: str, user_id: str = "alice") -> None:
    response = await service.client.post(f"{API}/users", json={"user_id": user_id}, headers=service.as_(key))
    assert response.status_code == 201, response.text


async def make_thread(service: Service, key: str, thread_id: str = "t1", user_id: str = "alice") -> None:
    await make_user(service, key, user_id)
    response = await service.client.post(
        f"{API}/threads", json={"thread_id": thread_id, "user_id": user_id}, headers=service.as_(key)
    )
    assert response.status_code == 201, response.text


async def test_probes_answer_without_a_key(service: Service):
    assert (await service.client.get("/healthz")).json() == {"status": "ok"}
    ready = await service.client.get("/readyz")
    assert ready.status_code == 200 and ready.json() == {"status": "ready", "store": True, "workers": "running",
                                                   "model": "function:_answer"}


async def test_the_openapi_document_names_the_resources(service: Service):
    paths = (await service.client.get("/openapi.json")).json()["paths"]
    for path in ("/api/v3/users", "/api/v3/threads/{thread_id}/messages", "/api/v3/threads/{thread_id}/context",
                 "/api/v3/users/{user_id}/context", "/api/v3/graph/episodes", "/api/v3/graph/facts",
                 "/api/v3/graph/search", "/api/v3/graph/entities/{uuid}", "/api/v3/tasks/{task_id}/retry"):
        assert path in paths


async def test_requests_without_a_valid_key_are_refused(service: Service):
    missing = await service.client.get(f"{API}/users")
    assert missing.status_code == 401 and "missing API key" in missing.json()["error"]["message"]
    wrong = await service.client.get(f"{API}/users", headers=service.as_("cmk_0000_nope"))
    assert wrong.status_code == 401
    zep_style = await service.client.get(f"{API}/users", headers={"Authorization": f"Api-Key {service.key_a}"})
    assert zep_style.status_code == 200


async def test_a_revoked_key_is_refused_from_then_on(service: Service):
    info, key = service.control.create_key("project-c")
    assert (await service.client.get(f"{API}/users", headers=service.as_(key))).status_code == 200
    service.control.revoke_key(info.id)
    assert (await service.client.get(f"{API}/users", headers=service.as_(key))).status_code == 401


async def test_user_lifecycle(service: Service):
    headers = service.as_(service.key_a)
    created = await service.client.post(
        f"{API}/users", json={"user_id": "alice", "email": "a@example.com", "metadata": {"plan": "pro"}},
        headers=headers,
    )
    assert created.status_code == 201 and created.json()["email"] == "a@example.com"
    again = await service.client.post(f"{API}/users", json={"user_id": "alice", "email": "x@y"}, headers=headers)
    assert again.status_code == 409
    patched = await service.client.patch(f"{API}/users/alice", json={"first_name": "Alice"}, headers=headers)
    assert patched.json()["first_name"] == "Alice" and patched.json()["email"] == "a@example.com"
    listed = (await service.client.get(f"{API}/users", headers=headers)).json()
    assert listed["total_count"] == 1 and listed["users"][0]["user_id"] == "alice"
    assert (await service.client.delete(f"{API}/users/alice", headers=headers)).status_code == 204
    assert (await service.client.get(f"{API}/users/alice", headers=headers)).status_code == 404


async def test_added_messages_are_stored_before_the_answer_and_processed_by_workers(service: Service):
    headers = service.as_(service.key_a)
    await make_thread(service, service.key_a)
    added = await service.client.post(
        f"{API}/threads/t1/messages",
        json={"messages": [{"role": "user", "name": "Alice", "content": "I moved to Lisbon in May."},
                           {"role": "assistant", "content": "Nice! How is it?"}]},
        headers=headers,
    )
    assert added.status_code == 202
    body = added.json()
    assert len(body["message_uuids"]) == 2 and body["task_id"]
    messages = (await service.client.get(f"{API}/threads/t1/messages", headers=headers)).json()["messages"]
    assert [m["uuid"] for m in messages] == body["message_uuids"]
    assert messages[0]["name"] == "Alice" and messages[1]["name"] == "assistant"
    task = await wait_for_task(service, service.key_a, body["task_id"], {"done", "failed"})
    assert task["status"] == "done" and all(e["status"] == "done" for e in task["episodes"])


async def test_resending_a_message_with_its_uuid_adds_nothing(service: Service):
    headers = service.as_(service.key_a)
    await make_thread(service, service.key_a)
    message = {"content": "hello", "uuid": "m-1"}
    first = await service.client.post(f"{API}/threads/t1/messages", json={"messages": [message]}, headers=headers)
    second = await service.client.post(f"{API}/threads/t1/messages", json={"messages": [message]}, headers=headers)
    assert first.json()["message_uuids"] == second.json()["message_uuids"] == ["m-1"]
    messages = (await service.client.get(f"{API}/threads/t1/messages", headers=headers)).json()["messages"]
    assert [m["uuid"] for m in messages] == ["m-1"]
    user = service.control.get_user(service.control.get_project("project-a").id, "alice")
    assert len(await service.memory.list_episodes(user.group_id)) == 1


async def test_a_failing_model_leaves_a_visible_failed_task_that_can_be_retried(service: Service):
    headers = service.as_(service.key_a)
    await make_thread(service, service.key_a)
    service.model.failing = True
    added = await service.client.post(f"{API}/threads/t1/messages", json={"messages": [{"content": "hi"}]},
                                      headers=headers)
    task_id = added.json()["task_id"]
    failed = await wait_for_task(service, service.key_a, task_id, {"failed"}, attempts=3)
    assert "provider unreachable" in failed["error"]
    service.model.failing = False
    retried = await service.client.post(f"{API}/tasks/{task_id}/retry", headers=headers)
    assert retried.status_code == 200 and retried.json()["status"] in {"pending", "processing", "done"}
    done = await wait_for_task(service, service.key_a, task_id, {"done"})
    assert done["error"] is None


async def test_thread_context_is_a_string_for_a_query_or_the_latest_messages(service: Service):
    headers = service.as_(service.key_a)
    await make_thread(service, service.key_a)
    empty = await service.client.get(f"{API}/threads/t1/context", headers=headers)
    assert empty.status_code == 200 and empty.json() == {"context": ""}
    await service.client.post(f"{API}/threads/t1/messages", json={"messages": [{"content": "I like tea"}]},
                              headers=headers)
    for url in (f"{API}/threads/t1/context", f"{API}/threads/t1/context?query=tea",
                f"{API}/users/alice/context?query=tea"):
        response = await service.client.get(url, headers=headers)
        assert response.status_code == 200 and isinstance(response.json()["context"], str)


async def test_graph_episodes_in_a_named_graph(service: Service):
    headers = service.as_(service.key_a)
    created = await service.client.post(f"{API}/graphs", json={"graph_id": "kb", "name": "Knowledge"},
                                        headers=headers)
    assert created.status_code == 201
    added = await service.client.post(
        f"{API}/graph/episodes",
        json={"graph_id": "kb", "type": "json", "data": '{"product": "Widget", "price": 3}'}, headers=headers,
    )
    assert added.status_code == 202
    uuid = added.json()["episode"]["uuid"]
    got = await service.client.get(f"{API}/graph/episodes/{uuid}?graph_id=kb", headers=headers)
    assert got.json()["type"] == "json"
    listed = (await service.client.get(f"{API}/graph/episodes?graph_id=kb", headers=headers)).json()
    assert [e["uuid"] for e in listed["episodes"]] == [uuid]
    await wait_for_task(service, service.key_a, added.json()["task_id"], {"done"})
    url = f"{API}/graph/episodes/{uuid}?graph_id=kb"
    patched = await service.client.patch(url, json={"metadata": {"source": "crm", "rank": 2}}, headers=headers)
    assert patched.status_code == 200 and patched.json()["metadata"] == {"source": "crm", "rank": 2}
    merged = await service.client.patch(url, json={"metadata": {"rank": None, "tags": ["a"]}}, headers=headers)
    assert merged.json()["metadata"] == {"source": "crm", "tags": ["a"]}
    assert merged.json()["content"] == '{"product": "Widget", "price": 3}'
    nested = await service.client.patch(url, json={"metadata": {"source": {"k": 1}}}, headers=headers)
    assert nested.status_code == 422 and "'source'" in nested.text
    stranger = await service.client.patch(url, json={"metadata": {"x": 1}}, headers=service.as_(service.key_b))
    assert stranger.status_code == 404
    assert (await service.client.get(url, headers=headers)).json()["metadata"] == {"source": "crm", "tags": ["a"]}
    assert (await service.client.delete(f"{API}/graph/episodes/{uuid}?graph_id=kb", headers=headers)).status_code == 204
    assert (await service.client.get(f"{API}/graph/episodes/{uuid}?graph_id=kb", headers=headers)).status_code == 404


async def test_fact_triples_are_searchable_with_time_travel_and_die_with_their_entity(service: Service):
    headers = service.as_(service.key_a)
    await make_user(service, service.key_a)
    fact = await service.client.post(f"{API}/graph/facts", headers=headers, json={
        "user_id": "alice", "source_node_name": "Alice", "fact_name": "LIVES_IN", "target_node_name": "Lisbon",
        "fact": "Alice lives in Lisbon", "valid_at": "2023-05-01T00:00:00Z",
    })
    assert fact.status_code == 201, fact.text
    fact_id, entity_id = fact.json()["uuid"], fact.json()["target_node_uuid"]
    search = {"user_id": "alice", "query": "where does Alice live", "scopes": ["facts", "nodes"]}
    found = (await service.client.post(f"{API}/graph/search", json=search, headers=headers)).json()
    assert [f["uuid"] for f in found["facts"]] == [fact_id]
    assert {e["name"] for e in found["entities"]} >= {"Alice", "Lisbon"}
    before = {**search, "filters": {"as_of": "2022-01-01T00:00:00Z"}}
    assert (await service.client.post(f"{API}/graph/search", json=before, headers=headers)).json()["facts"] == []
    assert (await service.client.get(f"{API}/graph/facts/{fact_id}?user_id=alice", headers=headers)).status_code == 200
    deleted = await service.client.delete(f"{API}/graph/entities/{entity_id}?user_id=alice", headers=headers)
    assert deleted.status_code == 204
    assert (await service.client.get(f"{API}/graph/facts/{fact_id}?user_id=alice", headers=headers)).status_code == 404
    assert (await service.client.get(f"{API}/graph/entities/{entity_id}?user_id=alice",
                                     headers=headers)).status_code == 404


async def test_deleting_a_user_deletes_their_graph(service: Service):
    headers = service.as_(service.key_a)
    await make_thread(service, service.key_a)
    added = await service.client.post(f"{API}/threads/t1/messages", json={"messages": [{"content": "hi"}]},
                                      headers=headers)
    await wait_for_task(service, service.key_a, added.json()["task_id"], {"done"})
    group = service.control.get_user(service.control.get_project("project-a").id, "alice").group_id
    assert await service.memory.list_episodes(group)
    assert (await service.client.delete(f"{API}/users/alice", headers=headers)).status_code == 204
    assert await service.memory.list_episodes(group) == []
    assert (await service.client.get(f"{API}/threads/t1", headers=headers)).status_code == 404


async def test_reusing_a_message_uuid_for_other_content_is_a_conflict_that_stores_nothing(service: Service):
    headers = service.as_(service.key_a)
    await make_thread(service, service.key_a)
    await service.client.post(f"{API}/threads/t1/messages", json={"messages": [{"content": "a", "uuid": "m-1"}]},
                              headers=headers)
    clash = await service.client.post(f"{API}/threads/t1/messages", headers=headers, json={
        "messages": [{"content": "new", "uuid": "m-2"}, {"content": "changed", "uuid": "m-1"}]})
    assert clash.status_code == 409 and "m-1" in clash.json()["error"]["message"]
    messages = (await service.client.get(f"{API}/threads/t1/messages", headers=headers)).json()["messages"]
    assert [m["uuid"] for m in messages] == ["m-1"]
    user = service.control.get_user(service.control.get_project("project-a").id, "alice")
    assert [e.id for e in await service.memory.list_episodes(user.group_id)] == ["m-1"]


@pytest.mark.parametrize("dies_in", ["control plane", "graph store"])
async def test_a_write_killed_at_either_store_leaves_thread_and_graph_agreeing(service: Service, monkeypatch, dies_in):
    """The window a SIGKILL can hit: between the control plane's write (the thread's ids and the
    task) and the graph store's (the episodes). Wherever it dies, the thread's messages are the
    user's episodes, and the client's resend puts them in their first place."""
    headers = service.as_(service.key_a)
    await make_thread(service, service.key_a)
    user = service.control.get_user(service.control.get_project("project-a").id, "alice")
    batch = {"messages": [{"content": "one", "uuid": "m-1"}, {"content": "two", "uuid": "m-2"}]}

    def killed(*args, **kwargs):
        raise SystemExit("killed mid-write")

    async def killed_async(*args, **kwargs):
        killed()

    with monkeypatch.context() as patch:
        if dies_in == "graph store":
            patch.setattr(service.memory, "enqueue", killed_async)
        else:
            patch.setattr(service.control, "append_messages", killed)
        with pytest.raises(SystemExit):
            await service.client.post(f"{API}/threads/t1/messages", json=batch, headers=headers)

    async def thread_and_graph() -> tuple[list[str], list[str]]:
        listed = (await service.client.get(f"{API}/threads/t1/messages", headers=headers)).json()["messages"]
        stored = await service.memory.list_episodes(user.group_id, limit=None)
        return [m["content"] for m in listed], sorted(e.content for e in stored)

    assert await thread_and_graph() == ([], [])
    later = await service.client.post(f"{API}/threads/t1/messages", json={"messages": [{"content": "three"}]},
                                      headers=headers)
    resent = await service.client.post(f"{API}/threads/t1/messages", json=batch, headers=headers)
    assert resent.status_code == 202
    listed, stored = await thread_and_graph()
    assert listed in (["one", "two", "three"], ["three", "one", "two"]) and sorted(listed) == stored
    last = (await service.client.get(f"{API}/threads/t1/messages?lastn=1", headers=headers)).json()["messages"]
    assert [m["content"] for m in last] == listed[-1:]
    for task_id in (later.json()["task_id"], resent.json()["task_id"]):
        assert (await wait_for_task(service, service.key_a, task_id, {"done", "failed"}))["status"] == "done"
