"""Crash and restart of the server, unreachable servers, and worker processes killed mid-episode."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import processes
from chronomem.app.workers import Shard
from chronomem.domain import Episode, EpisodeStatus
from chronomem.errors import StoreUnavailableError
from chronomem.store.factory import open_store
from falkordb_server import drop_namespace, open_falkordb_store, own_falkordb_server, tracked
from service_support import start_live_worker

pytestmark = pytest.mark.integration


async def test_acknowledged_writes_survive_a_sigkill_and_the_store_reconnects(tmp_path: Path) -> None:
    acknowledged: list[str] = []
    with own_falkordb_server(tmp_path) as server:
        store = await open_falkordb_store(server.url, retry_seconds=60)

        async def keep_writing(count: int) -> None:
            for i in range(count):
                episode = Episode(group_id="chat-1", content=f"message {i}")
                await store.insert_episode(episode)  # retried through the outage
                acknowledged.append(episode.id)

        try:
            writer = asyncio.create_task(keep_writing(200))
            while len(acknowledged) < 30:
                await asyncio.sleep(0.005)
            server.kill()  # SIGKILL mid-use: no shutdown, no final flush
            killed_after = len(acknowledged)
            await asyncio.sleep(0.5)
            await asyncio.to_thread(server.start)  # same port, same data directory: the AOF is replayed
            tracked(server)  # the new process
            await asyncio.wait_for(writer, timeout=120)
            stored = await store.list_episodes("chat-1")
            assert killed_after < 200
            assert sorted(e.id for e in stored) == sorted(acknowledged)  # nothing lost, nothing doubled
        finally:
            await store.close()


async def test_an_unreachable_server_is_reported_as_unavailable(tmp_path: Path) -> None:
    with own_falkordb_server(tmp_path) as server:
        store = await open_falkordb_store(server.url, retry_seconds=0.5)
        try:
            server.kill()
            started = time.monotonic()
            with pytest.raises(StoreUnavailableError):
                await store.list_episodes("g")
            assert time.monotonic() - started < 5
        finally:
            await store.close()


async def test_a_worker_killed_mid_episode_loses_nothing_and_processes_nothing_twice(
    falkordb_server: Any, tmp_path: Path
) -> None:
    """Two shard workers consume the queue (the episodes' status in their graphs); one is SIGKILLed
    while it holds episodes in ``processing`` and restarted: every episode ends ``done``, each was
    extracted once."""
    url = f"{falkordb_server.url}?namespace=t{uuid.uuid4().hex[:12]}"
    store = await open_store(url)
    candidates = [f"chat-{i}" for i in range(40)]
    groups = [g for g in candidates if Shard(0, 2).owns(g)][:2] + [g for g in candidates if Shard(1, 2).owns(g)][:2]
    ids: dict[str, str] = {}
    for group in groups:
        for n in range(6):
            episode = Episode(group_id=group, content=f"{group}: message {n}")
            await store.insert_episode(episode)
            ids[episode.id] = group
    log = tmp_path / "processed.log"

    def shard_0_done() -> int:
        return sum(ids[i] in groups[:2] for i in log.read_text().split()) if log.exists() else 0

    async def shard_0_holds() -> list[Episode]:
        return [e for g in groups[:2] for e in await store.list_episodes(g, statuses=[EpisodeStatus.PROCESSING])]

    async def mid_episode() -> bool:  # one extracted already; its next ones wait on a model that never answers
        return shard_0_done() >= 1 and bool(await shard_0_holds())

    async def all_done() -> bool:
        stored = [e for g in groups for e in await store.list_episodes(g)]
        return all(e.status is EpisodeStatus.DONE for e in stored)

    try:
        with processes.Scope(grace=0) as running:  # SIGKILLed at the end, as before; however the test ends
            workers = {shard: running.add(start_live_worker(tmp_path, latency=0.3, store=url, shard=shard,
                                                            hang_after=1 if shard == "0/2" else None))
                       for shard in ("1/2", "0/2")}
            await _until(mid_episode, "shard 0 to be mid-episode")
            workers["0/2"].kill()
            workers["0/2"].communicate(timeout=10)
            assert await shard_0_holds() and shard_0_done() < 12, "the worker was not killed mid-episode"
            running.add(start_live_worker(tmp_path, latency=0.3, store=url, shard="0/2"))
            await _until(all_done, "every episode done")
    finally:
        await drop_namespace(store)
    assert sorted(log.read_text().split()) == sorted(ids)  # each extracted once, none lost


async def _until(condition: Callable[[], Awaitable[bool]], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not await condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def test_a_server_that_does_not_answer_in_time_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher gives up on a server still loading its data: the server must not run on, orphaned."""
    from chronomem.store.falkordb.server import ServerProcess, free_port

    def never_ready(self: ServerProcess, timeout: float) -> None:
        raise StoreUnavailableError(f"FalkorDB on port {self.port} did not answer in {timeout}s")

    monkeypatch.setattr(ServerProcess, "wait_ready", never_ready)
    server = ServerProcess(free_port(), tmp_path)
    with pytest.raises(StoreUnavailableError):
        server.start(timeout=0.01)
    assert server.process is not None and server.process.poll() is not None
