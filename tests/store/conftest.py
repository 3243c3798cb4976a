"""The ``store`` fixture: a fresh, empty store per test, for every backend in ``STORE_BACKENDS``.

A backend joins the contract suite by adding a branch to :func:`open_backend` and its name to
``STORE_BACKENDS`` in ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from chronomem.store import Store, open_store

__all__ = ["open_backend", "pytest_generate_tests", "store"]


def _store_backends(config: pytest.Config) -> list[str]:
    """STORE_BACKENDS of the root conftest, found among pytest's plugins (it is not importable by name)."""
    root = Path(__file__).resolve().parent.parent / "conftest.py"
    for plugin in config.pluginmanager.get_plugins():
        module_file = getattr(plugin, "__file__", None)
        if module_file and Path(module_file).resolve() == root:
            return list(plugin.STORE_BACKENDS)
    raise RuntimeError("tests/conftest.py (STORE_BACKENDS) is not loaded")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_backend" in metafunc.fixturenames:
        metafunc.parametrize("store_backend", _store_backends(metafunc.config))


async def open_backend(name: str, tmp_path: Path) -> Store:
    """A fresh, empty store of backend ``name`` (files under ``tmp_path``)."""
    if name == "sqlite":
        return await open_store(f"sqlite:///{tmp_path / 'contract.db'}")
    if name == "falkordb":  # the session's server (tests/falkordb_server.py), a fresh namespace per test
        from falkordb_server import open_falkordb_store, shared_falkordb_server

        return await open_falkordb_store(shared_falkordb_server().url)
    raise ValueError(f"no contract-suite recipe for store backend {name!r}")


@pytest.fixture
async def store(store_backend: str, tmp_path: Path) -> AsyncIterator[Store]:
    opened = await open_backend(store_backend, tmp_path)
    try:
        yield opened
    finally:
        await opened.close()
