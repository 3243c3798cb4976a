"""Soak: the service for a set time under mixed load, its worker restarted every minute (issue 32).

One API server (``chronomem serve --no-workers`` layout) and one ingestion worker over an embedded
SQLite store in a temporary directory; the heuristic stand-in answers every model call after
``--latency`` seconds. ``--clients`` clients, each pausing ``--pause`` seconds between requests,
send messages (30%), context queries (50%) and searches (20%) for ``--users`` users. Every
``--restart-every`` seconds the worker is stopped (SIGTERM, or SIGKILL every other time) and started
again. The resident memory of both processes is sampled every 5 s.

    .venv/bin/python bench/soak.py [--minutes 10] [--clients 12] [--restart-every 60]

Prints ``name: value`` lines: the API server's memory growth per hour (a least-squares slope over
the samples after the first minute) and the worker's peak in each life (it restarts), p95 latency per
minute of each request kind, errors, and, after the drain, ``lost`` (acknowledged messages missing
from their thread or the store) and ``unprocessed`` (tasks not done).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from service_tasks import drain

KINDS = ("message", "context", "search")


def serve(data_dir: Path, port: int, latency: float, role: str) -> None:
    """In the child: the API server (role "api") or the worker (role "worker")."""
    from chronomem.app.workers import run_until_stopped
    from chronomem.config.settings import Settings, WorkerSettings
    from chronomem.embed.testing import HashingEmbedder
    from chronomem.heuristic import heuristic_model
    from chronomem.memory import Chronomem
    from chronomem.service.app import create_app, serve_app
    from chronomem.store.factory import open_store

    async def main() -> None:
        settings = Settings(data_dir=data_dir, workers=WorkerSettings(concurrency=4, poll_interval_s=0.2))
        memory = Chronomem(
            store=await open_store(settings.resolved_store_url),
            embedder=HashingEmbedder(),
            llm=heuristic_model(latency_s=latency),
            settings=settings,
        )
        if role == "api":
            await serve_app(create_app(memory, workers=False), port=port, log_level="warning")
            return
        await run_until_stopped(memory)
        await memory.close()

    asyncio.run(main())


def spawn(data_dir: Path, port: int, latency: float, role: str) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        __file__,
        "--serve",
        role,
        "--data-dir",
        str(data_dir),
        "--port",
        str(port),
        "--latency",
        str(latency),
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def slope_per_hour(samples: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) samples, in MB per hour."""
    if len(samples) < 2:
        return float("nan")
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_m = sum(m for _, m in samples) / n
    var = sum((t - mean_t) ** 2 for t, _ in samples)
    cov = sum((t - mean_t) * (m - mean_m) for t, m in samples)
    return cov / var * 3600 if var else float("nan")


