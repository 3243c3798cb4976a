"""The ingestion worker pool over the store's durable episode queue (docs/design.md §6).

- Each group's pending episodes are processed one at a time, oldest first; different groups run in
  parallel, up to ``concurrency`` at once.
- A model failure (``ModelError``, or an ``IngestionError`` caused by one, or a store that is
  briefly unreachable) puts the episode back to ``pending`` and retries it after an exponential
  backoff, holding the group's later episodes back so order is kept. After ``max_attempts`` the
  episode is ``failed`` with its error visible; ``Chronomem.retry`` (behind the HTTP retry endpoint)
  queues it again. Any other exception fails the episode at once: retrying a bug repeats it.
  A failed episode does not block its group: later episodes go on.
- At start the pool returns every ``processing`` episode of its groups to ``pending``: a process
  killed mid-episode loses nothing. The processing function (``Ingestor.process``) writes an
  episode's graph changes and its ``done`` status in one atomic write, so an episode reset this way
  had written nothing, and no episode is processed twice.
- Several pools in separate processes (``chronomem worker --shard i/n``) split groups by a stable
  hash, so two processes never hold the same group.

The HTTP app, the MCP server and ``chronomem worker`` all build their pool with
:meth:`WorkerPool.for_memory`: the memory's store, its ``process`` and its worker settings.

Each pool counts what it finishes (``chronomem_episodes_total`` by outcome) and the groups in flight;
:func:`refresh_queue_metrics` reads the queue's depth and age for ``/metrics`` (docs/operations.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from chronomem.config.settings import WorkerSettings
from chronomem.domain import Episode, EpisodeStatus
from chronomem.errors import ChronomemError, IngestionError, ModelError, StoreUnavailableError
from chronomem.store.base import EpisodeQueue, GroupAdmin
from chronomem.telemetry import bound, metrics
from chronomem.timeutil import utc_now

if TYPE_CHECKING:  # the facade imports the whole pipeline; a pool needs only its store and `process`
    from chronomem.memory import Chronomem

__all__ = [
    "ProcessEpisode",
    "QueueStore",
    "Shard",
    "WorkerPool",
    "is_retryable",
    "refresh_queue_metrics",
    "run_until_stopped",
]

log = logging.getLogger(__name__)

ProcessEpisode = Callable[[str, str], Awaitable[object]]
"""``(group_id, episode_id) -> anything``: extracts one stored episode into the graph."""


class QueueStore(EpisodeQueue, GroupAdmin, Protocol):
    """What the pool uses of the store: the episode queue, and the group list a shard recovers
    from."""


_RETRYABLE = (ModelError, StoreUnavailableError)
_FINISHED = (EpisodeStatus.DONE, EpisodeStatus.UNEXTRACTED)


def is_retryable(exc: BaseException) -> bool:
    """Model and transient store failures are retried; anything else is a bug and fails at once."""
    if isinstance(exc, _RETRYABLE):
        return True
    return isinstance(exc, IngestionError) and isinstance(exc.__cause__, _RETRYABLE)


@dataclass(frozen=True, slots=True)
class Shard:
    """This pool's share of the groups: those whose stable hash modulo ``count`` is ``index``."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index}/{self.count} is out of range")

    def owns(self, group_id: str) -> bool:
        if self.count == 1:
            return True
        digest = hashlib.blake2b(group_id.encode("utf-8"), digest_size=8).digest()
        return int.from_bytes(digest, "little") % self.count == self.index

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"i/n"``, e.g. ``"0/2"``."""
        index, sep, count = text.partition("/")
        try:
            return cls(int(index), int(count)) if sep else cls()
        except ValueError:
            raise ValueError(f"shard must look like 0/2, got {text!r}") from None


class WorkerPool:
    """Processes the store's pending episodes until stopped. Start it with ``async with`` or
    :meth:`start`/:meth:`stop`; :meth:`notify` after queueing work to skip the poll delay."""

    def __init__(
        self,
        store: QueueStore,
        process: ProcessEpisode,
        settings: WorkerSettings | None = None,
        *,
        shard: Shard = Shard(),
    ) -> None:
        self._store = store
        self._process = process
        self._settings = settings or WorkerSettings()
        self._shard = shard
        self._wake = asyncio.Event()
        self._active: dict[str, asyncio.Task[None]] = {}
        self._dispatcher: asyncio.Task[None] | None = None
        self._tries: dict[tuple[str, str], int] = {}  # failures seen here, should the store not count
        self.processed = 0  # episodes that reached `done` through this pool
        self.failed = 0  # episodes this pool marked `failed`

    @classmethod
    def for_memory(cls, memory: Chronomem, *, shard: Shard = Shard()) -> WorkerPool:
        """The pool that ingests ``memory``'s queue: its store, its ``process`` and its
        ``settings.workers`` (the one construction the HTTP app, the MCP server and the CLI share)."""
        return cls(memory.store, memory.process, memory.settings.workers, shard=shard)

    @property
    def running(self) -> bool:
        return self._dispatcher is not None and not self._dispatcher.done()

    async def __aenter__(self) -> WorkerPool:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self) -> int:
        """Recover episodes a dead process left ``processing`` and start dispatching; returns how
        many were recovered."""
        recovered = await self._recover()
        self._dispatcher = asyncio.create_task(self._dispatch(), name="chronomem-worker-dispatch")
        return recovered

    async def _recover(self) -> int:
        if self._shard.count == 1:
            return await self._store.reset_processing()
        recovered = 0
        for group_id in await self._store.list_groups():
            if not self._shard.owns(group_id):
                continue
            for episode in await self._store.list_episodes(group_id, statuses=[EpisodeStatus.PROCESSING]):
                await self._store.set_episode_status(group_id, episode.id, EpisodeStatus.PENDING)
                recovered += 1
        return recovered

    def notify(self) -> None:
        """New work was queued: look now instead of at the next poll."""
        self._wake.set()

    async def stop(self) -> None:
        """Stop taking work and cancel what is in flight (it stays ``processing`` in the store and
        returns to ``pending`` at the next start: nothing is lost)."""
        tasks = [t for t in (self._dispatcher, *self._active.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._dispatcher = None
        self._active.clear()

    async def drain(self, timeout: float = 30.0) -> None:
        """Wait until no owned group has pending work and nothing is in flight (tests, benches)."""
        async with asyncio.timeout(timeout):
            while True:
                self.notify()
                try:
                    pending = [g for g in await self._store.pending_groups() if self._shard.owns(g)]
                except ChronomemError:
                    pending = ["?"]  # cannot tell yet
                if not pending and not self._active:
                    return
                await asyncio.sleep(0.02)

    async def _dispatch(self) -> None:
        while True:
            try:
                groups = await self._store.pending_groups()
            except Exception:  # the store hiccuped: log, wait for the next poll, keep the pool alive
                log.exception("could not list the groups with pending episodes")
                groups = []
            for group_id in groups:
                if len(self._active) >= self._settings.concurrency:
                    break
                if group_id in self._active or not self._shard.owns(group_id):
                    continue
                task = asyncio.create_task(self._drain_group(group_id), name=f"chronomem-worker-{group_id}")
                self._active[group_id] = task
                task.add_done_callback(functools.partial(self._finished, group_id))
                metrics.set_in_flight(len(self._active))
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._settings.poll_interval_s):
                    await self._wake.wait()

    def _finished(self, group_id: str, _task: asyncio.Task[None]) -> None:
        self._active.pop(group_id, None)
        metrics.set_in_flight(len(self._active))
        self._wake.set()  # a slot is free: other groups may be waiting

    async def _drain_group(self, group_id: str) -> None:
        try:
            while True:
                queued = await self._store.list_episodes(
                    group_id, statuses=[EpisodeStatus.PENDING], limit=1, newest_first=False
                )
                if not queued:
                    return
                await self._run_one(group_id, queued[0])
        except Exception:  # the store failed around an episode; the next poll picks the group up again
            log.exception("worker for group %s stopped early", group_id)

    async def _run_one(self, group_id: str, episode: Episode) -> None:
        with bound(episode_id=episode.id, group_id=group_id):  # the log lines of this episode name it
            try:
                await self._process(group_id, episode.id)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the episode's own failure; the pool carries on
                await self._after_failure(group_id, episode.id, exc)
                return
            self._tries.pop((group_id, episode.id), None)
            self.processed += 1
            metrics.record_episode("done")

    async def _after_failure(self, group_id: str, episode_id: str, exc: Exception) -> None:
        message = f"{type(exc).__name__}: {exc}"
        stored = await self._store.get_episodes(group_id, [episode_id])
        if stored and stored[0].status in _FINISHED:
            # The extraction was committed; what failed came after it (e.g. a community update).
            # Touching the status now would process the episode twice.
            log.warning("episode %s of %s is %s but a later step failed: %s",
                        episode_id, group_id, stored[0].status.value, message)
            self._tries.pop((group_id, episode_id), None)
            self.processed += 1
            metrics.record_episode("done")
            return
        tries = self._tries[(group_id, episode_id)] = self._tries.get((group_id, episode_id), 0) + 1
        attempts = max(stored[0].attempts, tries) if stored else self._settings.max_attempts
        if is_retryable(exc) and attempts < self._settings.max_attempts:
            delay = min(self._settings.retry_base_s * 2 ** max(attempts - 1, 0), self._settings.retry_max_s)
            log.warning("episode %s of %s failed (attempt %d), retrying in %.1fs: %s",
                        episode_id, group_id, attempts, delay, message)
            await self._store.set_episode_status(group_id, episode_id, EpisodeStatus.PENDING, error=message)
            metrics.record_episode("retried")
            await asyncio.sleep(delay)
            return
        self._tries.pop((group_id, episode_id), None)
        log.error("episode %s of %s failed after %d attempt(s): %s", episode_id, group_id, attempts, message)
        await self._store.set_episode_status(group_id, episode_id, EpisodeStatus.FAILED, error=message)
        self.failed += 1
        metrics.record_episode("failed")


_QUEUED = (EpisodeStatus.PENDING, EpisodeStatus.PROCESSING)


async def refresh_queue_metrics(store: QueueStore) -> dict[str, int]:
    """Set the queue gauges (episodes pending and processing in every group, the oldest one's age)
    from one read of the store (:meth:`~chronomem.store.base.EpisodeQueue.queue_depth`) and return
    the depths."""
    found = await store.queue_depth()
    now = utc_now()
    depth: dict[str, int] = {}
    for status in _QUEUED:
        queued = found.get(status)
        count = queued.episodes if queued else 0
        age = max((now - queued.oldest_created_at).total_seconds(), 0.0) if queued else 0.0
        metrics.set_queue(status.value, count, age)
        depth[status.value] = count
    return depth


QUEUE_METRICS_EVERY_S = 15.0  # how often a worker serving /metrics reads the queue's depth


async def _refresh_queue_metrics_forever(store: QueueStore, every_s: float) -> None:
    while True:
        try:
            await refresh_queue_metrics(store)
        except Exception:  # the store hiccuped: the gauges keep their last values
            log.warning("could not read the queue depth for the metrics", exc_info=True)
        await asyncio.sleep(every_s)


async def run_until_stopped(
    memory: Chronomem,
    *,
    shard: Shard = Shard(),
    on_ready: Callable[[], object] | None = None,
    metrics_port: int | None = None,
    metrics_host: str = "127.0.0.1",
) -> WorkerPool:
    """A worker process's life (``chronomem worker``): tune the collector, run a pool until SIGINT
    or SIGTERM, and return it (with its counts) once stopped. With ``metrics_port`` it serves
    ``/metrics`` there meanwhile, its queue gauges read every ``QUEUE_METRICS_EVERY_S``."""
    from chronomem.app.process import tune_gc

    tune_gc()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    stop_metrics = metrics.serve_metrics(metrics_port, metrics_host) if metrics_port is not None else None
    refresher = (
        asyncio.create_task(_refresh_queue_metrics_forever(memory.store, QUEUE_METRICS_EVERY_S))
        if stop_metrics is not None else None
    )
    try:
        async with WorkerPool.for_memory(memory, shard=shard) as pool:
            if on_ready is not None:
                on_ready()
            await stop.wait()
    finally:
        if refresher is not None:
            refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await refresher
        if stop_metrics is not None:
            stop_metrics()
    return pool
