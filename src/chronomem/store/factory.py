"""Open a store from a URL; the backend modules are imported only when asked for."""

from __future__ import annotations

from chronomem.errors import ConfigurationError
from chronomem.store.base import Store

__all__ = ["open_store"]


async def open_store(url: str) -> Store:
    """``sqlite:///relative.db``, ``sqlite:////abs/path.db``, ``sqlite://:memory:``,
    ``falkordb://host:port`` (or ``falkordb+cluster://host:port`` for a Redis Cluster)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ConfigurationError(f"store URL {url!r} has no scheme; try sqlite:///chronomem.db")
    if scheme == "sqlite":
        from chronomem.store.sqlite import SQLiteStore

        path = rest[1:] if rest.startswith("/") else rest  # sqlite:///x.db -> x.db, sqlite:////abs -> /abs
        return await SQLiteStore.open(path or ":memory:")
    if scheme in ("falkordb", "falkordb+cluster", "redis"):
        from chronomem.store.falkordb import FalkorDBStore

        return await FalkorDBStore.connect(url)
    raise ConfigurationError(f"unknown store scheme {scheme!r} in {url!r}: use sqlite:// or falkordb://")
