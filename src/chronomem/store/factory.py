"""Open a store from a URL, or learn what its backend can do without opening it; the backend modules
are imported only when asked for."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chronomem.errors import ConfigurationError
from chronomem.store.base import Store

if TYPE_CHECKING:
    from chronomem.store.settings import StoreSettings

__all__ = ["StoreTraits", "open_store", "sqlite_file", "store_traits"]

_SQLITE = ("sqlite",)
_FALKORDB = ("falkordb", "falkordb+cluster", "redis")


@dataclass(frozen=True, slots=True)
class StoreTraits:
    """What a deployment must respect about a backend (the CLI refuses layouts that break it)."""

    single_queue_consumer: bool
    """One process at a time consumes the episode queue (SQLite: a lock on the file), so several
    server processes cannot each run in-process workers."""
    supports_shards: bool
    """Several worker processes can split the groups between them (``chronomem worker --shard``)."""
    shared_control_plane: bool
    """The service keeps its control plane (keys, users, threads, tasks) on the store's server, so
    API servers on several machines share it; else in a local SQLite file beside the store."""


_TRAITS = {
    "sqlite": StoreTraits(single_queue_consumer=True, supports_shards=False, shared_control_plane=False),
    "falkordb": StoreTraits(single_queue_consumer=False, supports_shards=True, shared_control_plane=True),
}


def _backend(url: str) -> tuple[str, str]:
    """``(backend, rest of the URL after "://")``; a URL without a known scheme is a configuration
    error."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ConfigurationError(f"store URL {url!r} has no scheme; try sqlite:///chronomem.db")
    if scheme in _SQLITE:
        return "sqlite", rest
    if scheme in _FALKORDB:
        return "falkordb", rest
    raise ConfigurationError(f"unknown store scheme {scheme!r} in {url!r}: use sqlite:// or falkordb://")


def store_traits(url: str) -> StoreTraits:
    """The traits of the backend ``url`` names, without connecting to it."""
    backend, _ = _backend(url)
    return _TRAITS[backend]


def sqlite_file(url: str) -> Path | None:
    """The file of an embedded SQLite store's URL; ``None`` for a server store or ``:memory:``."""
    backend, rest = _backend(url)
    if backend != "sqlite":
        return None
    path = _sqlite_path(rest)
    return Path(path) if path and path != ":memory:" else None


def _sqlite_path(rest: str) -> str:
    return rest[1:] if rest.startswith("/") else rest  # sqlite:///x.db -> x.db, sqlite:////abs -> /abs


async def open_store(url: str, settings: StoreSettings | None = None) -> Store:
    """``sqlite:///relative.db``, ``sqlite:////abs/path.db``, ``sqlite://:memory:``,
    ``falkordb://host:port`` (or ``falkordb+cluster://host:port`` for a Redis Cluster); ``settings``
    tune the backend's indexes (default: ``StoreSettings()``)."""
    backend, rest = _backend(url)
    if backend == "sqlite":
        from chronomem.store.settings import StoreSettings
        from chronomem.store.sqlite import SQLiteStore

        settings = settings or StoreSettings()
        return await SQLiteStore.open(_sqlite_path(rest) or ":memory:", ann_from=settings.sqlite_ann_from)
    from chronomem.store.falkordb import FalkorDBStore

    return await FalkorDBStore.connect(url)
