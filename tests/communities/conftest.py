"""Fixtures for the community suites: a fresh store per test (every backend), the hashing embedder,
and real model requests forbidden."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from chronomem.embed.testing import HashingEmbedder
from chronomem.llm.guard import forbid_model_requests
from chronomem.store import Store, open_store


def _store_backends(config: pytest.Config) -> list[str]:
    root = Path(__file__).resolve().parent.parent / "conftest.py"
    for plugin in config.pluginmanager.get_plugins():
        module_file = getattr(plugin, "__file__", None)
        if module_file and Path(module_file).resolve() == root:
            return list(plugin.STORE_BACKENDS)
    return ["sqlite"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_backend" in metafunc.fixturenames:
        metafunc.parametrize("store_backend", _store_backends(metafunc.config))


@pytest.fixture(autouse=True)
def _no_real_model_requests() -> Iterator[None]:
    with forbid_model_requests():
        yield


async def _open(name: str, tmp_path: Path) -> Store:
    if name == "sqlite":
        return await open_store(f"sqlite:///{tmp_path / 'communities.db'}")
    if name == "falkordb":  # the session's server (tests/falkordb_server.py), a fresh namespace per test
        from falkordb_server import open_falkordb_store, shared_falkordb_server

        return await open_falkordb_store(shared_falkordb_server().url)
    raise ValueError(f"no community-suite recipe for store backend {name!r}")


@pytest.fixture
async def store(store_backend: str, tmp_path: Path) -> AsyncIterator[Store]:
    opened = await _open(store_backend, tmp_path)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()
