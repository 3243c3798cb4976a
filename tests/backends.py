"""Store backends for the suites that run on every backend (contract, ingestion, retrieval, communities).

A backend joins by adding its name to ``STORE_BACKENDS`` in ``tests/conftest.py`` and a branch here.
"""

from __future__ import annotations

from pathlib import Path

from chronomem.store import Store, open_store

__all__ = ["open_backend"]


async def open_backend(name: str, tmp_path: Path) -> Store:
    """A fresh, empty store of backend ``name`` (files under ``tmp_path``)."""
    if name == "sqlite":
        return await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    if name == "falkordb":  # the session's server (tests/falkordb_server.py), a fresh namespace per test
        from falkordb_server import open_falkordb_store, shared_falkordb_server

        return await open_falkordb_store(shared_falkordb_server().url)
    raise ValueError(f"no recipe for store backend {name!r}")
