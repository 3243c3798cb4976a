"""A real uvicorn server killed with SIGKILL mid-ingestion loses nothing, resumes on restart, and
processes no episode twice."""

from __future__ import annotations

import os
import signal
import time
from collections import Counter

import httpx
import pytest

import processes
from service_support import create_key, free_port, queue_conversations, start_live_server, statuses


@pytest.mark.integration
def test_sigkill_mid_ingestion_loses_nothing_and_processes_nothing_twice(tmp_path):
    key = create_key(tmp_path, "kill-test")
    port = free_port()
    headers = {"Authorization": f"Bearer {key}"}
    with processes.stopping(start_live_server(tmp_path, port, latency=0.3)) as server:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=10) as client:
            accepted, task_ids = queue_conversations(client, ("ann", "bo", "cy"))
            deadline = time.monotonic() + 30
            while statuses(client, task_ids)["done"] < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            before_kill = statuses(client, task_ids)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=10)
    assert 3 <= before_kill["done"] < len(accepted), before_kill  # killed mid-ingestion

    with (processes.stopping(start_live_server(tmp_path, port, latency=0.3), grace=20),
          httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=10) as client):
        deadline = time.monotonic() + 60
        while statuses(client, task_ids)["done"] < len(accepted) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert statuses(client, task_ids) == Counter({"done": len(accepted)})
        stored = [m["uuid"] for user in ("ann", "bo", "cy")
                  for m in client.get(f"/api/v3/threads/t-{user}/messages").json()["messages"]]
    assert sorted(stored) == sorted(accepted)  # every accepted message survived the kill
    processed = (tmp_path / "processed.log").read_text().split()
    assert set(processed) <= set(accepted)
    assert [e for e, n in Counter(processed).items() if n > 1] == []  # nothing processed twice
