"""Separate `chronomem worker` processes (two shards) drain the durable queue of a shared store."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

import processes
from chronomem.app.workers import Shard
from chronomem.domain import Episode, EpisodeStatus
from chronomem.store.factory import open_store
from falkordb_server import own_falkordb_server


@pytest.mark.integration
async def test_two_worker_shards_process_every_group_once(tmp_path):
    with own_falkordb_server(tmp_path / "falkordb") as server, processes.Scope(grace=30) as workers:
        store = await open_store(server.url)
        groups = [f"group-{i}" for i in range(6)]
        assert {Shard(0, 2).owns(g) for g in groups} == {True, False}  # both shards get work
        ids = {}
        for group in groups:
            for n in range(3):
                episode = Episode(group_id=group, content=f"message {n} of {group}")
                await store.insert_episode(episode)
                ids[episode.id] = group
        for shard in ("0/2", "1/2"):
            with open(tmp_path / f"worker-{shard[0]}.log", "wb") as log:  # the child keeps its own descriptor
                workers.add(processes.start(
                    [sys.executable, "-m", "chronomem.cli", "--store", server.url, "--embedder", "hashing",
                     "worker", "--shard", shard], stdout=log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            pending = [g for g in await store.pending_groups() if g in groups]
            if not pending:
                break
            await asyncio.sleep(0.2)
        for group in groups:
            stored = await store.list_episodes(group)
            assert {e.status for e in stored} == {EpisodeStatus.UNEXTRACTED}  # processed (no model configured)
        await store.close()
    # the workers stopped (SIGTERM): each has logged what it processed
    outputs = [(tmp_path / f"worker-{n}.log").read_text() for n in range(2)]
    processed = [int(text.split("processed ")[1].split(",")[0]) for text in outputs]
    assert sum(processed) == len(ids) and all(processed)  # every episode once, both shards worked
