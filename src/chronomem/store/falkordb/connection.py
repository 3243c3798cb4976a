"""Connections to a FalkorDB server or Redis Cluster: pooling, timeouts, retries, error translation.

One :class:`FalkorConnection` wraps a redis-py asyncio client (a blocking pool for a single server,
``RedisCluster`` for a cluster, which routes each graph command to the shard that owns its key).
Connection loss, timeouts, a server still loading its AOF and cluster reconfiguration are retried
with exponential backoff until ``retry_seconds`` have passed, then surface as
:class:`StoreUnavailableError`; every other redis error becomes :class:`StoreError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

from chronomem.errors import ConfigurationError, MissingExtraError, StoreError, StoreUnavailableError
from chronomem.store.falkordb.keys import DEFAULT_NAMESPACE
from chronomem.store.falkordb.params import params_header
from chronomem.store.falkordb.replies import decode_rows, decode_stats

__all__ = ["ConnectionSettings", "FalkorConnection", "MissingGraphError", "parse_url"]

T = TypeVar("T")
_SCHEMES = {"falkordb": False, "redis": False, "falkordb+cluster": True, "redis+cluster": True}


class MissingGraphError(StoreError):
    """A read addressed a graph that does not exist (the group holds nothing)."""


@dataclass(frozen=True, slots=True)
class ConnectionSettings:
    host: str = "127.0.0.1"
    port: int = 6379
    cluster: bool = False
    username: str | None = None
    password: str | None = None
    namespace: str = DEFAULT_NAMESPACE
    max_connections: int = 32
    socket_timeout: float = 30.0  # seconds a reply may take (bulk writes and HNSW inserts are slow)
    connect_timeout: float = 5.0
    retry_seconds: float = 20.0  # how long connection loss is retried before StoreUnavailableError
    ef_runtime: int = 500  # HNSW candidates per search, for vector indexes created from now on


def parse_url(url: str) -> ConnectionSettings:
    """``falkordb://[user:password@]host:port[?namespace=…&max_connections=…&socket_timeout=…
    &connect_timeout=…&retry_seconds=…&ef_runtime=…]``; ``falkordb+cluster://`` for a Redis Cluster."""
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES:
        raise ConfigurationError(f"not a FalkorDB URL: {url!r}")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    try:
        options: dict[str, Any] = {
            "namespace": query.pop("namespace", DEFAULT_NAMESPACE),
            **{k: int(query.pop(k)) for k in ("max_connections", "ef_runtime") if k in query},
            **{k: float(query.pop(k)) for k in ("socket_timeout", "connect_timeout", "retry_seconds") if k in query},
        }
        port = parts.port or 6379
    except ValueError as exc:
        raise ConfigurationError(f"bad option in FalkorDB URL {url!r}: {exc}") from exc
    if query:
        raise ConfigurationError(f"unknown FalkorDB URL options: {sorted(query)}")
    return ConnectionSettings(
        host=parts.hostname or "127.0.0.1",
        port=port,
        cluster=_SCHEMES[parts.scheme],
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        **options,
    )


def _redis() -> Any:
    try:
        import redis.asyncio as aioredis
        import redis.exceptions
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise MissingExtraError("falkordb", "falkordb") from exc
    return aioredis, redis.exceptions


_UNDEFINED_ATTRIBUTE_DELAYS = (0.02, 0.05, 0.1, 0.2, 0.4, 0.8)  # seconds between retries of such a read


