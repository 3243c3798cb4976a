"""A schema-driven fuzz run (schemathesis over the OpenAPI document) against a real server finds no 5xx."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from chronomem.service.controlplane import SQLiteControlPlane
from service_support import free_port, start_live_server


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[tuple[str, str]]:
    """A running server with one key, one user ("alice"), a thread and a named graph to aim at."""
    data_dir = tmp_path_factory.mktemp("fuzz")
    control = SQLiteControlPlane.open(data_dir / "control.db")
    _, key = control.create_key("fuzz")
    control.close()
    port = free_port()
    server = start_live_server(data_dir, port)
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {key}"}
    httpx.post(f"{base}/api/v3/users", json={"user_id": "alice"}, headers=headers)
    httpx.post(f"{base}/api/v3/threads", json={"thread_id": "t1", "user_id": "alice"}, headers=headers)
    httpx.post(f"{base}/api/v3/graphs", json={"graph_id": "kb"}, headers=headers)
    try:
        yield base, key
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)


@pytest.mark.integration
def test_no_input_makes_the_server_fail(live):
    """Every operation of the OpenAPI document, with inputs generated from its schema (valid and
    not), authenticated as a real project: no response is a 5xx."""
    base, key = live
    schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
    headers = {"Authorization": f"Bearer {key}"}
    failures: list[str] = []
    operations = 0
    seen: dict[int, int] = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @given(case=operation.as_strategy())
        @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def fuzz(case) -> None:
            response = case.call(base_url=base, headers=headers, timeout=30)
            seen[response.status_code] = seen.get(response.status_code, 0) + 1
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:200]}")

        fuzz()
    assert sum(n for status, n in seen.items() if status < 300) > 20  # the run reached real handlers
    assert operations >= 25
    assert failures == []
