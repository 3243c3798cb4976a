"""The explorer's HTTP views (``/api/v3/explorer``) and pages (``/ui``, ``/docs``, ``/redoc``), in
process: bounded pages that add up to the graph, time travel, provenance, retry, explained search and
clear 4xx errors."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime

from chronomem.domain import EpisodeStatus
from chronomem.memory import Chronomem
from chronomem.service.pages import EXPLORER_POLICY
from chronomem.ui import vendored
from service_support import FAST_WORKERS, Service

API = "/api/v3"
EXPLORER = f"{API}/explorer"


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


async def alice_group(service: Service) -> str:
    response = await service.client.post(f"{API}/users", json={"user_id": "alice"}, headers=service.as_(service.key_a))
    assert response.status_code == 201, response.text
    project = service.control.authenticate(service.key_a)
    assert project is not None
    return service.control.get_user(project.id, "alice").group_id


async def get(service: Service, path: str, **params: object) -> dict:
    response = await service.client.get(f"{EXPLORER}{path}", params={"user_id": "alice", **params},
                                        headers=service.as_(service.key_a))
    assert response.status_code == 200, response.text
    return response.json()


async def test_pages_add_up_to_the_whole_graph_without_repeating_a_fact(service: Service):
    group = await alice_group(service)
    memory: Chronomem = service.memory
    names = [f"Person {i:02d}" for i in range(12)]
    for a, b in itertools.pairwise(names):  # a chain: every page joins the one before
        await memory.add_fact(group, a, "KNOWS", b, f"{a} knows {b}")
    await memory.add_fact(group, names[0], "KNOWS", names[11], f"{names[0]} knows {names[11]}")

    pages, offset = [], 0
    while offset is not None:
        page = await get(service, "/snapshot", limit=5, offset=offset)
        pages.append(page)
        offset = page["next_offset"]
    assert [len(p["nodes"]) for p in pages] == [5, 5, 2]
    assert {n["name"] for p in pages for n in p["nodes"]} == set(names)
    edge_ids = [e["id"] for p in pages for e in p["edges"]]
    assert len(edge_ids) == len(set(edge_ids)) == 12
    seen: set[str] = set()
    for page in pages:  # each page's facts join its entities to themselves or to earlier pages
        seen |= {n["id"] for n in page["nodes"]}
        assert all(e["source"] in seen and e["target"] in seen for e in page["edges"])
    assert pages[0]["total_entities"] == 12


async def test_the_snapshot_shows_what_was_true_at_t_as_known_at_t_prime(service: Service):
    group = await alice_group(service)
    memory: Chronomem = service.memory
    acme = await memory.add_fact(group, "Alice", "LIVES_IN", "Porto", "Alice lives in Porto",
                                 valid_at=day("2020-01-01"))
    later = await memory.add_fact(group, "Alice", "LIVES_IN", "Lisbon", "Alice lives in Lisbon",
                                  valid_at=day("2023-01-01"))
    await memory.store.write(_closing(acme, later))

    def facts(page: dict) -> set[str]:
        return {e["fact"] for e in page["edges"] if e["in_view"]}

    assert facts(await get(service, "/snapshot")) == {"Alice lives in Lisbon"}
    assert facts(await get(service, "/snapshot", as_of="2021-06-01T00:00:00Z")) == {"Alice lives in Porto"}
    assert facts(await get(service, "/snapshot", as_of="2024-06-01T00:00:00Z")) == {"Alice lives in Lisbon"}
    before = await get(service, "/snapshot", known_at=acme.created_at.isoformat())
    assert facts(before) == {"Alice lives in Porto"}
    assert {n["name"] for n in before["nodes"]} == {"Alice", "Porto"}  # Lisbon was not known yet
    shown = await get(service, "/snapshot", include_superseded="true")
    assert {e["fact"]: e["in_view"] for e in shown["edges"]} == {"Alice lives in Porto": False,
                                                                 "Alice lives in Lisbon": True}
    timeline = await get(service, "/timeline")
    assert timeline["world"] == ["2020-01-01T00:00:00Z", "2023-01-01T00:00:00Z"]


def _closing(old, new):  # type: ignore[no-untyped-def]
    """The old fact closed where the new one starts, as invalidation writes it."""
    from chronomem.store.base import GraphWrite

    closed = old.model_copy(update={"invalid_at": new.valid_at, "expired_at": new.created_at})
    return GraphWrite(old.group_id, facts=[closed])


async def test_entity_and_episode_provenance_point_at_each_other(service: Service):
    group = await alice_group(service)
    memory: Chronomem = service.memory
    [episode] = await memory.enqueue([Chronomem.new_episode(group, "Alice met Bob in Lisbon.", kind="text")])
    fact = await memory.add_fact(group, "Alice", "MET", "Bob", "Alice met Bob")
    from chronomem.domain import Mention
    from chronomem.store.base import GraphWrite

    cited = fact.model_copy(update={"episode_ids": (episode.id,)})
    mentions = [Mention(group_id=group, episode_id=episode.id, entity_id=e) for e in (fact.source_id, fact.target_id)]
    await memory.store.write(GraphWrite(group, facts=[cited], mentions=mentions))

    entity = await get(service, f"/entities/{fact.source_id}")
    assert entity["name"] == "Alice"
    facts = [(f["fact"], f["episode_ids"], f["in_view"]) for f in entity["facts"]]
    assert facts == [("Alice met Bob", [episode.id], True)]
    assert [e["text"] for e in entity["episodes"]] == ["Alice met Bob in Lisbon."]
    assert entity["names"] == {fact.source_id: "Alice", fact.target_id: "Bob"}
    produced = await get(service, f"/episodes/{episode.id}")
    assert {e["name"] for e in produced["entities"]} == {"Alice", "Bob"}
    assert [f["id"] for f in produced["facts"]] == [fact.id]


async def test_ingestion_lists_the_queue_and_retries_a_failed_episode(service: Service):
    group = await alice_group(service)
    memory: Chronomem = service.memory
    service.model.failing = True  # the workers try it, and give up after their last attempt
    [episode] = await memory.enqueue([Chronomem.new_episode(group, "Alice: hello", speaker="Alice")])
    async with asyncio.timeout(10):
        while not _given_up(await memory.get_episode(group, episode.id)):
            await asyncio.sleep(0.02)
    service.model.failing = False
    status = await get(service, "/ingestion")
    assert status["counts"]["failed"] == 1 and status["more"]["failed"] is False
    assert [e["id"] for e in status["episodes"]] == [episode.id]
    assert "provider unreachable (scripted)" in status["episodes"][0]["last_error"]
    retried = await service.client.post(f"{EXPLORER}/episodes/{episode.id}/retry", params={"user_id": "alice"},
                                        headers=service.as_(service.key_a))
    assert retried.status_code == 200 and retried.json()["status"] != "failed"
    async with asyncio.timeout(10):  # the workers take it again, and this time the model answers
        while (await memory.get_episode(group, episode.id)).status is not EpisodeStatus.DONE:
            await asyncio.sleep(0.02)
    assert (await get(service, "/ingestion"))["counts"] == {"failed": 0, "processing": 0, "pending": 0}
    again = await service.client.post(f"{EXPLORER}/episodes/{episode.id}/retry", params={"user_id": "alice"},
                                      headers=service.as_(service.key_a))
    assert again.json()["status"] == "done"  # only failed episodes are queued again


def _given_up(episode) -> bool:  # type: ignore[no-untyped-def]
    """Failed after the workers' last attempt (between attempts it is back to pending)."""
    return episode.status is EpisodeStatus.FAILED and episode.attempts >= FAST_WORKERS.max_attempts


