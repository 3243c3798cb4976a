"""The v4 compatibility API without a server: every route of the installed SDK is served or named
in the 501 table, and the pure parts (addresses, date filters) behave."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from chronomem.app.addresses import external_id, group_uuid, minted_id, object_id, wire_id
from chronomem.config.settings import Settings
from chronomem.service.app import create_app
from chronomem.service.compat.v4 import create_v4_app
from chronomem.service.compat.v4.models import DateFilterGroupIn, DateFilterIn, DateFiltersIn
from chronomem.service.compat.v4.routes.unsupported import sdk_call
from chronomem.service.compat.v4.search import dates_pass
from zep4_support import SCRIPTS, zep4_python


def sdk_routes() -> list[list[str]]:
    done = subprocess.run([str(zep4_python()), str(SCRIPTS / "sdk_routes.py")], capture_output=True, text=True,
                          check=True, timeout=60)
    routes: list[list[str]] = json.loads(done.stdout)
    return routes


def test_every_route_of_the_installed_sdk_is_served_or_answers_501_naming_its_call(tmp_path) -> None:
    document = create_v4_app(create_app(Settings(data_dir=tmp_path))).openapi()  # the 501 route is not in it
    routes = [(method.upper(), re.compile(re.sub(r"\{\w+\}", "[^/]+", path) + "$"))
              for path, methods in document["paths"].items() for method in methods]
    served, refused, unnamed = [], [], []
    for method, template, call in sdk_routes():
        path = "/" + re.sub(r"\{\w+\}", str(uuid.uuid4()), template)
        if any(method == m and pattern.match(path) for m, pattern in routes):
            served.append(call)
        elif sdk_call(method, path):
            refused.append(call)
        else:
            unnamed.append(f"{call}: {method} {template}")
    assert unnamed == []
    for call in ("user.create", "thread.add_messages", "thread.get_context", "graph.get_context", "graph.search_edges",
                 "graph.episode.add", "graph.episode.update", "graph.node.list_neighbors", "graph.get_subgraph",
                 "task.get", "lookup.batch"):
        assert call in served, call
    assert "project.get" in refused and len(served) >= 60


def test_user_and_graph_uuids_come_from_their_store_group() -> None:
    hex_id = uuid.uuid4().hex
    assert group_uuid(f"u_{hex_id}") == str(uuid.UUID(hex=hex_id))
    other = group_uuid("legacy-group")  # a group id of another form: a stable derived UUID
    assert other == group_uuid("legacy-group") and uuid.UUID(other)


def test_object_ids_show_as_canonical_uuids_and_read_back_in_either_form() -> None:
    hex_id = uuid.uuid4().hex
    shown = wire_id(hex_id)
    assert shown == str(uuid.UUID(hex=hex_id))
    assert object_id(shown) == object_id(hex_id) == hex_id
    assert wire_id("m-1") == object_id("m-1") == "m-1"  # a client-chosen v2 id stays as it is


def test_an_object_made_without_an_external_id_shows_none() -> None:
    minted = minted_id()
    assert external_id(minted) is None and external_id("alice") == "alice"


def at(day: int) -> datetime:
    return datetime(2024, 1, day, tzinfo=UTC)


@pytest.mark.parametrize(("groups", "expected"), [
    ([[("valid_at", "lt", at(10))]], True),
    ([[("valid_at", "lt", at(10)), ("invalid_at", "is_not_null", None)]], False),  # AND
    ([[("valid_at", "gt", at(10))], [("invalid_at", "is_null", None)]], True),  # OR
    ([[("valid_at", "eq", at(5))]], True),
    ([[("expired_at", "gte", at(1))]], False),  # a null never compares
])
def test_v4_date_filters_are_an_or_of_ands_across_fields(groups, expected) -> None:
    fact = SimpleNamespace(valid_at=at(5), invalid_at=None, created_at=at(6), expired_at=None)
    wanted = DateFiltersIn(any_of=[DateFilterGroupIn(all_of=[DateFilterIn(field=f, operator=o, value=v)
                                                             for f, o, v in group]) for group in groups])
    assert dates_pass(fact, wanted) is expected
