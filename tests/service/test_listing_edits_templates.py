"""The native API's listings by cursor, hand edits of entities and facts (with their provenance),
named context templates and the summaries that stand in until a model writes them."""

from __future__ import annotations

import json

from service_support import Service

API = "/api/v3"


async def seeded(service: Service, user_id: str = "ada") -> dict[str, str]:
    """A user with three facts added as triples (no model involved)."""
    headers = service.as_(service.key_a)
    assert (await service.client.post(f"{API}/users", json={"user_id": user_id, "first_name": "Ada"},
                                      headers=headers)).status_code == 201
    ids = {}
    for target, relation, text in (("Lisbon", "LIVES_IN", "Ada lives in Lisbon"),
                                   ("Acme", "WORKS_AT", "Ada works at Acme"), ("Rex", "OWNS", "Ada owns Rex")):
        added = await service.client.post(f"{API}/graph/facts", headers=headers, json={
            "user_id": user_id, "source_node_name": "Ada", "fact_name": relation, "target_node_name": target,
            "fact": text, "valid_at": "2024-05-01T00:00:00Z"})
        assert added.status_code == 201, added.text
        ids[text] = added.json()["uuid"]
        ids[target] = added.json()["target_node_uuid"]
        ids["Ada"] = added.json()["source_node_uuid"]
    return ids


async def pages(service: Service, path: str, key: str) -> list[list[str]]:
    """Every page of a listing, following next_cursor, as lists of uuids."""
    cursor, seen = None, []
    while True:
        params = {"user_id": "ada", "limit": 2} | ({"cursor": cursor} if cursor else {})
        body = (await service.client.get(path, params=params, headers=service.as_(service.key_a))).json()
        seen.append([item["uuid"] for item in body[key]])
        cursor = body["next_cursor"]
        if cursor is None:
            return seen


async def test_facts_and_entities_are_listed_a_page_at_a_time(service: Service):
    ids = await seeded(service)
    fact_pages = await pages(service, f"{API}/graph/facts", "facts")
    assert [len(p) for p in fact_pages] == [2, 1]
    texts = ("Ada lives in Lisbon", "Ada works at Acme", "Ada owns Rex")
    assert sorted(i for p in fact_pages for i in p) == sorted(ids[t] for t in texts)
    entity_pages = await pages(service, f"{API}/graph/entities", "entities")
    assert [len(p) for p in entity_pages] == [2, 2]
    assert sorted(i for p in entity_pages for i in p) == sorted(ids[n] for n in ("Ada", "Lisbon", "Acme", "Rex"))


async def test_a_cursor_we_did_not_issue_is_refused(service: Service):
    await seeded(service)
    for cursor in ("not-a-cursor", "bzotMQ"):  # garbage; a negative offset
        bad = await service.client.get(f"{API}/graph/facts", params={"user_id": "ada", "cursor": cursor},
                                       headers=service.as_(service.key_a))
        assert bad.status_code == 422 and "cursor" in bad.json()["error"]["message"]


async def test_an_entity_edit_is_applied_searchable_and_recorded(service: Service):
    ids = await seeded(service)
    headers = service.as_(service.key_a)
    patched = await service.client.patch(f"{API}/graph/entities/{ids['Rex']}", params={"user_id": "ada"},
                                         headers=headers, json={"name": "Rexie", "summary": "Ada's dog.",
                                                                "attributes": {"species": "dog"}})
    assert patched.status_code == 200, patched.text
    assert (patched.json()["name"], patched.json()["summary"]) == ("Rexie", "Ada's dog.")
    stored = (await service.client.get(f"{API}/graph/entities/{ids['Rex']}", params={"user_id": "ada"},
                                       headers=headers)).json()
    assert (stored["name"], stored["attributes"]) == ("Rexie", {"species": "dog"})
    found = (await service.client.post(f"{API}/graph/search", headers=headers, json={
        "user_id": "ada", "query": "Rexie", "scopes": ["entities"]})).json()["entities"]
    assert found[0]["uuid"] == ids["Rex"]

    [edit] = [e for e in (await service.client.get(f"{API}/graph/episodes", params={"user_id": "ada"},
                                                  headers=headers)).json()["episodes"] if e["type"] == "json"]
    recorded = json.loads(edit["content"])
    assert recorded["edit"] == "entity" and recorded["id"] == ids["Rex"] and edit["status"] == "done"
    assert recorded["changes"]["name"] == {"from": "Rex", "to": "Rexie"}
    assert "project project-a" in recorded["source"]


async def test_an_edit_that_changes_nothing_records_nothing(service: Service):
    ids = await seeded(service)
    headers = service.as_(service.key_a)
    same = await service.client.patch(f"{API}/graph/entities/{ids['Rex']}", params={"user_id": "ada"},
                                      headers=headers, json={"name": "Rex"})
    assert same.status_code == 200
    episodes = (await service.client.get(f"{API}/graph/episodes", params={"user_id": "ada"},
                                         headers=headers)).json()["episodes"]
    assert episodes == []