async def test_search_explains_its_hits_and_returns_the_agents_context(service: Service):
    group = await alice_group(service)
    memory: Chronomem = service.memory
    await memory.add_fact(group, "Alice", "WORKS_FOR", "Acme", "Alice works for Acme")
    await memory.add_fact(group, "Bob", "PLAYS", "Chess", "Bob plays chess")
    body = {"user_id": "alice", "query": "Where does Alice work?", "recipe": "context"}
    response = await service.client.post(f"{EXPLORER}/search", json=body, headers=service.as_(service.key_a))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["context"] == await memory.context([group], "Where does Alice work?")
    top_fact = next(h for h in answer["hits"] if h["scope"] == "facts")
    assert top_fact["text"] == "Alice works for Acme" and "bm25" in top_fact["found_by"]
    assert all(h["reranker"] == "rrf" and set(h["found_by"]) <= {"cosine", "bm25", "bfs"} for h in answer["hits"])
    unknown = await service.client.post(f"{EXPLORER}/search", json={**body, "recipe": "nope"},
                                        headers=service.as_(service.key_a))
    assert unknown.status_code == 422 and "known:" in unknown.json()["error"]["message"]


async def test_bad_requests_get_a_clear_4xx(service: Service):
    await alice_group(service)
    as_a, as_b = service.as_(service.key_a), service.as_(service.key_b)
    cases = [
        (f"{EXPLORER}/snapshot", {"user_id": "alice", "limit": 0}, as_a, 422),
        (f"{EXPLORER}/snapshot", {"user_id": "alice", "limit": 5000}, as_a, 422),
        (f"{EXPLORER}/snapshot", {"user_id": "alice", "as_of": "yesterday-ish"}, as_a, 422),
        (f"{EXPLORER}/snapshot", {}, as_a, 422),
        (f"{EXPLORER}/snapshot", {"group": "whatever"}, as_a, 422),  # raw groups only on `chronomem ui`
        (f"{EXPLORER}/snapshot", {"user_id": "alice"}, as_b, 404),  # another project's user
        (f"{EXPLORER}/snapshot", {"user_id": "alice"}, {}, 401),
        (f"{EXPLORER}/entities/nope", {"user_id": "alice"}, as_a, 404),
        (f"{EXPLORER}/episodes/nope", {"user_id": "alice"}, as_a, 404),
    ]
    for path, params, headers, status in cases:
        response = await service.client.get(path, params=params, headers=headers)
        assert response.status_code == status, (path, params, response.text)
        assert response.json()["error"]["message"]


async def test_pages_are_served_from_local_files(service: Service):
    assert vendored(), "run scripts/vendor-js (make install does)"
    home = await service.client.get("/")
    assert home.status_code == 307 and home.headers["location"] == "/ui/"
    page = await service.client.get("/ui/")
    assert page.status_code == 200 and "vendor/cytoscape/cytoscape.min.js" in page.text
    assert page.headers["content-security-policy"] == EXPLORER_POLICY
    for path, asset in (("/docs", "/ui/vendor/swagger-ui-dist/swagger-ui-bundle.js"),
                        ("/redoc", "/ui/vendor/redoc/redoc.standalone.js")):
        html = (await service.client.get(path)).text
        assert asset in html and "cdn." not in html and "fonts.googleapis" not in html
        assert (await service.client.get(asset)).status_code == 200
