"""Two API servers, each with its own local data directory, and two sharded workers on one FalkorDB
(a single server, and a 3-shard cluster) share keys, users, threads and tasks through the store's
server: a key created anywhere works on both at once, a key revoked or a user deleted stops working
on both at once, and a SIGKILL of a server or of a worker loses nothing and repeats nothing."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path

import httpx
import pytest

import processes
from falkordb_server import own_falkordb_cluster
from service_support import free_port, start_live_server, start_live_worker

pytestmark = pytest.mark.integration

USERS = ("ann", "bo", "cy", "dee")
BATCHES = 24


@pytest.fixture(params=["server", "cluster"])
def store_url(request, tmp_path_factory) -> Iterator[str]:
    namespace = f"namespace=two{uuid.uuid4().hex[:10]}"
    if request.param == "server":
        from falkordb_server import shared_falkordb_server

        yield f"{shared_falkordb_server().url}?{namespace}"
        return
    with own_falkordb_cluster(Path(tmp_path_factory.mktemp("cluster")), shards=3) as nodes:
        yield f"{nodes[0].url}?{namespace}"


def post_until_accepted(clients: list[httpx.Client], path: str, body: dict, ok: tuple[int, ...]) -> dict:
    """What a load balancer in front of the servers does: a server that does not answer is skipped
    and the request resent (with its uuids) to the next, until one answers."""
    deadline = time.monotonic() + 60
    while True:
        for client in clients:
            try:
                response = client.post(path, json=body)
            except httpx.TransportError:
                continue
            if response.status_code in ok:
                return dict(response.json()) if response.status_code != 409 else {}
            assert response.status_code >= 500, response.text
        assert time.monotonic() < deadline, f"no server accepted {path}"
        time.sleep(0.05)


def test_two_servers_and_two_workers_share_one_control_plane_on_the_store(store_url, tmp_path):
    from chronomem.controlplane.redis import RedisControlPlane

    admin = RedisControlPlane.connect(store_url)  # what `chronomem --store URL keys ...` opens
    _, key = admin.create_key("shared")
    dirs = {name: tmp_path / name for name in ("api-a", "api-b", "worker-0", "worker-1")}
    for path in dirs.values():
        path.mkdir()
    ports = {"api-a": free_port(), "api-b": free_port()}
    started = time.monotonic()
    accepted: dict[str, list[str]] = {u: [] for u in USERS}
    task_ids: list[str] = []
    with ExitStack() as stack:  # on the way out: the clients closed, the processes stopped, admin closed
        stack.enter_context(closing(admin))
        # every server and worker started here (restarts too), stopped however the test ends
        running = stack.enter_context(processes.Scope(grace=20))
        servers = {name: running.add(start_live_server(dirs[name], ports[name], workers=False, store=store_url))
                   for name in ports}
        workers = {f"worker-{i}": running.add(start_live_worker(dirs[f"worker-{i}"], latency=0.05,
                                                                store=store_url, shard=f"{i}/2"))
                   for i in range(2)}
        clients = {name: stack.enter_context(httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10,
                                                          headers={"Authorization": f"Bearer {key}"}))
                   for name, port in ports.items()}
        a, b = clients["api-a"], clients["api-b"]
        # Both servers have looked the key up (cached); a key created now works on both at once.
        assert a.get("/api/v3/users").status_code == b.get("/api/v3/users").status_code == 200
        info, fresh = admin.create_key("shared")
        as_fresh = {"Authorization": f"Bearer {fresh}"}
        assert a.get("/api/v3/users", headers=as_fresh).status_code == 200
        assert b.get("/api/v3/users", headers=as_fresh).status_code == 200

        for user in USERS:  # a user and a thread created through one server are on the other at once
            post_until_accepted([a], "/api/v3/users", {"user_id": user}, ok=(201,))
            assert b.get(f"/api/v3/users/{user}").status_code == 200
            post_until_accepted([b], "/api/v3/threads", {"thread_id": f"t-{user}", "user_id": user}, ok=(201,))
            assert a.get(f"/api/v3/threads/t-{user}").status_code == 200

        for batch in range(BATCHES):
            if batch == 6:  # a server dies; its clients go to the other until it is back
                os.kill(servers["api-a"].pid, signal.SIGKILL)
                servers["api-a"].wait(timeout=10)
            if batch == 10:  # a worker dies mid-ingestion (its groups wait for its restart)
                os.kill(workers["worker-0"].pid, signal.SIGKILL)
                workers["worker-0"].communicate(timeout=10)  # reaps it and closes its pipe
            if batch == 14:
                servers["api-a"] = running.add(
                    start_live_server(dirs["api-a"], ports["api-a"], workers=False, store=store_url))
                workers["worker-0"] = running.add(
                    start_live_worker(dirs["worker-0"], latency=0.05, store=store_url, shard="0/2"))
            user = USERS[batch % len(USERS)]
            order = [a, b] if batch % 2 else [b, a]
            messages = [{"role": "user", "name": user.title(), "uuid": f"{user}-{batch}-{i}",
                         "content": f"{user.title()}: note {batch}.{i}"} for i in range(2)]
            body = post_until_accepted(order, f"/api/v3/threads/t-{user}/messages", {"messages": messages}, ok=(202,))
            accepted[user] += body["message_uuids"]
            task_ids.append(body["task_id"])

        deadline = time.monotonic() + 120
        while (seen := Counter(a.get(f"/api/v3/tasks/{t}").json()["status"] for t in task_ids)) != {
                "done": len(task_ids)}:
            assert time.monotonic() < deadline, seen
            time.sleep(0.1)
        for user in USERS:
            for client in (a, b):  # both servers read every thread whole, whichever server wrote it
                listed = [m["uuid"] for m in client.get(f"/api/v3/threads/t-{user}/messages").json()["messages"]]
                assert listed == accepted[user], user

        # A key revoked and a user deleted through one place stop working on both servers at once.
        admin.revoke_key(info.id)
        assert a.get("/api/v3/users", headers=as_fresh).status_code == 401
        assert b.get("/api/v3/users", headers=as_fresh).status_code == 401
        assert b.delete("/api/v3/users/ann").status_code == 204
        assert a.get("/api/v3/users/ann").status_code == 404
        assert a.get("/api/v3/threads/t-ann/messages").status_code == 404
        assert a.get("/api/v3/users/bo").status_code == 200
    processed = Counter(line for name in ("worker-0", "worker-1") if (dirs[name] / "processed.log").exists()
                        for line in (dirs[name] / "processed.log").read_text().split())
    assert [e for e, n in processed.items() if n > 1] == []  # no episode processed twice
    assert set(processed) <= {m for ids in accepted.values() for m in ids}
    print(f"accepted={sum(map(len, accepted.values()))} processed={len(processed)} tasks={len(task_ids)} "
          f"seconds={time.monotonic() - started:.1f}")
