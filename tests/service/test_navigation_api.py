"""The native API's graph navigation (neighbours, subgraph) and ``/lookup``, which names in this API
what a ``/api/v4`` UUID addresses."""

from __future__ import annotations

from service_support import Service


async def ada_at_acme(service: Service) -> dict[str, str]:
    auth = service.as_(service.key_a)
    assert (await service.client.post("/api/v3/users", json={"user_id": "ada"}, headers=auth)).status_code == 201
    for source, relation, target in (("Ada", "WORKS_AT", "Acme"), ("Acme", "LOCATED_IN", "Oslo"),
                                     ("Bob", "KNOWS", "Ada")):
        answer = await service.client.post("/api/v3/graph/facts", headers=auth, json={
            "user_id": "ada", "source_node_name": source, "fact_name": relation, "target_node_name": target,
            "fact": f"{source} {relation.lower().replace('_', ' ')} {target}"})
        assert answer.status_code == 201, answer.text
    page = (await service.client.get("/api/v3/graph/entities", params={"user_id": "ada"}, headers=auth)).json()
    return {e["name"]: e["uuid"] for e in page["entities"]}


async def test_neighbours_and_subgraph_of_a_users_graph(service: Service) -> None:
    ids = await ada_at_acme(service)
    auth = service.as_(service.key_a)
    answer = await service.client.get(f"/api/v3/graph/entities/{ids['Ada']}/neighbors",
                                      params={"user_id": "ada", "direction": "out"}, headers=auth)
    assert answer.status_code == 200, answer.text
    assert [(n["entity"]["name"], [f["fact"] for f in n["facts"]]) for n in answer.json()["neighbors"]] == [
        ("Acme", ["Ada works at Acme"])]
    answer = await service.client.post("/api/v3/graph/subgraph", headers=auth, json={
        "user_id": "ada", "seed_entity_uuids": [ids["Ada"]], "depth": 2})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert {e["name"] for e in body["entities"]} == {"Ada", "Acme", "Bob", "Oslo"}
    assert len(body["facts"]) == 3 and body["truncated"] is False
    # another project's key reaches nothing
    other = await service.client.get(f"/api/v3/graph/entities/{ids['Ada']}/neighbors",
                                     params={"user_id": "ada"}, headers=service.as_(service.key_b))
    assert other.status_code == 404


async def test_lookup_names_what_a_v4_uuid_addresses(service: Service) -> None:
    await ada_at_acme(service)
    v4 = {"Authorization": f"Api-Key {service.key_a}"}
    user = (await service.client.post("/api/v4/users/lookup", json={"user_id": "ada"}, headers=v4)).json()
    answer = await service.client.get(f"/api/v3/lookup/{user['uuid']}", headers=service.as_(service.key_a))
    assert answer.json() == {"kind": "user", "uuid": user["uuid"], "user_id": "ada"}
    missing = await service.client.get(f"/api/v3/lookup/{user['uuid']}", headers=service.as_(service.key_b))
    assert missing.status_code == 404
