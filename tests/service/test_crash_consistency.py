"""A thread's messages, its user's episodes and their tasks stay in agreement across SIGKILLs at
random points of ingestion: several users write while the server is killed and restarted again and
again, and every client resends what was not answered, as a client should.

The kill points come from a seeded RNG; the seed is printed (``-s`` shows it) and
``CHRONOMEM_KILL_SEED`` replays a run.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

import processes
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.store.factory import open_store
from service_support import create_key, free_port, start_live_server

USERS = ("ann", "bo", "cy", "dee")
KILLS = 5
BATCHES = 60  # at most, across all users: bounds the test's time whatever the machine's speed


@dataclass
class Writer:
    """Posts batches of messages to each user's thread, one request at a time, resending a batch
    with its uuids until it is answered 202 (the server may be dead or restarting meanwhile)."""

    client: httpx.Client
    rng: random.Random
    accepted: dict[str, list[str]] = field(default_factory=lambda: {u: [] for u in USERS})
    task_ids: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    retries: int = 0

    def run(self) -> None:
        for user in USERS:
            self._until_answered("/api/v3/users", {"user_id": user}, ok=(201, 409))
            self._until_answered("/api/v3/threads", {"thread_id": f"t-{user}", "user_id": user}, ok=(201, 409))
        for batch in range(BATCHES):
            if self.stop.is_set():
                return
            user = USERS[batch % len(USERS)]
            messages = [{"role": "user", "name": user.title(), "uuid": f"{user}-{batch}-{i}",
                         "content": f"{user.title()}: message {batch}.{i}"} for i in range(self.rng.randint(1, 3))]
            body = self._until_answered(f"/api/v3/threads/t-{user}/messages", {"messages": messages}, ok=(202,))
            self.accepted[user] += body["message_uuids"]
            self.task_ids.append(body["task_id"])
            time.sleep(0.05)

    def _until_answered(self, path: str, body: dict, *, ok: tuple[int, ...]) -> dict:
        while True:
            try:
                response = self.client.post(path, json=body)
            except httpx.TransportError:  # killed mid-request, or not up yet
                response = None
            if response is not None and response.status_code in ok:
                return dict(response.json()) if response.status_code != 409 else {}
            assert response is None or response.status_code >= 500, response.text
            self.retries += 1
            time.sleep(0.05)


def stored_episodes(data_dir: Path) -> dict[str, list[str]]:
    """Each user's episode ids, read from the store file itself once the server is stopped."""
    control = SQLiteControlPlane.open(data_dir / "control.db")
    try:
        project = control.get_project("crash")
        groups = {user: control.get_user(project.id, user).group_id for user in USERS}
    finally:
        control.close()

    async def read() -> dict[str, list[str]]:
        store = await open_store(f"sqlite:///{data_dir / 'graph.db'}")
        try:
            return {user: [e.id for e in await store.list_episodes(group)] for user, group in groups.items()}
        finally:
            await store.close()

    return asyncio.run(read())


@pytest.mark.integration
def test_sigkills_at_random_points_leave_every_thread_equal_to_its_episodes_and_accepted_messages(tmp_path):
    seed = int(os.environ.get("CHRONOMEM_KILL_SEED", random.randrange(2**32)))
    print(f"CHRONOMEM_KILL_SEED={seed}")
    rng = random.Random(seed)
    key = create_key(tmp_path, "crash")
    port = free_port()
    started = time.monotonic()
    # the server and each restart of it, stopped however the test ends (before the store file is read)
    with (processes.Scope(grace=20) as running,
          httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10,
                       headers={"Authorization": f"Bearer {key}"}) as client):
        server = running.add(start_live_server(tmp_path, port, latency=0.05))
        writer = Writer(client, random.Random(rng.random()))
        writing = threading.Thread(target=writer.run, daemon=True)
        writing.start()
        kills_mid_ingestion = 0
        for _ in range(KILLS):
            time.sleep(rng.uniform(0.05, 1.2))
            log = tmp_path / "processed.log"
            processed_so_far = len(log.read_text().split()) if log.exists() else 0
            kills_mid_ingestion += processed_so_far < sum(map(len, writer.accepted.values()))
            os.kill(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
            server = running.add(start_live_server(tmp_path, port, latency=0.05))
        writer.stop.set()
        writing.join(timeout=60)
        assert not writing.is_alive()
        accepted = sum(map(len, writer.accepted.values()))
        deadline = time.monotonic() + 120
        while (seen := task_statuses(client, writer.task_ids)) != {"done": len(writer.task_ids)}:
            assert time.monotonic() < deadline, seen
            time.sleep(0.1)
        listed = {user: [m["uuid"] for m in client.get(f"/api/v3/threads/t-{user}/messages").json()["messages"]]
                  for user in USERS}

    episodes = stored_episodes(tmp_path)
    processed = Counter((tmp_path / "processed.log").read_text().split())
    twice = [e for e, n in processed.items() if n > 1]
    print(f"kills={KILLS} (mid-ingestion: {kills_mid_ingestion}) accepted={accepted} "
          f"episodes={sum(map(len, episodes.values()))} messages={sum(map(len, listed.values()))} "
          f"duplicates={len(twice)} resent={writer.retries} tasks={len(writer.task_ids)} "
          f"seconds={time.monotonic() - started:.1f}")
    for user in USERS:
        assert listed[user] == writer.accepted[user], user  # every accepted message, in the order sent
        assert sorted(episodes[user]) == sorted(writer.accepted[user]), user  # and no episode besides
    assert twice == []
    assert set(processed) <= {m for ids in writer.accepted.values() for m in ids}  # a kill may beat the log line
    assert kills_mid_ingestion >= 1  # else the run tested restarts, not crashes


def task_statuses(client: httpx.Client, task_ids: list[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for task_id in task_ids:
        counts[client.get(f"/api/v3/tasks/{task_id}").json()["status"]] += 1
    return counts