def p95(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


class Load:
    def __init__(self, users: int, pause: float) -> None:
        self.users, self.pause = users, pause
        self.rng = random.Random(32)
        self.acked: list[tuple[int, str, str]] = []  # (user, message id, task id)
        self.latency: dict[tuple[int, str], list[float]] = defaultdict(list)  # (minute, kind) -> seconds
        self.errors: Counter[str] = Counter()

    async def client(self, http: httpx.AsyncClient, start: float, until: float) -> None:
        n = 0
        while time.monotonic() < until:
            n += 1
            user, roll = self.rng.randrange(self.users), self.rng.random()
            kind = "message" if roll < 0.3 else "context" if roll < 0.8 else "search"
            began = time.monotonic()
            try:
                if kind == "message":
                    answer = await http.post(
                        f"/api/v3/threads/t{user}/messages",
                        json={
                            "messages": [
                                {
                                    "role": "user",
                                    "name": f"User{user}",
                                    "content": f"User{user} moved to City{n % 50} and works at Firm{n % 30}.",
                                }
                            ]
                        },
                    )
                elif kind == "context":
                    answer = await http.get(f"/api/v3/users/u{user}/context", params={"query": "Where do I live?"})
                else:
                    answer = await http.post("/api/v3/graph/search", json={"user_id": f"u{user}", "query": "work"})
                if answer.status_code >= 400:
                    self.errors[f"{kind} {answer.status_code}"] += 1
                elif kind == "message":
                    body = answer.json()
                    self.acked.append((user, body["message_uuids"][0], body["task_id"]))
            except httpx.HTTPError as exc:
                self.errors[f"{kind} {type(exc).__name__}"] += 1
            self.latency[int((began - start) // 60), kind].append(time.monotonic() - began)
            await asyncio.sleep(self.pause)


async def restart_worker(state: dict, data_dir: Path, latency: float, every: float, until: float) -> None:
    hard = False
    while time.monotonic() + every < until:
        await asyncio.sleep(every)
        worker = state["worker"]
        os.killpg(worker.pid, signal.SIGKILL if hard else signal.SIGTERM)
        await asyncio.to_thread(worker.wait)
        state["restarts"] += 1
        state["worker"] = spawn(data_dir, 0, latency, "worker")
        hard = not hard


async def sample_memory(state: dict, start: float, until: float) -> None:
    while time.monotonic() < until:
        now = time.monotonic() - start
        api = rss_mb(state["api"].pid)
        worker = rss_mb(state["worker"].pid)
        if api is not None:
            state["api_rss"].append((now, api))
        if worker is not None:
            state["worker_rss"].append((now, worker, state["restarts"]))
        await asyncio.sleep(5)


async def setup(data_dir: Path, users: int) -> str:
    from chronomem.controlplane.sqlite import SQLiteControlPlane
    from chronomem.store.factory import open_store

    # the schema is made here: two processes opening a new file at once both migrate it, and one fails
    await (await open_store(f"sqlite:///{data_dir / 'chronomem.db'}")).close()
    control = SQLiteControlPlane.open(data_dir / "control.db")
    _, key = control.create_key("soak")
    project = control.get_project("soak")
    for user in range(users):
        control.create_user(project.id, f"u{user}")
        control.create_thread(project.id, f"t{user}", f"u{user}")
    control.close()
    return key


async def check(data_dir: Path, acked: list[tuple[int, str, str]]) -> int:
    """Acknowledged messages missing from their thread or the store."""
    from chronomem.controlplane.sqlite import SQLiteControlPlane
    from chronomem.store.factory import open_store

    control = SQLiteControlPlane.open(data_dir / "control.db")
    store = await open_store(f"sqlite:///{data_dir / 'chronomem.db'}")
    project = control.get_project("soak")
    lost = 0
    try:
        by_user: dict[int, set[str]] = defaultdict(set)
        for user, message, _ in acked:
            by_user[user].add(message)
        for user, messages in by_user.items():
            group = control.get_user(project.id, f"u{user}").group_id
            listed = set(control.message_ids(project.id, f"t{user}"))
            stored = {e.id for e in await store.list_episodes(group)}
            lost += len(messages - (listed & stored))
    finally:
        control.close()
        await store.close()
    return lost


async def run(args: argparse.Namespace) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="chronomem-soak-"))
    key = await setup(data_dir, args.users)
    port = _free_port()
    state: dict = {
        "api": spawn(data_dir, port, args.latency, "api"),
        "worker": spawn(data_dir, 0, args.latency, "worker"),
        "restarts": 0,
        "api_rss": [],
        "worker_rss": [],
    }
    try:
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", timeout=30, headers={"Authorization": f"Bearer {key}"}
        ) as http:
            await _wait_ready(http)
            load = Load(args.users, args.pause)
            start = time.monotonic()
            until = start + args.minutes * 60
            await asyncio.gather(
                *(load.client(http, start, until) for _ in range(args.clients)),
                restart_worker(state, data_dir, args.latency, args.restart_every, until),
                sample_memory(state, start, until),
            )
            pending = await drain(http, {task for _, _, task in load.acked}, args.drain)
        lost = await check(data_dir, load.acked)
    finally:
        for child in (state["api"], state["worker"]):
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
                child.wait(timeout=30)
    report(args, load, state, lost, pending)


def report(args: argparse.Namespace, load: Load, state: dict, lost: int, pending: set[str]) -> None:
    api_after_warmup = [(t, m) for t, m in state["api_rss"] if t >= 60] or state["api_rss"]
    lives = defaultdict(list)
    for t, m, life in state["worker_rss"]:
        lives[life].append((t, m))
    peaks = [max(m for _, m in samples) for samples in lives.values()]
    print(f"minutes: {args.minutes}")
    print(f"requests: {sum(len(v) for v in load.latency.values())}")
    print(f"acknowledged: {len(load.acked)}")
    print(f"worker_restarts: {state['restarts']}")
    first = state["api_rss"][0][1] if state["api_rss"] else float("nan")
    last = state["api_rss"][-1][1] if state["api_rss"] else float("nan")
    print(f"api_rss_mb: {first:.0f} -> {last:.0f}")
    print(f"api_memory_growth_mb_per_hour: {slope_per_hour(api_after_warmup):.1f}")
    print(f"worker_peak_rss_mb_per_life: {' '.join(f'{m:.0f}' for m in peaks)}")
    minutes = sorted({minute for minute, _ in load.latency})
    for kind in KINDS:
        series = " ".join(f"{1000 * p95(load.latency[m, kind]):.0f}" for m in minutes)
        print(f"p95_ms_by_minute {kind}: {series}")
    print(f"errors: {sum(load.errors.values())} {dict(load.errors)}")
    print(f"lost: {lost}")
    print(f"unprocessed: {len(pending)}")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_ready(http: httpx.AsyncClient) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if (await http.get("/readyz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit("the API server did not start")
        await asyncio.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=12)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--pause", type=float, default=0.1, help="seconds each client waits between requests")
    parser.add_argument("--restart-every", type=float, default=60.0, help="seconds between worker restarts")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per model call (the stand-in)")
    parser.add_argument("--drain", type=float, default=120.0, help="seconds to wait for ingestion afterwards")
    parser.add_argument("--serve", choices=["api", "worker"], help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.data_dir, args.port, args.latency, args.serve)
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
