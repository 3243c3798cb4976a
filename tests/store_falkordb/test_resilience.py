"""Crash and restart of the server, unreachable servers, and the durable ingestion queue."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from chronomem.domain import Episode, EpisodeStatus
from chronomem.errors import StoreUnavailableError
from falkordb_server import open_falkordb_store

pytestmark = pytest.mark.integration


async def test_acknowledged_writes_survive_a_sigkill_and_the_store_reconnects(tmp_path: Path) -> None:
    from chronomem.store.falkordb.server import ServerProcess, free_port

    server = ServerProcess(free_port(), tmp_path).start()
    store = await open_falkordb_store(server.url, retry_seconds=60)
    acknowledged: list[str] = []

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
        await asyncio.wait_for(writer, timeout=120)
        stored = await store.list_episodes("chat-1")
        assert killed_after < 200
        assert sorted(e.id for e in stored) == sorted(acknowledged)  # nothing lost, nothing doubled
    finally:
        await store.close()
        server.stop()


async def test_an_unreachable_server_is_reported_as_unavailable(tmp_path: Path) -> None:
    from chronomem.store.falkordb.server import ServerProcess, free_port

    server = ServerProcess(free_port(), tmp_path).start()
    store = await open_falkordb_store(server.url, retry_seconds=0.5)
    try:
        server.kill()
        started = time.monotonic()
        with pytest.raises(StoreUnavailableError):
            await store.list_episodes("g")
        assert time.monotonic() - started < 5
    finally:
        await store.close()


async def test_queue_delivers_each_new_episode_once_and_redelivers_unacknowledged_work(falkordb_store) -> None:
    first = Episode(group_id="g", content="one")
    second = Episode(group_id="h-2", content="two")
    await falkordb_store.insert_episode(first)
    await falkordb_store.insert_episode(first)  # a re-sent episode is not queued again
    await falkordb_store.insert_episode(second)
    queue = falkordb_store.queue
    taken = await queue.claim("worker-a", count=10)
    assert [(e.group_id, e.episode_id) for e in taken] == [("g", first.id), ("h-2", second.id)]
    assert await queue.claim("worker-b") == []  # handed out already
    await queue.ack(taken[:1])
    await asyncio.sleep(0.05)
    redelivered = await queue.claim("worker-b", min_idle_ms=10)  # worker-a died holding the second one
    assert [e.episode_id for e in redelivered] == [second.id]
    await queue.ack(redelivered)
    assert await queue.backlog() == 0


async def test_restart_recovery_requeues_interrupted_episodes(falkordb_store) -> None:
    episode = Episode(group_id="g", content="one")
    await falkordb_store.insert_episode(episode)
    queue = falkordb_store.queue
    await queue.ack(await queue.claim("worker-a"))
    await falkordb_store.set_episode_status("g", episode.id, EpisodeStatus.PROCESSING)
    assert await falkordb_store.pending_groups() == []
    assert await falkordb_store.reset_processing() == 1  # the worker crashed mid-episode
    assert await falkordb_store.pending_groups() == ["g"]
    assert [e.episode_id for e in await queue.claim("worker-b")] == [episode.id]


async def test_restart_recovery_republishes_pending_episodes_whose_queue_entry_was_lost(falkordb_store) -> None:
    episode = Episode(group_id="g", content="one")
    await falkordb_store.insert_episode(episode)
    await falkordb_store.connection.execute("DEL", falkordb_store.queue.stream)  # the append was lost
    assert await falkordb_store.queue.claim("worker-a") == []
    assert await falkordb_store.reset_processing() == 0  # nothing was processing
    assert [e.episode_id for e in await falkordb_store.queue.claim("worker-a")] == [episode.id]
