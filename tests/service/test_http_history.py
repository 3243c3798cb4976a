"""Fact history, corrections, provenance and hyperedges over the HTTP API."""

from __future__ import annotations

from service_support import Service

API = "/api/v3"


async def _user(service: Service) -> dict[str, str]:
    headers = service.as_(service.key_a)
    assert (await service.client.post(f"{API}/users", json={"user_id": "alice"}, headers=headers)).status_code == 201
    return headers


async def test_a_correction_is_a_version_and_search_answers_as_known_then(service: Service):
    headers = await _user(service)
    added = await service.client.post(f"{API}/graph/facts", headers=headers, json={
        "user_id": "alice", "source_node_name": "Alice", "fact_name": "WORKS_AT", "target_node_name": "Acme",
        "fact": "Alice works at Acme", "valid_at": "2020-01-01T00:00:00Z",
        "source": {"name": "crm", "reference": "contact/42"},
    })
    assert added.status_code == 201, added.text
    fact = added.json()
    assert fact["version"] == 1 and fact["sources"] == [{"name": "crm", "reference": "contact/42"}]
    corrected = await service.client.patch(f"{API}/graph/facts/{fact['uuid']}?user_id=alice", headers=headers,
                                           json={"invalid_at": "2024-01-01T00:00:00Z"})
    assert corrected.status_code == 200, corrected.text
    assert corrected.json()["version"] == 2 and corrected.json()["invalid_at"] == "2024-01-01T00:00:00Z"
    assert corrected.json()["valid_at"] == "2020-01-01T00:00:00Z"  # left out: kept

    history = (await service.client.get(f"{API}/graph/facts/{fact['uuid']}/history?user_id=alice",
                                        headers=headers)).json()["versions"]
    assert [v["fact"]["invalid_at"] for v in history] == [None, "2024-01-01T00:00:00Z"]
    assert history[0]["recorded_to"] == history[1]["recorded_from"] and history[1]["recorded_to"] is None

    async def invalid_at_known(known_at: str) -> list[str | None]:
        body = {"user_id": "alice", "query": "Alice works", "filters": {"as_of": "2022-01-01T00:00:00Z",
                                                                        "known_at": known_at}}
        found = await service.client.post(f"{API}/graph/search", json=body, headers=headers)
        return [f["invalid_at"] for f in found.json()["facts"]]

    assert await invalid_at_known(history[0]["recorded_from"]) == [None]
    assert await invalid_at_known(history[1]["recorded_from"]) == ["2024-01-01T00:00:00Z"]


async def test_bad_corrections_get_a_4xx_and_change_nothing(service: Service):
    headers = await _user(service)
    fact = (await service.client.post(f"{API}/graph/facts", headers=headers, json={
        "user_id": "alice", "source_node_name": "Alice", "fact_name": "LIKES", "target_node_name": "tea",
        "fact": "Alice likes tea", "valid_at": "2020-01-01T00:00:00Z",
    })).json()
    url = f"{API}/graph/facts/{fact['uuid']}"
    before = await service.client.patch(f"{url}?user_id=alice", headers=headers,
                                        json={"invalid_at": "2019-01-01T00:00:00Z"})
    assert before.status_code == 422 and "before valid_at" in before.text
    both = await service.client.patch(f"{url}?user_id=alice", headers=headers, json={
        "fact": "x", "source_episode_uuid": "e1", "source": {"name": "crm"}})
    assert both.status_code == 422
    unknown_episode = await service.client.patch(f"{url}?user_id=alice", headers=headers, json={
        "fact": "Alice likes mint tea", "source_episode_uuid": "no-such-episode"})
    assert unknown_episode.status_code == 404
    assert (await service.client.patch(f"{API}/graph/facts/nope?user_id=alice", headers=headers,
                                       json={"fact": "x"})).status_code == 404
    assert (await service.client.get(f"{API}/graph/facts/nope/history?user_id=alice",
                                     headers=headers)).status_code == 404
    history = (await service.client.get(f"{url}/history?user_id=alice", headers=headers)).json()["versions"]
    assert [v["fact"]["fact"] for v in history] == ["Alice likes tea"]


async def test_a_hyperedge_over_http(service: Service):
    headers = await _user(service)
    added = await service.client.post(f"{API}/graph/facts", headers=headers, json={
        "user_id": "alice", "source_node_name": "Alice", "fact_name": "SOLD", "target_node_name": "Bob",
        "other_node_names": ["Carol"], "fact": "Alice sold her car to Bob for Carol",
    })
    assert added.status_code == 201, added.text
    assert len(added.json()["other_node_uuids"]) == 1
    context = await service.client.get(f"{API}/users/alice/context", headers=headers,
                                       params={"query": "Who bought the car?"})
    assert "[participants: Alice, Bob, Carol]" in context.text