async def test_a_fact_edit_changes_text_and_validity_and_refuses_a_backwards_range(service: Service):
    ids = await seeded(service)
    headers = service.as_(service.key_a)
    url, params = f"{API}/graph/facts/{ids['Ada works at Acme']}", {"user_id": "ada"}
    patched = await service.client.patch(url, params=params, headers=headers, json={
        "fact": "Ada worked at Acme", "invalid_at": "2025-02-01T00:00:00Z", "relation_type": "worked at"})
    assert patched.status_code == 200, patched.text
    body = patched.json()
    assert (body["fact"], body["name"], body["invalid_at"][:10]) == ("Ada worked at Acme", "WORKED_AT", "2025-02-01")
    assert len(body["episodes"]) == 1  # the edit is the fact's provenance

    backwards = await service.client.patch(url, params=params, headers=headers,
                                           json={"valid_at": "2026-01-01T00:00:00Z"})
    assert backwards.status_code == 422
    assert (await service.client.get(url, params=params, headers=headers)).json() == body


async def test_edits_do_not_cross_projects(service: Service):
    ids = await seeded(service)
    other = service.as_(service.key_b)
    await service.client.post(f"{API}/users", json={"user_id": "ada"}, headers=other)
    attempt = await service.client.patch(f"{API}/graph/entities/{ids['Rex']}", params={"user_id": "ada"},
                                         headers=other, json={"name": "Stolen"})
    assert attempt.status_code == 404
    stored = await service.client.get(f"{API}/graph/entities/{ids['Rex']}", params={"user_id": "ada"},
                                      headers=service.as_(service.key_a))
    assert stored.json()["name"] == "Rex"


async def test_context_templates_are_stored_per_project_and_used_by_id(service: Service):
    await seeded(service)
    headers = service.as_(service.key_a)
    template = {"template_id": "short", "template": "Facts:\n%{edges limit=2 types=[LIVES_IN,OWNS]}\n%{user_summary}"}
    assert (await service.client.post(f"{API}/context-templates", json=template, headers=headers)).status_code == 201
    assert (await service.client.post(f"{API}/context-templates", json=template, headers=headers)).status_code == 409
    bad = await service.client.post(f"{API}/context-templates", headers=headers,
                                    json={"template_id": "bad", "template": "%{edges limit=0}"})
    assert bad.status_code == 422 and "limit" in bad.json()["error"]["message"]

    context = (await service.client.get(f"{API}/users/ada/context", headers=headers, params={
        "query": "Where does Ada live and work?", "template_id": "short"})).json()["context"]
    lines = context.splitlines()
    assert lines[0] == "Facts:" and {line.split(" (")[0] for line in lines[1:3]} == {
        "- Ada lives in Lisbon", "- Ada owns Rex"}  # WORKS_AT is not among the template's types
    assert lines[3].startswith("[no model summary; facts the graph holds about user ada]")

    other = service.as_(service.key_b)
    await service.client.post(f"{API}/users", json={"user_id": "ada"}, headers=other)
    missing = await service.client.get(f"{API}/users/ada/context", headers=other,
                                       params={"query": "Ada", "template_id": "short"})
    assert missing.status_code == 404  # another project's template


async def test_summaries_without_a_model_say_what_the_graph_holds_and_say_so(service: Service):
    await seeded(service)
    headers = service.as_(service.key_a)
    summary = (await service.client.get(f"{API}/users/ada/summary", headers=headers)).json()["summary"]
    assert summary.startswith("[no model summary; facts the graph holds about user ada]")
    assert "Ada lives in Lisbon." in summary and "Ada owns Rex." in summary
    await service.client.post(f"{API}/users", json={"user_id": "bob"}, headers=headers)
    assert (await service.client.get(f"{API}/users/bob/summary", headers=headers)).json()["summary"] == (
        "[no model summary] The graph holds no facts about user bob yet.")


async def test_a_template_quotes_each_fact_with_its_evidence_on_request(service: Service):
    from chronomem.domain import EvidenceSpan
    from chronomem.store import GraphWrite

    ids = await seeded(service)
    headers = service.as_(service.key_a)
    group_id = service.control.get_user(service.control.get_project("project-a").id, "ada").group_id
    said = (await service.memory.add_episode(group_id, "We moved to Lisbon in May.", speaker="Ada")).episode
    lives = await service.memory.get_fact(group_id, ids["Ada lives in Lisbon"])
    start = said.text.index("moved to Lisbon")  # the span as grounding keeps it: offsets into Episode.text
    quoted = lives.model_copy(update={"episode_ids": (said.id,),
                                      "evidence": (EvidenceSpan(episode_id=said.id, start=start, end=start + 15),)})
    await service.memory.store.write(GraphWrite(group_id, facts=[quoted]))
    template = {"template_id": "where", "template": "Facts:\n%{edges limit=3 types=[LIVES_IN,OWNS]}"}
    assert (await service.client.post(f"{API}/context-templates", json=template, headers=headers)).status_code == 201
    await service.client.post(f"{API}/threads", json={"thread_id": "t1", "user_id": "ada"}, headers=headers)

    for path in (f"{API}/users/ada/context", f"{API}/threads/t1/context"):
        params = {"query": "Where does Ada live?", "template_id": "where"}
        plain = (await service.client.get(path, headers=headers, params=params)).json()["context"]
        evidenced = (await service.client.get(path, headers=headers, params=params | {"evidence": "true"})).json()
        lines = {line.split(" (")[0]: line for line in evidenced["context"].splitlines()[1:]}
        assert lines["- Ada lives in Lisbon"].endswith('[source: "moved to Lisbon"]')
        assert "source:" not in lines["- Ada owns Rex"]  # a fact without evidence has no quote
        assert "source:" not in plain and plain.startswith("Facts:\n")
