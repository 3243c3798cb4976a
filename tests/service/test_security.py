"""A key sees only its project: reads and writes across projects and across users fail, and change
nothing. Bad input gets a clear 4xx and changes nothing."""

from __future__ import annotations

import pytest

from service_support import Service, wait_for_task

API = "/api/v3"


@pytest.fixture
async def alice_of_a(service: Service) -> dict[str, str]:
    """Project A's user alice with one thread, one processed message and one fact; ids of each."""
    headers = service.as_(service.key_a)
    await service.client.post(f"{API}/users", json={"user_id": "alice"}, headers=headers)
    await service.client.post(f"{API}/threads", json={"thread_id": "t-a", "user_id": "alice"}, headers=headers)
    await service.client.post(f"{API}/graphs", json={"graph_id": "kb"}, headers=headers)
    added = (await service.client.post(f"{API}/threads/t-a/messages", headers=headers,
                                       json={"messages": [{"content": "my PIN is 1234"}]})).json()
    await wait_for_task(service, service.key_a, added["task_id"], {"done"})
    fact = (await service.client.post(f"{API}/graph/facts", headers=headers, json={
        "user_id": "alice", "source_node_name": "Alice", "fact_name": "HAS_PIN", "target_node_name": "1234",
        "fact": "Alice's PIN is 1234"})).json()
    return {"episode": added["message_uuids"][0], "task": added["task_id"], "fact": fact["uuid"],
            "entity": fact["source_node_uuid"]}


async def snapshot(service: Service) -> tuple:
    project = service.control.get_project("project-a")
    user = service.control.get_user(project.id, "alice")
    episodes = await service.memory.list_episodes(user.group_id)
    facts = await service.memory.list_facts(user.group_id)
    return user, [e.id for e in episodes], [f.id for f in facts], service.control.message_ids(project.id, "t-a")


async def test_another_project_cannot_read_or_write_anything_of_this_one(service: Service, alice_of_a):
    before = await snapshot(service)
    b = service.as_(service.key_b)
    attempts = [
        ("GET", f"{API}/users/alice", None),
        ("PATCH", f"{API}/users/alice", {"email": "evil@example.com"}),
        ("DELETE", f"{API}/users/alice", None),
        ("GET", f"{API}/users/alice/context?query=PIN", None),
        ("GET", f"{API}/users/alice/threads", None),
        ("GET", f"{API}/threads/t-a", None),
        ("GET", f"{API}/threads/t-a/messages", None),
        ("GET", f"{API}/threads/t-a/context?query=PIN", None),
        ("POST", f"{API}/threads/t-a/messages", {"messages": [{"content": "injected"}]}),
        ("DELETE", f"{API}/threads/t-a", None),
        ("POST", f"{API}/threads", {"thread_id": "t-b", "user_id": "alice"}),
        ("GET", f"{API}/tasks/{alice_of_a['task']}", None),
        ("POST", f"{API}/tasks/{alice_of_a['task']}/retry", None),
        ("POST", f"{API}/graph/search", {"user_id": "alice", "query": "PIN"}),
        ("POST", f"{API}/graph/episodes", {"user_id": "alice", "data": "injected"}),
        ("POST", f"{API}/graph/facts", {"user_id": "alice", "source_node_name": "A", "fact_name": "X",
                                        "target_node_name": "B", "fact": "A x B"}),
        ("GET", f"{API}/graph/episodes?user_id=alice", None),
        ("GET", f"{API}/graph/episodes/{alice_of_a['episode']}?user_id=alice", None),
        ("DELETE", f"{API}/graph/episodes/{alice_of_a['episode']}?user_id=alice", None),
        ("GET", f"{API}/graph/facts/{alice_of_a['fact']}?user_id=alice", None),
        ("DELETE", f"{API}/graph/facts/{alice_of_a['fact']}?user_id=alice", None),
        ("GET", f"{API}/graph/entities/{alice_of_a['entity']}?user_id=alice", None),
        ("DELETE", f"{API}/graph/entities/{alice_of_a['entity']}?user_id=alice", None),
        ("GET", f"{API}/graphs/kb", None),
        ("DELETE", f"{API}/graphs/kb", None),
        ("POST", f"{API}/graph/search", {"graph_id": "kb", "query": "anything"}),
        ("POST", f"{API}/graph/episodes", {"graph_id": "kb", "data": "injected"}),
        ("GET", f"{API}/graph/episodes?graph_id=kb", None),
    ]
    for method, url, body in attempts:
        response = await service.client.request(method, url, json=body, headers=b)
        assert response.status_code == 404, (method, url, response.status_code, response.text)
    assert (await service.client.get(f"{API}/users", headers=b)).json() == {"users": [], "total_count": 0}
    assert (await service.client.get(f"{API}/threads", headers=b)).json() == {"threads": []}
    assert (await service.client.get(f"{API}/graphs", headers=b)).json() == {"graphs": []}
    assert (await service.client.get(f"{API}/graphs/kb", headers=service.as_(service.key_a))).status_code == 200
    assert await snapshot(service) == before