class FalkorConnection:
    """Runs graph queries and plain commands with retries; safe to share between tasks."""

    def __init__(self, client: Any, settings: ConnectionSettings) -> None:
        self._client = client
        self.settings = settings
        _, errors = _redis()
        self._errors = errors
        self._retryable = (errors.ConnectionError, errors.TimeoutError, errors.ClusterDownError,
                           errors.TryAgainError, errors.MasterDownError, OSError)

    @classmethod
    def open(cls, settings: ConnectionSettings) -> FalkorConnection:
        aioredis, _ = _redis()
        from redis.asyncio.retry import Retry  # the asyncio type: redis 8.2 warns on the sync one
        from redis.backoff import NoBackoff

        common: dict[str, Any] = {
            "username": settings.username, "password": settings.password, "decode_responses": True,
            "socket_timeout": settings.socket_timeout, "socket_connect_timeout": settings.connect_timeout,
            "retry": Retry(NoBackoff(), 0),  # our own loop retries, with a deadline
        }
        if settings.cluster:
            from redis.asyncio.cluster import RedisCluster

            client = RedisCluster(host=settings.host, port=settings.port,
                                  max_connections=settings.max_connections, **common)
        else:
            pool = aioredis.BlockingConnectionPool(
                host=settings.host, port=settings.port, max_connections=settings.max_connections,
                timeout=settings.socket_timeout, **common,
            )
            client = aioredis.Redis(connection_pool=pool)
        return cls(client, settings)

    async def close(self) -> None:
        await self._client.aclose()
        pool = getattr(self._client, "connection_pool", None)
        if pool is not None:  # a pool we built is not closed by the client that borrows it
            await pool.disconnect()

    # -- commands ------------------------------------------------------------------------------------

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        deadline = time.monotonic() + self.settings.retry_seconds
        delay = 0.05
        while True:
            try:
                return await call()
            except self._retryable as exc:
                if time.monotonic() + delay > deadline:
                    raise StoreUnavailableError(f"FalkorDB unreachable: {exc}") from exc
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
            except self._errors.ResponseError as exc:
                if "empty key" in str(exc):
                    raise MissingGraphError(str(exc)) from exc
                raise StoreError(f"FalkorDB refused a command: {exc}") from exc
            except self._errors.RedisError as exc:
                raise StoreError(f"FalkorDB failed: {exc}") from exc

    async def execute(self, *args: Any, **options: Any) -> Any:
        """A plain Redis command, retried on connection loss."""
        return await self._retrying(lambda: self._client.execute_command(*args, **options))

    async def query(
        self, key: str, text: str, params: Mapping[str, Any] | None = None, *, read_only: bool = False
    ) -> list[list[Any]]:
        """Run Cypher on one graph; rows of scalars. Values travel only in the parameter header."""
        command = "GRAPH.RO_QUERY" if read_only else "GRAPH.QUERY"
        for delay in (*_UNDEFINED_ATTRIBUTE_DELAYS, None):
            try:
                reply = await self.execute(command, key, params_header(params) + text, "--compact")
            except StoreError as exc:
                # FalkorDB 4.16.3 refuses a read now and then while another connection writes the
                # same graph ("Attempted to access undefined attribute"; bench/failover.py, 69 of
                # 180 searches); the same read succeeds a moment later
                if delay is None or not read_only or "undefined attribute" not in str(exc):
                    raise
                await asyncio.sleep(delay)
                continue
            return decode_rows(reply)
        raise AssertionError("unreachable")  # pragma: no cover

    async def update(self, key: str, text: str, params: Mapping[str, Any] | None = None) -> dict[str, float]:
        """Run a writing query; its statistics (``Nodes created`` …) tell what it changed."""
        reply = await self.execute("GRAPH.QUERY", key, params_header(params) + text, "--compact")
        return decode_stats(reply)

    # -- cluster awareness ---------------------------------------------------------------------------

    def primaries(self) -> list[Any]:
        """Primary nodes of a cluster (empty for a single server)."""
        return list(self._client.get_primaries()) if self.settings.cluster else []

    def node_of(self, key: str) -> str:
        """``host:port`` of the server that owns ``key``."""
        if not self.settings.cluster:
            return f"{self.settings.host}:{self.settings.port}"
        return str(self._client.get_node_from_key(key).name)

    async def on_every_primary(self, *args: Any) -> list[Any]:
        """Run a keyless command on every primary (one server: just that one). When a primary does
        not answer, the cluster's topology is read again before the next attempt: after a failover
        its replica is the primary now, and the dead node must not be asked forever
        (bench/failover.py found the worker and every search stuck on it)."""
        if not self.settings.cluster:
            return [await self.execute(*args)]
        if not self.primaries():
            await self._retrying(self._client.initialize)

        async def attempt() -> list[Any]:
            nodes = self.primaries()
            try:
                return list(await asyncio.gather(*(self._client.execute_command(*args, target_nodes=n) for n in nodes)))
            except self._retryable:
                with contextlib.suppress(Exception):  # no node answered yet: the next attempt reads it again
                    await self._client.nodes_manager.initialize()
                raise

        return await self._retrying(attempt)
