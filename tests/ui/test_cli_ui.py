"""``chronomem ui``: the explorer on loopback without keys, over the store's raw groups too."""

from __future__ import annotations

import subprocess

import httpx
import pytest
from explorer_support import chronomem, env, start_server

import processes
from service_support import free_port

pytestmark = pytest.mark.integration


def test_chronomem_ui_explores_the_raw_groups_of_the_store_without_a_key(tmp_path):
    added = subprocess.run(chronomem(tmp_path, "add-fact", "notes", "Ada", "LIVES_IN", "Lisbon", "Ada lives in Lisbon"),
                           env=env(), capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    port = free_port()
    with processes.stopping(start_server(tmp_path, port, "ui", "--no-open"), grace=15):
        base = f"http://127.0.0.1:{port}"
        who = httpx.get(f"{base}/api/v3/explorer/whoami").json()
        assert who["auth_required"] is False and "notes" in who["groups"]
        snapshot = httpx.get(f"{base}/api/v3/explorer/snapshot", params={"group": "notes"}).json()
        assert {n["name"] for n in snapshot["nodes"]} == {"Ada", "Lisbon"}
        assert [e["fact"] for e in snapshot["edges"]] == ["Ada lives in Lisbon"]
        assert httpx.get(f"{base}/ui/").status_code == 200
    assert f"http://127.0.0.1:{port}/ui/" in (tmp_path / "server.log").read_text()
