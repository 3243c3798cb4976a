"""Helpers shared by the service, CLI and MCP tests: a switchable scripted model, the running service,
and a real server process (started through ``processes``: the caller stops it, with ``processes.stopping``
or a ``processes.Scope``)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

import processes
from chronomem.config.settings import ApiLimits, WorkerSettings
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.llm.testing import FunctionModel
from chronomem.memory import Chronomem

LIVE_SERVER = Path(__file__).parent / "service" / "live_server.py"
ROOT = Path(__file__).resolve().parents[1]
FAST_WORKERS = WorkerSettings(concurrency=4, max_attempts=3, retry_base_s=0.01, poll_interval_s=0.05)
SMALL_LIMITS = ApiLimits(max_request_bytes=200_000)


class SwitchableModel:
    """A scripted model that extracts nothing, or fails like an unreachable provider when told to."""

    def __init__(self) -> None:
        self.failing = False
        self.model = FunctionModel(self._answer)

    def _answer(self, prompt, context):
        from chronomem.errors import ModelUnavailableError

        if self.failing:
            raise ModelUnavailableError("provider unreachable (scripted)")
        return prompt.answer()


@dataclass
class Service:
    client: httpx.AsyncClient
    control: SQLiteControlPlane
    memory: Chronomem
    model: SwitchableModel
    key_a: str
    key_b: str

    def as_(self, key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"} if key else {}


async def wait_for_task(
    service: Service, key: str, task_id: str, want: set[str], *, attempts: int | None = None, timeout: float = 10.0
) -> dict:
    """Poll the task until its status is one of ``want`` (after ``attempts`` attempts, if given)."""
    async with asyncio.timeout(timeout):
        while True:
            body = (await service.client.get(f"/api/v3/tasks/{task_id}", headers=service.as_(key))).json()
            if body["status"] in want and (attempts is None or body["attempts"] == attempts):
                return body
            await asyncio.sleep(0.02)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_live_server(
    data_dir: Path, port: int, *, latency: float = 0.0, workers: bool = True, model: str = "speakers",
    store: str | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``live_server.py`` (with or without its in-process workers; by default on the SQLite
    file in ``data_dir``) and wait until it is ready."""
    log = data_dir / "server.log"
    store_args = ["--store", store] if store else []
    with open(log, "ab") as sink:
        process = processes.start(
            [sys.executable, str(LIVE_SERVER), "--data-dir", str(data_dir), "--port", str(port),
             "--latency", str(latency), *store_args, "--role", "all" if workers else "api", "--model", model],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=sink,
        )
    with processes.stopped_on_error(process):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(f"server exited: {log.read_text()}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    return process
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError("server did not become ready")


def start_live_worker(
    data_dir: Path, *, latency: float = 0.0, store: str | None = None, shard: str = "0/1",
    hang_after: int | None = None,
) -> subprocess.Popen[str]:
    """Start ``live_server.py --role worker`` (a separate ingestion process; by default on the
    SQLite file in ``data_dir``) and wait until it runs; its output is piped, so a worker that
    refused to start can be read from. With ``hang_after`` its model stops answering once it has
    extracted that many episodes."""
    store_args = ["--store", store] if store else []
    if hang_after is not None:
        store_args += ["--hang-after", str(hang_after)]
    process = processes.start(
        [sys.executable, str(LIVE_SERVER), "--data-dir", str(data_dir), "--latency", str(latency), "--shard", shard,
         *store_args, "--role", "worker"],  # "--role worker" last: a test swaps it for another role
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    with processes.stopped_on_error(process):
        assert process.stdout is not None
        first = process.stdout.readline()  # "worker ready", or the start of a traceback
        if "worker ready" not in first:
            rest = process.communicate(timeout=30)[0]
            raise AssertionError(f"worker did not start: {first}{rest}")
    return process


def statuses(client: httpx.Client, task_ids: list[str]) -> Counter[str]:
    """How many episodes of these tasks are in each queue state."""
    counts: Counter[str] = Counter()
    for task_id in task_ids:
        for episode in client.get(f"/api/v3/tasks/{task_id}").json()["episodes"]:
            counts[episode["status"]] += 1
    return counts


def queue_conversations(client: httpx.Client, users: Sequence[str], per_user: int = 6) -> tuple[list[str], list[str]]:
    """Create each user with a thread ``t-<user>`` and post ``per_user`` messages to it; returns the
    accepted message ids and the task ids."""
    accepted: list[str] = []
    task_ids: list[str] = []
    for user in users:
        assert client.post("/api/v3/users", json={"user_id": user}).status_code == 201
        client.post("/api/v3/threads", json={"thread_id": f"t-{user}", "user_id": user})
        response = client.post(f"/api/v3/threads/t-{user}/messages", json={"messages": [
            {"role": "user", "name": user.title(), "content": f"message {i} from {user}"} for i in range(per_user)]})
        assert response.status_code == 202
        accepted += response.json()["message_uuids"]
        task_ids.append(response.json()["task_id"])
    return accepted, task_ids


def create_key(data_dir: Path, project: str) -> str:
    """An API key of ``project`` in the control plane a server over ``data_dir`` will use."""
    control = SQLiteControlPlane.open(data_dir / "control.db")
    try:
        return control.create_key(project)[1]
    finally:
        control.close()
