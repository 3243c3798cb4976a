"""The worker pool over the store's durable queue: order per group, groups in parallel, retries with
backoff on model failures, a visible and retryable `failed`, and crash recovery."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from chronomem.app.workers import Shard, WorkerPool, is_retryable
from chronomem.config.settings import WorkerSettings
from chronomem.domain import Episode, EpisodeStatus
from chronomem.errors import IngestionError, ModelUnavailableError
from chronomem.store.factory import open_store

FAST = WorkerSettings(concurrency=4, max_attempts=3, retry_base_s=0.01, poll_interval_s=0.05)
T0 = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.fixture
async def store(tmp_path):
    opened = await open_store(f"sqlite:///{tmp_path / 'queue.db'}")
    yield opened
    await opened.close()


async def queue(store, group: str, count: int) -> list[str]:
    ids = []
    for i in range(count):
        episode = Episode(group_id=group, content=f"message {i}", reference_time=T0 + timedelta(minutes=i))
        await store.insert_episode(episode)
        ids.append(episode.id)
    return ids


class Recorder:
    """A processing function that honours the Ingestor's contract (processing → done, or failed
    and raise), records what it did, and fails on cue."""

    def __init__(self, store, *, delay: float = 0.0, failures: dict[str, list[Exception]] | None = None):
        self.store = store
        self.delay = delay
        self.failures = failures or {}
        self.done: list[tuple[str, str]] = []
        self.running = 0
        self.max_running = 0

    async def __call__(self, group_id: str, episode_id: str) -> None:
        await self.store.set_episode_status(group_id, episode_id, EpisodeStatus.PROCESSING)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            await asyncio.sleep(self.delay)
            planned = self.failures.get(episode_id)
            if planned:
                exc = planned.pop(0)
                await self.store.set_episode_status(group_id, episode_id, EpisodeStatus.FAILED, error=str(exc))
                raise exc
            await self.store.set_episode_status(group_id, episode_id, EpisodeStatus.DONE)
            self.done.append((group_id, episode_id))
        finally:
            self.running -= 1


async def test_each_group_is_processed_in_order_and_groups_run_in_parallel(store):
    a = await queue(store, "a", 4)
    b = await queue(store, "b", 4)
    process = Recorder(store, delay=0.02)
    async with WorkerPool(store, process, FAST) as pool:
        await pool.drain(timeout=10)
    assert [e for g, e in process.done if g == "a"] == a
    assert [e for g, e in process.done if g == "b"] == b
    assert process.max_running == 2  # one per group at a time, both groups at once


async def test_a_model_failure_is_retried_with_backoff_and_keeps_the_group_in_order(store):
    ids = await queue(store, "g", 3)
    cause = ModelUnavailableError("429 from the provider")
    wrapped = IngestionError("extract failed")
    wrapped.__cause__ = cause
    process = Recorder(store, failures={ids[0]: [wrapped]})
    async with WorkerPool(store, process, FAST) as pool:
        await pool.drain(timeout=10)
    assert [e for _, e in process.done] == ids
    [first] = await store.get_episodes("g", [ids[0]])
    assert first.status is EpisodeStatus.DONE and first.attempts == 2 and first.last_error is None


async def test_after_max_attempts_the_episode_is_failed_visibly_and_later_ones_go_on(store):
    ids = await queue(store, "g", 2)
    process = Recorder(store, failures={ids[0]: [ModelUnavailableError("down")] * 5})
    async with WorkerPool(store, process, FAST) as pool:
        await pool.drain(timeout=10)
        assert pool.failed == 1
    [failed, after] = await store.get_episodes("g", ids)
    assert failed.status is EpisodeStatus.FAILED and failed.attempts == FAST.max_attempts
    assert "down" in (failed.last_error or "")
    assert after.status is EpisodeStatus.DONE


async def test_a_bug_is_not_retried(store):
    [only] = await queue(store, "g", 1)
    process = Recorder(store, failures={only: [KeyError("bug")]})
    async with WorkerPool(store, process, FAST) as pool:
        await pool.drain(timeout=10)
    [episode] = await store.get_episodes("g", [only])
    assert episode.status is EpisodeStatus.FAILED and episode.attempts == 1


async def test_a_failed_episode_queued_again_is_processed(store):
    [only] = await queue(store, "g", 1)
    process = Recorder(store, failures={only: [ValueError("bad")]})
    async with WorkerPool(store, process, FAST) as pool:
        await pool.drain(timeout=10)
        await store.set_episode_status("g", only, EpisodeStatus.PENDING)
        pool.notify()
        await pool.drain(timeout=10)
    [episode] = await store.get_episodes("g", [only])
    assert episode.status is EpisodeStatus.DONE


async def test_episodes_left_processing_by_a_dead_process_are_resumed_at_start(store):
    ids = await queue(store, "g", 2)
    await store.set_episode_status("g", ids[0], EpisodeStatus.PROCESSING)  # a worker died holding it
    process = Recorder(store)
    async with WorkerPool(store, process, FAST) as pool:
        await pool.drain(timeout=10)
    assert [e for _, e in process.done] == ids


async def test_shards_split_groups_without_overlap():
    groups = [f"group-{i}" for i in range(200)]
    shards = [Shard(i, 3) for i in range(3)]
    owners = [[s.owns(g) for s in shards].count(True) for g in groups]
    assert owners == [1] * len(groups)
    assert all(any(s.owns(g) for g in groups) for s in shards)
    assert Shard.parse("1/3") == Shard(1, 3)
    with pytest.raises(ValueError):
        Shard.parse("3/3")


def test_only_model_and_store_outages_are_retryable():
    assert is_retryable(ModelUnavailableError("x"))
    assert not is_retryable(ValueError("x"))
    assert not is_retryable(IngestionError("x"))


async def test_a_failure_after_the_episode_was_committed_does_not_reopen_it(store):
    [only] = await queue(store, "g", 1)
    calls = []

    async def commit_then_fail(group_id: str, episode_id: str) -> None:
        calls.append(episode_id)
        await store.set_episode_status(group_id, episode_id, EpisodeStatus.PROCESSING)
        await store.set_episode_status(group_id, episode_id, EpisodeStatus.DONE)
        raise ModelUnavailableError("community summary failed after the write")

    async with WorkerPool(store, commit_then_fail, FAST) as pool:
        await pool.drain(timeout=10)
        assert pool.processed == 1
    [episode] = await store.get_episodes("g", [only])
    assert episode.status is EpisodeStatus.DONE and calls == [only]


class FlakyStore:
    """The real store, except that the first ``failures`` calls listing pending groups fail."""

    def __init__(self, store, failures: int) -> None:
        self._store = store
        self.failures = failures

    def __getattr__(self, name):
        return getattr(self._store, name)

    async def pending_groups(self):
        from chronomem.errors import StoreError

        if self.failures:
            self.failures -= 1
            raise StoreError("disk I/O error (scripted)")
        return await self._store.pending_groups()


async def test_the_pool_survives_store_errors_and_goes_on(store):
    ids = await queue(store, "g", 2)
    flaky = FlakyStore(store, failures=2)
    process = Recorder(store)
    async with WorkerPool(flaky, process, FAST) as pool:
        await pool.drain(timeout=10)
        assert pool.running
    assert [e for _, e in process.done] == ids
