"""`chronomem serve --processes 2` on the embedded store: two server processes share the port and
the SQLite file, and whichever one answers sees what the other wrote."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import processes
from service_support import create_key, free_port


def children_of(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(line) for line in found.stdout.split()]


@pytest.mark.integration
def test_two_server_processes_share_one_sqlite_file(tmp_path: Path) -> None:
    key = create_key(tmp_path, "multi")
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    server = processes.start(
        [sys.executable, "-m", "chronomem.cli", "--data-dir", str(tmp_path), "--embedder", "hashing",
         "serve", "--processes", "2", "--no-workers", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    headers = {"Authorization": f"Bearer {key}", "Connection": "close"}  # a new connection, maybe a new process

    def call(method: str, path: str, **kwargs: object) -> httpx.Response:
        return httpx.request(method, f"http://127.0.0.1:{port}/api/v3{path}", headers=headers, timeout=10,
                             **kwargs)  # type: ignore[arg-type]

    with processes.stopping(server, grace=30):  # the server and both of its processes
        deadline = time.monotonic() + 60
        while len(children_of(server.pid)) < 2 or not _ready(port):
            assert server.poll() is None, server.communicate()[1]
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)
        assert call("POST", "/users", json={"user_id": "ann"}).status_code == 201
        for i, city in enumerate(("Lisbon", "Kyoto", "Oslo")):
            added = call("POST", "/graph/facts", json={
                "user_id": "ann", "source_node_name": "Ann", "fact_name": "VISITED", "target_node_name": city,
                "fact": f"Ann visited {city}", "valid_at": f"202{i}-05-01T00:00:00Z"})
            assert added.status_code == 201, added.text
            for _ in range(6):  # answered by either process: each must see every fact so far
                found = call("POST", "/graph/search", json={"user_id": "ann", "query": f"visited {city}"})
                assert found.status_code == 200, found.text
                assert f"Ann visited {city}" in [f["fact"] for f in found.json()["facts"]]


def _ready(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False