async def test_project_b_own_user_named_alice_is_a_different_user(service: Service, alice_of_a):
    b = service.as_(service.key_b)
    assert (await service.client.post(f"{API}/users", json={"user_id": "alice"}, headers=b)).status_code == 201
    found = (await service.client.post(f"{API}/graph/search", json={"user_id": "alice", "query": "PIN"},
                                       headers=b)).json()
    assert found["facts"] == [] and found["entities"] == []
    own = await service.client.get(f"{API}/graph/episodes/{alice_of_a['episode']}?user_id=alice", headers=b)
    assert own.status_code == 404


async def test_a_user_cannot_reach_another_users_objects_by_id(service: Service, alice_of_a):
    a = service.as_(service.key_a)
    await service.client.post(f"{API}/users", json={"user_id": "bob"}, headers=a)
    for url in (f"{API}/graph/episodes/{alice_of_a['episode']}?user_id=bob",
                f"{API}/graph/facts/{alice_of_a['fact']}?user_id=bob",
                f"{API}/graph/entities/{alice_of_a['entity']}?user_id=bob"):
        assert (await service.client.get(url, headers=a)).status_code == 404
        assert (await service.client.delete(url, headers=a)).status_code == 404
    assert (await service.client.get(f"{API}/graph/facts/{alice_of_a['fact']}?user_id=alice",
                                     headers=a)).status_code == 200


@pytest.mark.parametrize(
    ("method", "url", "body", "says"),
    [
        ("POST", "/users", {"user_id": ""}, "user_id"),
        ("POST", "/users", {"user_id": "x", "unknown": 1}, "unknown"),
        ("POST", "/users", {"user_id": "bad\nid"}, "user_id"),
        ("POST", "/threads/t-a/messages", {"messages": []}, "messages"),
        ("POST", "/threads/t-a/messages", {"messages": [{"content": "x"}] * 101}, "messages"),
        ("POST", "/threads/t-a/messages", {"messages": [{"content": ""}]}, "content"),
        ("POST", "/threads/t-a/messages", {"messages": [{"content": "x", "created_at": "2024-01-01T10:00:00"}]},
         "timezone"),
        ("POST", "/threads/t-a/messages", {"messages": [{"content": "x", "uuid": "d"}, {"content": "y", "uuid": "d"}]},
         "same uuid"),
        ("POST", "/graph/episodes", {"data": "x"}, "exactly one of user_id and graph_id"),
        ("POST", "/graph/episodes", {"user_id": "alice", "graph_id": "g", "data": "x"}, "exactly one"),
        ("POST", "/graph/episodes", {"user_id": "alice", "type": "json", "data": "{nope"}, "must be JSON"),
        ("POST", "/graph/episodes", {"user_id": "alice", "type": "video", "data": "x"}, "type"),
        ("POST", "/graph/facts", {"user_id": "alice", "source_node_name": "A", "fact_name": "X",
                                  "target_node_name": "A", "fact": "A x A"}, "same entity"),
        ("POST", "/graph/facts", {"user_id": "alice", "source_node_name": "A", "fact_name": "X",
                                  "target_node_name": "B", "fact": "f", "valid_at": "2024-02-01T00:00:00Z",
                                  "invalid_at": "2024-01-01T00:00:00Z"}, "before"),
        ("POST", "/graph/search", {"user_id": "alice", "query": ""}, "query"),
        ("POST", "/graph/search", {"user_id": "alice", "query": "x", "limit": 1000}, "limit"),
        ("POST", "/graph/search", {"user_id": "alice", "query": "x", "reranker": "node_distance"},
         "center_node_uuid"),
        ("POST", "/graph/search", {"user_id": "alice", "query": "x",
                                   "filters": {"valid_at": {"start": "2024-02-01T00:00:00Z",
                                                            "end": "2024-01-01T00:00:00Z"}}}, "before its start"),
        ("GET", "/graph/episodes", None, "exactly one"),
        ("GET", "/users?limit=0", None, "limit"),
    ],
)
async def test_bad_input_gets_a_422_that_says_what_is_wrong_and_changes_nothing(
    service: Service, alice_of_a, method, url, body, says
):
    before = await snapshot(service)
    response = await service.client.request(method, API + url, json=body, headers=service.as_(service.key_a))
    assert response.status_code == 422, response.text
    assert says in response.json()["error"]["message"]
    assert await snapshot(service) == before


async def test_a_body_over_the_size_limit_is_refused_with_413_and_changes_nothing(service: Service, alice_of_a):
    before = await snapshot(service)
    huge = {"messages": [{"content": "x" * 40_000}] * 6}  # 240 kB > the 200 kB limit of the test service
    response = await service.client.post(f"{API}/threads/t-a/messages", json=huge,
                                         headers=service.as_(service.key_a))
    assert response.status_code == 413 and "larger than" in response.json()["error"]["message"]
    assert await snapshot(service) == before


async def test_malformed_json_is_a_422(service: Service):
    response = await service.client.post(f"{API}/users", content=b"{not json",
                                         headers={**service.as_(service.key_a), "content-type": "application/json"})
    assert response.status_code == 422
