"""The ingestion queue, kept in the same server: a Redis stream with one consumer group.

``insert_episode`` appends ``(group, episode)`` to the stream after the episode is durable in its
graph; workers on any machine ``claim`` entries (each entry goes to one worker), process the
episode, then ``ack`` it. An entry a worker claimed but never acknowledged (the worker died) is
handed to another worker once it has been idle for ``min_idle_ms``: delivery is at-least-once.
Processing is idempotent because the episode's status in its graph is the truth: a worker skips an
episode that is already ``done``. If the stream append is lost (the server died between the two
writes), ``reset_processing`` at start-up republishes every pending episode it finds.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from chronomem.errors import StoreError
from chronomem.store.falkordb.connection import FalkorConnection
from chronomem.store.falkordb.keys import GroupKeys

__all__ = ["EpisodeQueue", "QueueEntry"]

CONSUMER_GROUP = "workers"
MAX_LENGTH = 1_000_000  # approximate cap: acknowledged entries are deleted, this bounds a backlog


class QueueEntry(NamedTuple):
    entry_id: str
    group_id: str
    episode_id: str


def _entries(messages: list[Any]) -> list[QueueEntry]:
    return [QueueEntry(entry_id, fields["group"], fields["episode"]) for entry_id, fields in messages if fields]


class EpisodeQueue:
    """Work distribution for ingestion workers over one stream (``<namespace>:queue``)."""

    def __init__(self, connection: FalkorConnection, keys: GroupKeys) -> None:
        self._connection = connection
        self.stream = keys.queue_stream()
        self._group_ready = False

    async def _ensure_group(self) -> None:
        if self._group_ready:
            return
        try:
            await self._connection.execute("XGROUP", "CREATE", self.stream, CONSUMER_GROUP, "0", "MKSTREAM")
        except StoreError as exc:
            if "BUSYGROUP" not in str(exc):  # the group exists already
                raise
        self._group_ready = True

    async def publish(self, group_id: str, episode_id: str) -> str:
        """Append work for one episode; returns the entry id."""
        return str(await self._connection.execute(
            "XADD", self.stream, "MAXLEN", "~", MAX_LENGTH, "*", "group", group_id, "episode", episode_id
        ))

    async def claim(
        self, consumer: str, *, count: int = 10, block_ms: int | None = None, min_idle_ms: int = 60_000
    ) -> list[QueueEntry]:
        """Up to ``count`` entries for ``consumer``: first those another consumer left idle for
        ``min_idle_ms``, then new ones (waiting up to ``block_ms`` if given)."""
        try:
            return await self._claim(consumer, count, block_ms, min_idle_ms)
        except StoreError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self._group_ready = False  # the stream was deleted (or the server flushed): recreate
            return await self._claim(consumer, count, block_ms, min_idle_ms)

    async def _claim(self, consumer: str, count: int, block_ms: int | None, min_idle_ms: int) -> list[QueueEntry]:
        await self._ensure_group()
        _, stale, *_ = await self._connection.execute(
            "XAUTOCLAIM", self.stream, CONSUMER_GROUP, consumer, min_idle_ms, "0-0", "COUNT", count
        )
        if stale:
            return _entries(stale)
        args: list[Any] = ["XREADGROUP", "GROUP", CONSUMER_GROUP, consumer, "COUNT", count]
        if block_ms is not None:
            args += ["BLOCK", block_ms]
        reply = await self._connection.execute(*args, "STREAMS", self.stream, ">")
        return _entries(reply[0][1]) if reply else []

    async def ack(self, entries: list[QueueEntry]) -> None:
        """The episodes are processed (or deliberately dropped): remove their entries."""
        if not entries:
            return
        ids = [e.entry_id for e in entries]
        await self._connection.execute("XACK", self.stream, CONSUMER_GROUP, *ids)
        await self._connection.execute("XDEL", self.stream, *ids)

    async def backlog(self) -> int:
        """Entries not yet acknowledged (claimed or not)."""
        return int(await self._connection.execute("XLEN", self.stream))
