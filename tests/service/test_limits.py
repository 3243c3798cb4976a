"""The limits of ``service/limits.py`` one by one: what is refused, with which message, and that
stored data from before the limits stays readable."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from chronomem.service.limits import (
    MAX_JSON_DEPTH,
    MAX_JSON_VALUES,
    check_json,
    lone_surrogate_escape,
)
from chronomem.timeutil import ensure_utc, parse_instant
from service_support import Service

API = "/api/v3"


def nested(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    ("text", "lone"),
    [
        (r'{"a": "\ud800"}', r"\ud800"),
        (r'{"a": "\ude00"}', r"\ude00"),
        (r'{"a": "\ud83d x\ude00"}', r"\ud83d"),
        (r'{"a": "\ud83d\ud83d\ude00"}', r"\ud83d"),
        (r'{"a": "\\\ud800"}', r"\ud800"),  # an escaped backslash, then a real escape
        (r'{"a": "\ud83d\ude00"}', None),  # a pair: an emoji
        (r'{"a": "\\ud800"}', None),  # the literal text \ud800
        ('{"a": "plain"}', None),
    ],
)
def test_lone_surrogate_escapes_are_found_and_pairs_are_not(text, lone):
    assert lone_surrogate_escape(text.encode()) == lone


def test_json_limits_name_what_was_exceeded():
    assert check_json(nested(MAX_JSON_DEPTH)) == nested(MAX_JSON_DEPTH)
    with pytest.raises(ValueError, match=f"deeper than {MAX_JSON_DEPTH}"):
        check_json(nested(MAX_JSON_DEPTH + 1))
    with pytest.raises(ValueError, match=f"more than {MAX_JSON_VALUES}"):
        check_json({"x": list(range(MAX_JSON_VALUES))})
    with pytest.raises(ValueError, match="finite"):
        check_json({"x": [1.0, float("nan")]})
    with pytest.raises(ValueError, match="key longer"):
        check_json({"k" * 257: 1})
    assert check_json({"ok": [1, "two", None, True, 2.5]}) == {"ok": [1, "two", None, True, 2.5]}


def test_timestamps_outside_the_supported_range_are_refused_with_the_range():
    for text in ("9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+01:00", "0050-01-01T00:00:00Z"):
        with pytest.raises(ValueError, match="supported range"):
            ensure_utc(datetime.fromisoformat(text))
    assert ensure_utc(parse_instant("1769-08-15T00:00:00Z")).year == 1769


def test_a_date_typed_without_a_timezone_gets_a_message_for_people_not_programmers():
    with pytest.raises(ValueError) as refused:
        parse_instant("2024-05-01T10:00:00")
    assert "2024-05-01T10:00:00Z" in str(refused.value) and "assume_utc" not in str(refused.value)
    with pytest.raises(ValueError, match="not an ISO 8601"):
        parse_instant("yesterday")


@pytest.mark.parametrize(
    ("method", "url", "body", "field", "limit"),
    [
        ("POST", "/users", {"user_id": "u", "metadata": nested(255)}, "metadata", "deeper than 32"),
        ("POST", "/users", {"user_id": "a/b"}, "user_id", "no '/'"),
        ("POST", "/users", {"user_id": ".."}, "user_id", "not '.' or '..'"),
        ("POST", "/graph/episodes", {"user_id": "alice", "type": "json", "data": "[" * 5000 + "]" * 5000},
         "data", "deeper than 32"),
        ("POST", "/graph/facts", {"user_id": "alice", "source_node_name": "A", "target_node_name": "B",
                                  "fact_name": "KNOWS", "fact": "A knows B", "valid_at": "9999-12-31T23:59:59-14:00"},
         "valid_at", "supported range"),
        ("POST", "/graph/facts", {"user_id": "alice", "source_node_name": "A", "target_node_name": "B",
                                  "fact_name": "KNOWS", "fact": "A knows B", "invalid_at": "0001-01-01T00:00:00Z"},
         "invalid_at", "supported range"),
        ("POST", "/graph/search", {"user_id": "alice", "query": "x", "filters": {"as_of": "0001-01-01T00:00:00Z"}},
         "filters.as_of", "supported range"),
        ("POST", "/graph/search", {"user_id": "alice", "query": "x",
                                   "filters": {"known_at": "9999-12-31T23:59:59-14:00"}},
         "filters.known_at", "supported range"),
        ("POST", "/threads/t1/messages", {"messages": [{"content": "x", "created_at": "9999-12-31T23:59:59-14:00"}]},
         "messages.0.created_at", "supported range"),
        ("PATCH", "/users/alice", {"metadata": None}, "metadata", "cannot be null"),
    ],
)
async def test_a_value_over_a_limit_is_a_422_naming_the_field_and_the_limit_and_nothing_is_written(
    service: Service, method, url, body, field, limit
):
    headers = service.as_(service.key_a)
    await service.client.post(f"{API}/users", json={"user_id": "alice"}, headers=headers)
    await service.client.post(f"{API}/threads", json={"thread_id": "t1", "user_id": "alice"}, headers=headers)
    before = (await service.client.get(f"{API}/users", headers=headers)).json()
    response = await service.client.request(method, API + url, content=json.dumps(body), headers={
        **headers, "content-type": "application/json"})
    assert response.status_code == 422, response.text
    message = response.json()["error"]["message"]
    assert message.startswith(f"{field}:") and limit in message, message
    assert (await service.client.get(f"{API}/users", headers=headers)).json() == before
    assert (await service.client.get(f"{API}/threads/t1/messages", headers=headers)).json() == {"messages": []}


async def test_non_finite_numbers_are_refused_not_stored_as_null(service: Service):
    headers = {**service.as_(service.key_a), "content-type": "application/json"}
    for literal in ("Infinity", "-Infinity", "NaN"):
        response = await service.client.post(f"{API}/users", headers=headers,
                                             content=f'{{"user_id": "u", "metadata": {{"x": {literal}}}}}')
        assert response.status_code == 422 and "finite" in response.json()["error"]["message"]
    assert (await service.client.get(f"{API}/users/u", headers=headers)).status_code == 404


async def test_metadata_stored_before_the_limits_does_not_poison_reads(service: Service):
    """A user whose metadata was stored nested 300 levels deep (as the API allowed before) is still
    listed and readable, the rest of the record intact and the metadata flagged."""
    headers = service.as_(service.key_a)
    project = service.control.get_project("project-a")
    service.control.create_user(project.id, "legacy", metadata=nested(300))
    service.control.create_user(project.id, "fine", metadata={"plan": "pro"})
    listed = await service.client.get(f"{API}/users", headers=headers)
    assert listed.status_code == 200
    by_id = {u["user_id"]: u for u in listed.json()["users"]}
    assert by_id["fine"]["metadata"] == {"plan": "pro"}
    assert "_unreadable" in by_id["legacy"]["metadata"]
    one = await service.client.get(f"{API}/users/legacy", headers=headers)
    assert one.status_code == 200 and one.json()["user_id"] == "legacy"


async def test_405_names_every_method_the_path_serves(service: Service):
    response = await service.client.put(f"{API}/users/alice", headers=service.as_(service.key_a))
    assert response.status_code == 405
    assert set(response.headers["allow"].split(", ")) >= {"GET", "PATCH", "DELETE"}


async def test_the_one_target_rule_is_in_the_schema(service: Service):
    document = (await service.client.get("/openapi.json")).json()
    for name in ("AddEpisodeRequest", "AddFactRequest", "SearchRequest"):
        branches = document["components"]["schemas"][name]["oneOf"]
        assert [b["required"] for b in branches] == [["user_id"], ["graph_id"]]


async def test_a_fact_text_restated_under_another_relation_is_a_409_not_a_silent_drop(service: Service):
    headers = service.as_(service.key_a)
    await service.client.post(f"{API}/users", json={"user_id": "alice"}, headers=headers)
    triple = {"user_id": "alice", "source_node_name": "Ann", "target_node_name": "Acme", "fact_name": "WORKS_AT",
              "fact": "Ann works at Acme"}
    first = await service.client.post(f"{API}/graph/facts", json=triple, headers=headers)
    again = await service.client.post(f"{API}/graph/facts", json=triple, headers=headers)
    assert first.status_code == again.status_code == 201 and again.json()["uuid"] == first.json()["uuid"]
    relabelled = await service.client.post(f"{API}/graph/facts", json={**triple, "fact_name": "OWNS"},
                                           headers=headers)
    assert relabelled.status_code == 409 and "WORKS_AT" in relabelled.json()["error"]["message"]
    group = service.control.get_user(service.control.get_project("project-a").id, "alice").group_id
    assert [f.relation_type for f in await service.memory.list_facts(group)] == ["WORKS_AT"]
