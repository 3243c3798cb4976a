"""Zep's official v4 SDK (``zep-cloud`` 4.0.1), unmodified, sync and async, against a real chronomem
server at ``/api/v4``: every call of the memory subset, errors as the SDK raises them, and 501 for
the rest.

The SDK lives in .venv-zep4 (it cannot share this venv with the 3.x SDK), so one script there
(``zep4/sdk_calls.py``) makes the calls with each client and reports what came back; each test
here checks one part of that report for both clients. The server runs the heuristic stand-in
model, so ingestion really extracts facts."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import processes
from service_support import create_key, free_port, start_live_server
from zep4_support import run_script, zep4_python

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    zep4_python()
    data_dir = tmp_path_factory.mktemp("zep4")
    key, other = create_key(data_dir, "zep4-project"), create_key(data_dir, "other-project")
    port = free_port()
    with processes.stopping(start_live_server(data_dir, port, model="heuristic"), grace=20):
        yield run_script("sdk_calls.py", "--base-url", f"http://127.0.0.1:{port}", "--key", key, "--other-key", other)


@pytest.fixture(params=["sync", "async"])
def seen(request: pytest.FixtureRequest, report: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = report[request.param]
    return result


def is_uuid(value: str) -> bool:
    return str(uuid.UUID(value)) == value


def test_users_are_addressed_by_uuid_with_an_optional_external_id(seen: dict[str, Any]) -> None:
    user = seen["user"]
    assert user["is_uuid"] and user["graph_uuid"] == user["uuid"]  # a user's graph is addressed by the user
    assert user["user_id"].endswith("-ada") and user["metadata"] == {"plan": "pro"}
    assert seen["user_anonymous_id"] is None
    assert seen["user_updated"] == ["Ada", "Byron", "Byron"]
    assert seen["user_list"]["has_both"]  # pages of one, followed by the SDK's pager
    assert seen["user_list"]["count"] == seen["user_list"]["distinct"]
    assert seen["user_lookup"] and seen["graph_lookup"]
    node = seen["user_node"]
    assert node["name"] == "Ada" and node["episodes"] >= 1


def test_a_duplicate_external_id_is_a_409_naming_the_holder(seen: dict[str, Any]) -> None:
    duplicate = seen["user_duplicate"]
    assert (duplicate["status"], duplicate["type"], duplicate["error"]["code"]) == (409, "ConflictError", "conflict")
    assert duplicate["error"]["details"] == {"uuid": seen["user"]["uuid"]}


def test_errors_come_in_zeps_v4_shape(seen: dict[str, Any]) -> None:
    for name, status, kind, code in (("user_missing", 404, "NotFoundError", "not_found"),
                                     ("user_other_project", 404, "NotFoundError", "not_found"),
                                     ("unauthorized", 401, "UnauthorizedError", "unauthorized"),
                                     ("search_too_many", 400, "BadRequestError", "bad_request"),
                                     ("hyperedge_two_nodes", 400, "BadRequestError", "bad_request")):
        error = seen[name]
        assert (error["status"], error["type"], error["error"]["code"]) == (status, kind, code), name
        assert error["error"]["message"] and error["error"]["request_id"]
    assert "3 distinct nodes" in seen["hyperedge_two_nodes"]["error"]["message"]


def test_another_projects_key_reaches_nothing_by_uuid(seen: dict[str, Any]) -> None:
    assert seen["other_project"] == [404] * 9  # reads, a search, a task, a batch and two deletes


def test_calls_outside_the_subset_answer_501_naming_the_call(seen: dict[str, Any]) -> None:
    refused = seen["not_implemented"]
    assert (refused["status"], refused["error"]["code"]) == (501, "not_implemented")
    assert "project.get" in refused["error"]["message"]


def test_a_retried_write_with_the_same_idempotency_key_is_applied_once(seen: dict[str, Any]) -> None:
    assert seen["idempotent_create"]  # the second create replays the first answer instead of a 409
    same_answer, stored, other_path = seen["idempotent_add_messages"]
    assert same_answer and stored == 1  # the retried add_messages was applied once
    assert other_path == 400  # the key sent again with another path is refused


def test_threads_messages_context_and_summary(seen: dict[str, Any]) -> None:
    assert seen["thread"] == {"user_uuid": True, "graph_uuid": True, "thread_id": None}
    added = seen["add_messages"]
    assert added["count"] == 2 and added["roles"] == ["user", "assistant"]
    assert added["reference_time"] == "2024-05-02T10:00:00Z"  # as sent
    assert added["context_is_str"] and added["task_status"] == "succeeded"
    assert seen["list_messages"] == ["I moved to Lisbon in May 2024.", "How do you like Lisbon so far?"]
    assert seen["thread_episodes"] == seen["list_messages"]
    assert seen["get_message"] == "I moved to Lisbon in May 2024."
    assert "Lisbon" in seen["thread_context"] and "Lisbon" in seen["thread_summary"]
    assert seen["thread_list"] and seen["thread_get"]


def test_a_thread_of_the_native_api_is_found_by_lookup_and_by_its_uuid(seen: dict[str, Any]) -> None:
    legacy = seen["thread_lookup"]
    assert legacy["thread_id"].endswith("-legacy") and legacy["get"] == legacy["thread_id"]
    assert seen["lookup_batch"] == [["user", True, True], ["user", False, False], ["thread", True, False]]


def test_the_user_graph_gives_context_and_search_results_with_what_was_said(seen: dict[str, Any]) -> None:
    assert "Lisbon" in seen["user_graph_context"]
    assert any("Lisbon" in fact for fact in seen["user_search_edges"])
    assert seen["thread_summaries"] >= 1
    assert seen["observations"] == 0  # chronomem keeps no observations: an empty page, not an error


def test_named_graphs_their_episodes_and_search(seen: dict[str, Any]) -> None:
    graph = seen["graph"]
    assert graph["type"] == "graph" and graph["graph_id"] is None
    assert seen["graph_updated"][0].endswith("-kb2") and seen["graph_updated"][1] == "the knowledge base"
    assert seen["graph_list"] == ["graph", "user"]
    assert seen["episode_add"] == {"source": "text", "task": "succeeded"}
    assert seen["episode_get"] == "Grace Hopper joined Acme Corp as CTO in 2021."
    assert seen["episode_list"] == 1
    assert "Grace Hopper lives in Arlington, VA" in seen["search_edges"]
    assert seen["search_edges_dated"] == ["Grace Hopper lives in Arlington, VA"]  # valid_at < 2020-06
    assert "Grace Hopper" in seen["search_nodes"]
    assert seen["search_episodes"] == ["Grace Hopper joined Acme Corp as CTO in 2021."]
    assert "Arlington" in seen["graph_context"]


def test_an_episodes_metadata_is_merged_and_bad_input_changes_nothing(seen: dict[str, Any]) -> None:
    update = seen["episode_update"]
    assert update["first"] == {"source": "press", "year": 2021, "tags": ["cto", "acme"], "checked": True}
    assert update["merged"] == {"source": "press", "year": 2022, "tags": ["cto", "acme"]}  # null removes a key
    assert update["content"] == "Grace Hopper joined Acme Corp as CTO in 2021."
    for bad, words in (("eleven_keys", "at most 10 keys"), ("nested", "'place'")):
        refused = update[bad]
        assert (refused["status"], refused["type"], refused["error"]["code"]) == (400, "BadRequestError",
                                                                                   "bad_request"), bad
        assert words in refused["error"]["message"], bad
    assert update["other_project"] == 404
    assert update["after"] == update["merged"]  # neither the refused updates nor the stranger changed it


def test_edges_nodes_neighbours_subgraph_and_hyperedges(seen: dict[str, Any]) -> None:
    assert seen["edge"] == {"name": "LIVES_IN", "source": "Grace Hopper", "target": "Arlington",
                            "valid_at": "2020-01-01T00:00:00Z"}
    assert seen["edge_updated"] == "Grace Hopper lives in Arlington, VA"
    assert seen["edge_list"] and seen["edge_list_typed"] == ["LIVES_IN"]
    assert seen["node_get"] == "Grace Hopper" and seen["node_updated"] == "Computer scientist."
    assert seen["node_add"] == [["Ada Lovelace", "Grace Hopper"], "succeeded"]
    assert seen["node_added"] == [["Person"], "Wrote the first program.", True]
    assert "Arlington" in seen["neighbors"]
    subgraph = seen["subgraph"]
    assert {"Grace Hopper", "Arlington"} <= set(subgraph["nodes"]) and subgraph["edges"] >= 1
    assert not subgraph["truncated"]
    assert seen["hyperedge"] == {"members": 2, "listed": True}  # Grace and Alan at the summit: 3 nodes


def test_ontology_templates_clone_and_tasks(seen: dict[str, Any]) -> None:
    assert seen["ontology_default"] is True
    assert seen["ontology_set"] == [False, ["Person"], ["text"]]
    assert seen["ontology_inherit"] is True
    assert seen["template"]["listed"] and seen["template"]["get"].endswith("-facts")
    assert seen["templated_context"].startswith("KNOWN:") and "Lisbon" in seen["templated_context"]
    assert seen["template_deleted"] == 404
    assert seen["clone"]["task"] == "succeeded" and seen["clone"]["differs"] and seen["clone"]["edges"] >= 2
    assert seen["task_list"]["any"] and seen["task_get"] == "succeeded"


def test_deletes_answer_a_task_and_the_object_is_gone(seen: dict[str, Any]) -> None:
    for name in ("hyperedge_deleted", "edge_deleted", "node_deleted", "episode_deleted", "graph_deleted",
                 "thread_deleted", "user_deleted"):
        assert seen[name] == ["succeeded", 404], name


def test_batches_queue_messages_and_episodes_as_one_task(seen: dict[str, Any]) -> None:
    added, rejected, status = seen["batch_items"]
    assert (added, rejected, status) == (2, [2], "draft")  # the item naming an unknown graph is refused
    assert seen["batch_process"] == ["succeeded", "succeeded", ["succeeded", "succeeded"]]
    assert seen["batch_again"] == 409 and seen["batch_listed"]
    assert "Acme Corp opened an office in Oslo." in seen["batch_found"]


def test_project_and_user_settings(seen: dict[str, Any]) -> None:
    assert seen["project_ontology"] == [False, ["Pet"], True]
    assert seen["summary_instructions"] == [False, ["tone"], False]
    assert seen["thread_summary_list"] == 2  # the v4 thread and the native one
    assert seen["warm"] == "succeeded"
    assert seen["hyperedge_updated"] == "Grace, Alan and Ada met in 1950"
