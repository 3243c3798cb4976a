"""`serve --no-workers` beside a separate worker process, on one embedded SQLite file: the server
finds what the worker extracts, a second worker is refused, and a worker killed with SIGKILL
mid-ingestion is replaced without losing or repeating an episode."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter

import httpx
import pytest

import processes
from service_support import create_key, free_port, queue_conversations, start_live_server, start_live_worker, statuses

USERS = ("ann", "bo", "cy")


def wait_for(client: httpx.Client, task_ids: list[str], done: int, timeout: float) -> Counter[str]:
    deadline = time.monotonic() + timeout
    while (seen := statuses(client, task_ids))["done"] < done and time.monotonic() < deadline:
        time.sleep(0.05)
    return seen


def entity_names(client: httpx.Client, user: str) -> set[str]:
    found = client.post("/api/v3/graph/search", json={"user_id": user, "query": user.title(), "scopes": ["nodes"]})
    assert found.status_code == 200, found.text
    return {e["name"] for e in found.json()["entities"]}


@pytest.mark.integration
def test_a_server_without_workers_and_a_separate_worker_share_one_sqlite_file(tmp_path):
    key = create_key(tmp_path, "split")
    port = free_port()
    # the server and each worker, stopped however the test ends
    with (processes.Scope(grace=20) as running,
          httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10,
                       headers={"Authorization": f"Bearer {key}"}) as client):
        running.add(start_live_server(tmp_path, port, latency=0.3, workers=False))
        accepted, task_ids = queue_conversations(client, USERS)
        for user in USERS:
            assert entity_names(client, user) == set()  # builds the server's indexes before any extraction
        time.sleep(0.5)
        assert statuses(client, task_ids) == Counter({"pending": len(accepted)})  # the server extracts nothing

        # A slow model (1 s a call, 6 episodes a user in order) keeps the first worker busy for at
        # least 6 s, so the kill below lands mid-ingestion however loaded the machine is.
        worker = running.add(start_live_worker(tmp_path, latency=1.0))
        before_kill = wait_for(client, task_ids, 3, timeout=60)
        assert 3 <= before_kill["done"] < len(accepted), before_kill  # killed mid-ingestion
        os.kill(worker.pid, signal.SIGKILL)
        worker.communicate(timeout=10)

        worker = running.add(start_live_worker(tmp_path, latency=0.3))  # the lock died with the killed process
        # The replacement holds the queue lock until it is stopped, whenever this second one starts.
        second = subprocess.run(  # one ingestion process per SQLite file
            [*worker.args[:-2], "--role", "worker"], capture_output=True, text=True, timeout=60
        )
        assert second.returncode != 0 and "already processing the episode queue" in second.stdout + second.stderr
        assert wait_for(client, task_ids, len(accepted), timeout=60) == Counter({"done": len(accepted)})
        for user in USERS:  # the server's search indexes took in what the worker wrote
            assert user.title() in entity_names(client, user)
    processed = (tmp_path / "processed.log").read_text().split()
    assert set(processed) <= set(accepted)
    assert [e for e, n in Counter(processed).items() if n > 1] == []  # nothing processed twice
