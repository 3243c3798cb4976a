"""Failover under load: a FalkorDB cluster with one replica per shard loses a primary (issue 32).

A 3-shard cluster (``--shards``) with one replica per shard on loopback, ``cluster-node-timeout``
5 s. One API server (``chronomem serve --no-workers`` as a child process) and one ingestion worker
(``chronomem worker``; the heuristic stand-in answers every model call after ``--latency`` seconds,
and the worker appends each episode it extracts to a log) share it. ``--clients`` clients send
messages (70%) and searches (30%) to ``--users`` users' threads. After ``--kill-after`` seconds the
primary of one shard is SIGKILLed (``--kill control``: the shard holding the control plane, so
every write waits for it; ``--kill data``: another one); Redis Cluster promotes its replica. The
load runs ``--duration`` seconds in all; then the bench waits for ingestion to finish and checks
every acknowledged message.

    .venv/bin/python bench/failover.py [--duration 30] [--kill-after 8] [--kill control|data]

Prints ``name: value`` lines:

- ``failover_seconds``: from the kill until writes and searches both succeed again (for each kind,
  the first request started after the kill that succeeded with no failure of that kind after it;
  the later of the two);
- ``acknowledged_lost``: messages answered 202 whose episode is not in the store afterwards, or not
  in its thread (replication is asynchronous: what the dead primary acknowledged but had not sent
  to its replica is lost);
- ``processed_twice``: episodes the worker extracted more than once (a ``done`` status lost with the
  primary makes the episode pending again);
- ``errors_seen_by_clients``: requests that failed (transport errors and 5xx), and their kinds;
- ``unprocessed``: acknowledged messages whose task did not reach ``done`` within the drain.
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
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chronomem.store.falkordb.server import CLUSTER_SLOTS, ServerProcess, free_port
from service_tasks import drain

NODE_TIMEOUT_MS = 5000


# -- the cluster -------------------------------------------------------------------------------------


def start_replicated_cluster(directory: Path, shards: int) -> tuple[list[ServerProcess], list[ServerProcess]]:
    """``shards`` primaries owning equal slot ranges, each with one replica; returns (primaries, replicas)."""
    import redis

    nodes = [ServerProcess(free_port(), directory / f"node-{i}", cluster=True) for i in range(2 * shards)]
    for node in nodes:
        node.start()
    clients = [redis.Redis(host="127.0.0.1", port=n.port, decode_responses=True) for n in nodes]
    try:
        for client in clients:
            client.config_set("cluster-node-timeout", NODE_TIMEOUT_MS)
        share = CLUSTER_SLOTS // shards
        for i in range(shards):
            last = CLUSTER_SLOTS - 1 if i == shards - 1 else (i + 1) * share - 1
            clients[i].execute_command("CLUSTER", "ADDSLOTSRANGE", i * share, last)
        for client in clients[1:]:
            client.execute_command("CLUSTER", "MEET", "127.0.0.1", nodes[0].port)
        _until(lambda: all(int(c.cluster("info")["cluster_known_nodes"]) == len(nodes) for c in clients), "meet")
        for i in range(shards):
            primary_id = clients[i].execute_command("CLUSTER", "MYID")
            clients[shards + i].execute_command("CLUSTER", "REPLICATE", primary_id)
        _until(
            lambda: (
                all(c.cluster("info")["cluster_state"] == "ok" for c in clients)
                and all(c.info("replication").get("master_link_status") == "up" for c in clients[shards:])
            ),
            "replication",
        )
    finally:
        for client in clients:
            client.close()
    return nodes[:shards], nodes[shards:]


def _until(check: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"cluster: {what} did not happen in {timeout}s")
        time.sleep(0.1)


def primary_of_slot(nodes: list[ServerProcess], slot: int) -> ServerProcess:
    import redis

    client = redis.Redis(host="127.0.0.1", port=nodes[0].port, decode_responses=True)
    try:
        for first, last, primary, *_ in client.execute_command("CLUSTER", "SLOTS"):
            if int(first) <= slot <= int(last):
                return next(n for n in nodes if n.port == int(primary[1]))
    finally:
        client.close()
    raise SystemExit(f"no primary owns slot {slot}")


# -- the service (child processes) --------------------------------------------------------------------


def serve(url: str, port: int, latency: float, role: str, log: Path) -> None:
    """In the child: the API server (role "api") or the worker (role "worker")."""
    from chronomem.app.workers import run_until_stopped
    from chronomem.config.settings import Settings, WorkerSettings
    from chronomem.embed.testing import HashingEmbedder
    from chronomem.heuristic import heuristic_model
    from chronomem.memory import Chronomem
    from chronomem.service.app import create_app, serve_app
    from chronomem.store.factory import open_store

    async def main() -> None:
        settings = Settings(store_url=url, workers=WorkerSettings(concurrency=4, poll_interval_s=0.2))
        memory = Chronomem(
            store=await open_store(url),
            embedder=HashingEmbedder(),
            llm=heuristic_model(latency_s=latency),
            settings=settings,
        )
        if role == "api":
            await serve_app(create_app(memory, workers=False), port=port, log_level="warning")
            return
        extract = memory.process

        async def logged(group_id: str, episode_id: str) -> Any:
            result = await extract(group_id, episode_id)
            if not result.skipped:
                with open(log, "a", encoding="utf-8") as out:
                    out.write(episode_id + "\n")
            return result

        memory.process = logged  # type: ignore[method-assign]
        await run_until_stopped(memory)
        await memory.close()

    asyncio.run(main())


def spawn(url: str, port: int, latency: float, role: str, log: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        __file__,
        "--serve",
        role,
        "--url",
        url,
        "--port",
        str(port),
        "--latency",
        str(latency),
        "--log",
        str(log),
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=True)


# -- the load ----------------------------------------------------------------------------------------


class Load:
    def __init__(self, users: int, pause: float) -> None:
        self.users = users
        self.pause = pause
        self.acked: list[tuple[str, str, str]] = []  # (thread, message id, task id)
        self.results: list[tuple[str, float, float, bool]] = []  # (kind, started, ended, ok)
        self.errors: Counter[str] = Counter()
        self.rng = random.Random(32)

    async def client(self, http: httpx.AsyncClient, until: float) -> None:
        n = 0
        while time.monotonic() < until:
            user = self.rng.randrange(self.users)
            n += 1
            write = self.rng.random() < 0.7
            started = time.monotonic()
            try:
                if write:
                    answer = await http.post(
                        f"/api/v3/threads/t{user}/messages",
                        json={
                            "messages": [
                                {
                                    "role": "user",
                                    "name": f"User{user}",
                                    "content": f"User{user} moved to City{n} and works at Firm{n}.",
                                }
                            ]
                        },
                    )
                else:
                    answer = await http.post(
                        "/api/v3/graph/search", json={"user_id": f"u{user}", "query": f"Where does User{user} live?"}
                    )
                ok = answer.status_code < 500
                if write and answer.status_code == 202:
                    body = answer.json()
                    self.acked.append((f"t{user}", body["message_uuids"][0], body["task_id"]))
                elif not ok:
                    self.errors[f"{'write' if write else 'search'} {answer.status_code}"] += 1
            except httpx.HTTPError as exc:
                ok = False
                self.errors[f"{'write' if write else 'search'} {type(exc).__name__}"] += 1
            self.results.append(("write" if write else "search", started, time.monotonic(), ok))
            await asyncio.sleep(self.pause if ok else max(self.pause, 0.1))


def resumed_after(results: list[tuple[str, float, float, bool]], kind: str, kill: float) -> float | None:
    """When the first request of ``kind`` started after the kill succeeded with no failure after it."""
    after = sorted((r for r in results if r[0] == kind and r[1] >= kill), key=lambda r: r[1])
    last_failure = max((r[1] for r in after if not r[3]), default=kill)
    ok = [r[2] for r in after if r[3] and r[1] >= last_failure]
    return min(ok) if ok else None


async def wait_ready(http: httpx.AsyncClient) -> None:
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


async def count_lost(url: str, control: Any, project_id: str, acked: list[tuple[str, str, str]]) -> int:
    """Acknowledged messages missing from their thread or from the store."""
    from chronomem.store.factory import open_store

    by_thread: dict[str, set[str]] = {}
    for thread, message, _ in acked:
        by_thread.setdefault(thread, set()).add(message)
    lost = 0
    store = await open_store(url)
    try:
        for thread, messages in by_thread.items():
            user = control.get_user(project_id, f"u{thread[1:]}")
            listed = set(control.message_ids(project_id, thread))
            stored = {e.id for e in await store.list_episodes(user.group_id)}
            lost += len(messages - (listed & stored))
    finally:
        await store.close()
    return lost


def pick_victim(primaries: list[ServerProcess], kill: str) -> ServerProcess:
    import redis

    client = redis.Redis(port=primaries[0].port)
    try:
        control_slot = int(client.execute_command("CLUSTER", "KEYSLOT", "{control}"))
    finally:
        client.close()
    victim = primary_of_slot(primaries, control_slot)
    return victim if kill == "control" else next(p for p in primaries if p is not victim)


async def run(args: argparse.Namespace) -> None:
    from chronomem.controlplane.redis import RedisControlPlane

    directory = Path(tempfile.mkdtemp(prefix="chronomem-failover-"))
    primaries, replicas = start_replicated_cluster(directory, args.shards)
    children: list[subprocess.Popen[bytes]] = []
    try:
        url = f"falkordb+cluster://127.0.0.1:{primaries[0].port}?namespace=failover&retry_seconds=60"
        control = RedisControlPlane.connect(url)
        _, key = control.create_key("bench")
        project = control.get_project("bench")
        for user in range(args.users):
            control.create_user(project.id, f"u{user}")
            control.create_thread(project.id, f"t{user}", f"u{user}")
        log = directory / "processed.log"
        port = free_port()
        children = [spawn(url, port, args.latency, "api", log), spawn(url, 0, args.latency, "worker", log)]
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", timeout=30, headers={"Authorization": f"Bearer {key}"}
        ) as http:
            await wait_ready(http)
            victim = pick_victim(primaries, args.kill)
            load = Load(args.users, args.pause)
            start = time.monotonic()
            clients = [asyncio.create_task(load.client(http, start + args.duration)) for _ in range(args.clients)]
            await asyncio.sleep(args.kill_after)
            killed_at = time.monotonic()
            victim.kill()
            await asyncio.gather(*clients)
            pending = await drain(http, {task for _, _, task in load.acked}, args.drain)
        alive = next(n for n in primaries if n is not victim)  # the dead node cannot start a cluster client
        lost = await count_lost(
            url.replace(f":{primaries[0].port}?", f":{alive.port}?"), control, project.id, load.acked
        )
        control.close()
        processed = Counter(log.read_text().split()) if log.exists() else Counter()
        write_back = resumed_after(load.results, "write", killed_at)
        search_back = resumed_after(load.results, "search", killed_at)
        failover = (max(write_back, search_back) - killed_at) if write_back and search_back else float("nan")
        print(
            f"killed: the primary of the {'control plane' if args.kill == 'control' else 'data'} shard "
            f"(port {victim.port}) at {killed_at - start:.1f} s of {args.duration} s"
        )
        print(f"failover_seconds: {failover:.2f}")
        print(f"write_resumed_s: {(write_back or float('nan')) - killed_at:.2f}")
        print(f"search_resumed_s: {(search_back or float('nan')) - killed_at:.2f}")
        print(f"requests: {len(load.results)}")
        print(f"acknowledged: {len(load.acked)}")
        print(f"acknowledged_lost: {lost}")
        print(f"processed_twice: {sum(1 for c in processed.values() if c > 1)}")
        print(f"errors_seen_by_clients: {sum(load.errors.values())} {dict(load.errors)}")
        print(f"unprocessed: {len(pending)}")
    finally:
        stop_children(children)
        for node in [*primaries, *replicas]:
            node.stop()


def stop_children(children: list[subprocess.Popen[bytes]]) -> None:
    for child in children:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--users", type=int, default=12)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load in all")
    parser.add_argument("--kill-after", type=float, default=8.0, help="seconds of load before the kill")
    parser.add_argument("--kill", choices=["control", "data"], default="control")
    parser.add_argument("--pause", type=float, default=0.2, help="seconds each client waits between requests")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per model call (the stand-in)")
    parser.add_argument("--drain", type=float, default=90.0, help="seconds to wait for ingestion afterwards")
    parser.add_argument("--serve", choices=["api", "worker"], help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--log", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.url, args.port, args.latency, args.serve, args.log)
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
