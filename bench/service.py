"""Load run of the HTTP service on loopback (issue 7).

Real ``uvicorn`` server processes over one embedded SQLite file (hashing embedder; the ingestion
heuristic standing in for a model — ``heuristic_model``, not an LLM — answering every call after
``--latency`` seconds) serve ``--users`` users, each seeded with ``--seed`` messages of history.
By default two server processes share the port and ingestion runs in one separate worker process
(``chronomem serve --no-workers --processes 2`` beside ``chronomem worker``), the layout that fits
this 2-core machine; ``--api-processes 1`` runs one server process, and ``--api-processes 1
--ingestion in-process`` the single process of ``chronomem serve``. ``--clients`` concurrent clients
(aiohttp, in this process) then send, for ``--duration`` seconds, 80% context queries
(``GET /users/{id}/context``) and 20% message adds (``POST /threads/{id}/messages``), each client
at full speed (closed loop: the next request leaves when the previous answer arrives) or, with
``--rate``, at a fixed pace. Afterwards the bench waits for the workers to finish and counts every
accepted message that is not processed.

    .venv/bin/python bench/service.py [--duration 60] [--clients 20] [--users 100] [--latency 0.2]
                                      [--api-processes 2] [--ingestion separate|in-process] [--rate R]

Prints ``name: value`` lines: requests_per_s, the CPU per request and average share of a core of
the servers, the worker and the load generator, per-endpoint p50/p95/p99 in ms, errors,
accepted_messages, unprocessed_messages, drain_s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import aiohttp
import httpx

from chronomem.config.settings import Settings, WorkerSettings
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.domain import Episode, EpisodeKind
from chronomem.embed.testing import HashingEmbedder
from chronomem.heuristic import heuristic_model
from chronomem.memory import Chronomem
from chronomem.store.factory import open_store

PEOPLE = ["Maya", "Tom", "Priya", "Lukas", "Sofia", "Kenji", "Amara", "Diego", "Nora", "Elif"]
PLACES = ["Lisbon", "Kyoto", "Nairobi", "Oslo", "Lima", "Hanoi", "Dublin", "Austin", "Porto", "Seoul"]
THINGS = ["guitar", "bike", "novel", "camera", "garden", "sourdough", "chess", "kayak", "piano", "tent"]
TEMPLATES = [
    "I went to {place} with {person} last weekend.",
    "{person} gave me a {thing} for my birthday.",
    "I'm planning to move to {place} next spring.",
    "My friend {person} started learning the {thing}.",
    "I lost my {thing} somewhere in {place}.",
    "{person} and I are training for a race in {place}.",
]
QUESTIONS = [
    "Where did I travel recently?", "Who gave me a present?", "What hobbies does my friend have?",
    "Where am I planning to move?", "What did I lose?", "Who am I training with?",
]


def sentence(rng: random.Random) -> str:
    return rng.choice(TEMPLATES).format(
        person=rng.choice(PEOPLE), place=rng.choice(PLACES), thing=rng.choice(THINGS)
    )


# -- the server process ------------------------------------------------------------------------------


def serve(data_dir: Path, port: int | None, latency: float, workers: int, role: str) -> None:
    """Run the server (role "all": with in-process workers; "api": without) or, for role "worker",
    a separate ingestion process on the same file (called in the child process)."""
    from chronomem.app.workers import run_until_stopped
    from chronomem.service.app import create_app, serve_app

    async def main() -> None:
        settings = Settings(data_dir=data_dir, workers=WorkerSettings(concurrency=workers, poll_interval_s=0.2))
        store = await open_store(f"sqlite:///{data_dir / 'graph.db'}")
        model = heuristic_model(latency_s=latency)
        memory = Chronomem(store=store, embedder=HashingEmbedder(), llm=model, settings=settings)
        if role != "worker":
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # API processes share the port
            listener.bind(("127.0.0.1", port or 0))
            await serve_app(create_app(memory, workers=role == "all"), log_level="warning", sockets=[listener])
            return
        await run_until_stopped(memory)  # as `chronomem worker`
        await memory.close()

    run_loop(main())


def run_loop(coro: Any) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
    else:
        uvloop.run(coro)


async def seed(data_dir: Path, users: int, per_user: int) -> str:
    """Users, threads and their history (ingested with an instant model); returns an API key."""
    control = SQLiteControlPlane.open(data_dir / "control.db")
    _, key = control.create_key("bench")
    project = control.get_project("bench")
    rng = random.Random(7)
    episodes = []
    for u in range(users):
        user = control.create_user(project.id, f"user-{u}")
        control.create_thread(project.id, f"thread-{u}", user.user_id)
        for _ in range(per_user):
            episodes.append(Episode(group_id=user.group_id, kind=EpisodeKind.MESSAGE, content=sentence(rng),
                                    speaker=f"User{u}", role="user"))
    control.close()
    store = await open_store(f"sqlite:///{data_dir / 'graph.db'}")
    async with Chronomem(store=store, embedder=HashingEmbedder(), llm=heuristic_model()) as memory:
        await memory.add_episodes(episodes)
    return key


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_servers(data_dir: Path, port: int, latency: float, workers: int, role: str,
                  count: int) -> list[subprocess.Popen[bytes]]:
    """Start ``count`` server processes listening on one port and wait until all answer."""
    processes = [spawn(data_dir, latency, workers, role, "--port", str(port)) for _ in range(count)]
    deadline, answered = time.monotonic() + 60, 0
    while time.monotonic() < deadline and answered < 10 * count:
        try:  # a fresh connection each time: the kernel spreads them over the processes' sockets
            ok = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200
        except httpx.TransportError:
            ok = False
        answered = answered + 1 if ok else 0
        if not ok:
            time.sleep(0.1)
    if answered < 10 * count:
        for process in processes:
            process.kill()
        raise SystemExit("server did not start")
    return processes


def spawn(data_dir: Path, latency: float, workers: int, role: str, *extra: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, __file__, "--serve", "--data-dir", str(data_dir), "--latency", str(latency),
               "--workers", str(workers), "--role", role, *extra]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL)


# -- load --------------------------------------------------------------------------------------------


class Load:
    def __init__(self, users: int, seed_value: int, *, add_share: float, rate: float | None) -> None:
        self.users = users
        self.add_share = add_share
        self.interval = 1.0 / rate if rate else 0.0  # per client; 0 = closed loop, no pause
        self.rng = random.Random(seed_value)
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.tasks: list[str] = []
        self.accepted = 0

    async def client(self, http: aiohttp.ClientSession, until: float) -> None:
        next_at = time.monotonic() + self.rng.random() * self.interval
        while time.monotonic() < until:
            if self.interval:
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                next_at += self.interval
            user = self.rng.randrange(self.users)
            if self.rng.random() >= self.add_share:
                name = "context"
                request = http.get(f"/api/v3/users/user-{user}/context",
                                   params={"query": self.rng.choice(QUESTIONS)})
            else:
                name = "add_messages"
                body = {"messages": [{"role": "user", "name": f"User{user}", "content": sentence(self.rng)}]}
                request = http.post(f"/api/v3/threads/thread-{user}/messages", json=body)
            started = time.perf_counter()
            try:
                async with request as response:
                    payload = await response.json() if response.status < 400 else None
            except aiohttp.ClientError:
                self.errors[name] += 1
                continue
            self.latencies[name].append(time.perf_counter() - started)
            if payload is None:
                self.errors[name] += 1
            elif name == "add_messages":
                self.tasks.append(payload["task_id"])
                self.accepted += len(payload["message_uuids"])


async def unprocessed(http: aiohttp.ClientSession, task_ids: list[str]) -> int:
    async def statuses(task_id: str) -> list[str]:
        async with http.get(f"/api/v3/tasks/{task_id}") as response:
            return [e["status"] for e in (await response.json())["episodes"]]

    pending = 0
    for start in range(0, len(task_ids), 50):
        for found in await asyncio.gather(*(statuses(t) for t in task_ids[start:start + 50])):
            pending += sum(status not in ("done", "unextracted") for status in found)
    return pending


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="chronomem-bench-") as tmp:
        data_dir = Path(tmp)
        key = await seed(data_dir, args.users, args.seed)
        port = free_port()
        separate = args.ingestion == "separate" or args.api_processes > 1
        servers = start_servers(data_dir, port, args.latency, args.workers, "api" if separate else "all",
                                args.api_processes)
        worker = spawn(data_dir, args.latency, args.workers, "worker") if separate else None
        try:
            load = Load(args.users, 11, add_share=args.add_share, rate=args.rate)
            # aiohttp (C HTTP parser) as the load generator: it shares the machine with the server,
            # and httpx spent about 1.3 ms of CPU per request where aiohttp spends a fraction of it.
            connector = aiohttp.TCPConnector(limit=args.clients + 5)
            async with aiohttp.ClientSession(f"http://127.0.0.1:{port}", connector=connector,
                                             timeout=aiohttp.ClientTimeout(total=60),
                                             headers={"Authorization": f"Bearer {key}"}) as http:
                started, cpu_before = time.monotonic(), sum(cpu_seconds(p.pid) for p in servers)
                worker_cpu_before = cpu_seconds(worker.pid) if worker else 0.0
                client_cpu_before = time.process_time()
                until = started + args.duration
                await asyncio.gather(*(load.client(http, until) for _ in range(args.clients)))
                elapsed = time.monotonic() - started
                server_cpu = sum(cpu_seconds(p.pid) for p in servers) - cpu_before
                client_cpu = time.process_time() - client_cpu_before
                worker_cpu = cpu_seconds(worker.pid) - worker_cpu_before if worker else 0.0
                drain_started = time.monotonic()
                left = await unprocessed(http, load.tasks)
                while left and time.monotonic() - drain_started < args.drain_timeout:
                    await asyncio.sleep(1.0)
                    left = await unprocessed(http, load.tasks)
                drain_s = time.monotonic() - drain_started
        finally:
            for process in (*servers, worker):
                if process is not None:
                    process.send_signal(signal.SIGTERM)
                    process.wait(timeout=30)
    total = sum(len(v) for v in load.latencies.values())
    print(f"duration_s: {elapsed:.1f}")
    print(f"clients: {args.clients}")
    print(f"users: {args.users}")
    print(f"model_latency_s: {args.latency}")
    print(f"offered_rate_per_client: {args.rate or 'closed loop'}")
    print(f"requests: {total}")
    print(f"requests_per_s: {total / elapsed:.1f}")
    print(f"ingestion: {'separate' if worker else 'in-process'}")
    print(f"api_processes: {args.api_processes}")
    # In-process ingestion counts in the server's CPU; a separate worker's is reported on its own.
    print(f"server_cpu_ms_per_request: {server_cpu / total * 1000:.2f}")
    print(f"server_cpu_share: {server_cpu / elapsed:.2f}")  # cores the server process got on average
    if worker is not None:
        print(f"worker_cpu_ms_per_request: {worker_cpu / total * 1000:.2f}")
        print(f"worker_cpu_share: {worker_cpu / elapsed:.2f}")
    print(f"client_cpu_ms_per_request: {client_cpu / total * 1000:.2f}")  # the load generator's own cost
    print(f"client_cpu_share: {client_cpu / elapsed:.2f}")
    for name in ("context", "add_messages"):
        values = load.latencies[name]
        print(f"{name}_requests: {len(values)}")
        for q in (50, 95, 99):
            print(f"{name}_p{q}_ms: {percentile(values, q / 100):.1f}")
        print(f"{name}_mean_ms: {statistics.fmean(values) * 1000 if values else float('nan'):.1f}")
    print(f"errors: {sum(load.errors.values())}")
    print(f"accepted_messages: {load.accepted}")
    print(f"unprocessed_messages: {left}")
    print(f"drain_s: {drain_s:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--seed", type=int, default=10, help="history messages per user before the run")
    parser.add_argument("--latency", type=float, default=0.2, help="model latency per call (s)")
    parser.add_argument("--add-share", type=float, default=0.2, help="share of requests that add a message")
    parser.add_argument("--rate", type=float, default=None,
                        help="requests per second per client (default: closed loop, each client at full speed)")
    parser.add_argument("--workers", type=int, default=32, help="groups ingested in parallel")
    parser.add_argument("--api-processes", type=int, default=2,
                        help="API server processes sharing the port (more than one implies --ingestion separate)")
    parser.add_argument("--ingestion", choices=["in-process", "separate"], default="separate",
                        help="workers inside the server, or one `chronomem worker`-style process beside it")
    parser.add_argument("--drain-timeout", type=float, default=600.0)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--role", default="all", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.data_dir, args.port, args.latency, args.workers, args.role)
    else:
        run_loop(run(args))


if __name__ == "__main__":
    main()
