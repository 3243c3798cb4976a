"""A project's ontology and JSON mappings over HTTP: read, replaced, validated (422, nothing
changed), reset, and applied by the workers to that project's groups only."""

from __future__ import annotations

from service_support import Service, wait_for_task

API = "/api/v3"

ONTOLOGY = {
    "entity_types": [{"name": "Person", "description": "A human being."},
                     {"name": "City", "description": "A town.", "properties": [{"name": "country", "type": "Text"}]}],
    "edge_types": [{"name": "LIVES_IN", "description": "Where a person lives.",
                    "source_targets": [{"source": "Person", "target": "City"}], "single_valued": True}],
}
MAPPING = {"name": "crm", "source_description": "crm",
           "entities": [{"key": "account", "name": "company", "label": "Company"},
                        {"key": "owner", "name": "owner", "label": "Person"}],
           "facts": [{"source": "owner", "relation_type": "OWNS", "target": "account",
                      "fact": "{owner} owns {account}"}]}


async def make_user(service: Service, key: str, user_id: str = "alice") -> None:
    response = await service.client.post(f"{API}/users", json={"user_id": user_id}, headers=service.as_(key))
    assert response.status_code == 201, response.text


async def test_a_project_reads_and_replaces_its_ontology_and_a_bad_one_changes_nothing(service: Service):
    a, b = service.as_(service.key_a), service.as_(service.key_b)
    first = (await service.client.get(f"{API}/ontology", headers=a)).json()
    assert first == {"source": "server", "ontology": {"entity_types": [], "edge_types": [], "single_valued": []}}
    put = await service.client.put(f"{API}/ontology", json=ONTOLOGY, headers=a)
    assert put.status_code == 200, put.text
    stored = (await service.client.get(f"{API}/ontology", headers=a)).json()
    assert stored["source"] == "project"
    assert [t["name"] for t in stored["ontology"]["entity_types"]] == ["Person", "City"]
    assert stored["ontology"]["edge_types"][0]["single_valued"] is True
    assert (await service.client.get(f"{API}/ontology", headers=b)).json()["source"] == "server"  # b is untouched

    bad = {"edge_types": [{"name": "X", "source_targets": [{"source": "Ghost", "target": "City"}]}]}
    refused = await service.client.put(f"{API}/ontology", json=bad, headers=a)
    assert refused.status_code == 422 and "Ghost" in refused.text
    malformed = await service.client.put(f"{API}/ontology", json={"entity_types": "Person"}, headers=a)
    assert malformed.status_code == 422
    assert (await service.client.get(f"{API}/ontology", headers=a)).json() == stored  # nothing changed

    reset = await service.client.delete(f"{API}/ontology", headers=a)
    assert reset.status_code == 200 and reset.json()["source"] == "server"
    assert (await service.client.get(f"{API}/ontology")).status_code == 401


async def test_a_projects_single_valued_relation_retires_the_old_value_in_its_groups_only(service: Service):
    single = {"single_valued": ["LIVES_IN"]}  # no signature: add_fact's entities are plain "Entity"
    assert (await service.client.put(f"{API}/ontology", json=single, headers=service.as_(service.key_a))).is_success
    first_ids = {}
    for key in (service.key_a, service.key_b):
        await make_user(service, key)
        for city, when in (("Paris", "2020-01-01T00:00:00Z"), ("Rome", "2023-01-01T00:00:00Z")):
            added = await service.client.post(f"{API}/graph/facts", headers=service.as_(key), json={
                "user_id": "alice", "source_node_name": "Alice", "fact_name": "LIVES_IN", "target_node_name": city,
                "fact": f"Alice lives in {city}", "valid_at": when})
            assert added.status_code == 201, added.text
            first_ids.setdefault(key, added.json()["uuid"])
    retired = await service.client.get(f"{API}/graph/facts/{first_ids[service.key_a]}?user_id=alice",
                                       headers=service.as_(service.key_a))
    assert retired.json()["invalid_at"].startswith("2023-01-01")  # project a: one current home
    kept = await service.client.get(f"{API}/graph/facts/{first_ids[service.key_b]}?user_id=alice",
                                    headers=service.as_(service.key_b))
    assert kept.json()["invalid_at"] is None  # project b declared nothing: both stand


async def test_a_projects_json_mappings_extract_its_episodes_without_a_model(service: Service):
    a, b = service.as_(service.key_a), service.as_(service.key_b)
    put = await service.client.put(f"{API}/mappings", json={"mappings": [MAPPING]}, headers=a)
    assert put.status_code == 200 and put.json()["source"] == "project"
    assert (await service.client.get(f"{API}/mappings", headers=b)).json() == {"source": "server", "mappings": []}
    refused = await service.client.put(f"{API}/mappings", json={"mappings": [{"name": "m"}]}, headers=a)
    assert refused.status_code == 422
    assert [m["name"] for m in (await service.client.get(f"{API}/mappings", headers=a)).json()["mappings"]] == ["crm"]

    found = {}
    for key in (service.key_a, service.key_b):
        await make_user(service, key)
        added = await service.client.post(f"{API}/graph/episodes", headers=service.as_(key), json={
            "user_id": "alice", "type": "json", "data": '{"company": "Acme", "owner": "Ann"}',
            "source_description": "crm"})
        assert added.status_code == 202, added.text
        await wait_for_task(service, key, added.json()["task_id"], {"done"})
        search = {"user_id": "alice", "query": "Ann owns Acme", "scopes": ["facts"]}
        found[key] = (await service.client.post(f"{API}/graph/search", json=search, headers=service.as_(key))).json()
    assert [f["fact"] for f in found[service.key_a]["facts"]] == ["Ann owns Acme"]
    assert found[service.key_b]["facts"] == []  # the scripted model of this server extracts nothing


async def test_an_unconfigured_cross_encoder_is_a_422_naming_the_setting(service: Service):
    a = service.as_(service.key_a)
    await make_user(service, service.key_a)
    response = await service.client.post(f"{API}/graph/search", headers=a, json={
        "user_id": "alice", "query": "anything", "reranker": "cross_encoder"})
    assert response.status_code == 422 and "CHRONOMEM_CROSS_ENCODER" in response.text



def test_a_groups_own_document_wins_over_its_projects_and_unowned_groups_keep_the_servers():
    from chronomem.app.project_config import ProjectProfiles
    from chronomem.controlplane.sqlite import SQLiteControlPlane

    control = SQLiteControlPlane.open(":memory:")
    try:
        project = control.ensure_project("acme")
        ann, bob = (control.create_user(project.id, name) for name in ("ann", "bob"))
        zep_style = {"entity_types": [{"name": "Pet", "description": "An animal.", "properties": None}],
                     "edge_types": []}  # as the Zep API's set_entity_types stores it, for ann alone
        control.put_document(project.id, "ontology", ann.group_id, "types", zep_style)
        control.put_document(project.id, "ontology", "", "types", {"single_valued": ["LIVES_IN"]})
        profiles = ProjectProfiles(control)
        own, shared = profiles.profile(ann.group_id), profiles.profile(bob.group_id)
        assert own is not None and own.ontology is not None and list(own.ontology.entity_types) == ["Pet"]
        assert shared is not None and shared.ontology is not None and shared.ontology.is_single_valued("LIVES_IN")
        assert shared.json_mappings is None  # no mappings declared: the server's apply
        assert profiles.profile("a-group-no-project-owns") is None
    finally:
        control.close()
