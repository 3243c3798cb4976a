"""Shared fixtures. ``store`` is a fresh, empty store per test for every backend in STORE_BACKENDS:
the contract, ingestion, retrieval and community suites run unchanged on each."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from backends import open_backend
from chronomem.store import Store

# every process a test starts stopped, and a leaked one failing the run; a FalkorDB server for the
# tests that need one; the fixture that forbids real model requests
pytest_plugins = ["processes", "falkordb_server", "chronomem.llm.pytest_plugin"]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Store backends the backend-parametrized suites run against.
STORE_BACKENDS = ["sqlite", "falkordb"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_backend" in metafunc.fixturenames:
        metafunc.parametrize("store_backend", STORE_BACKENDS)


@pytest.fixture
async def store(store_backend: str, tmp_path: Path) -> AsyncIterator[Store]:
    opened = await open_backend(store_backend, tmp_path)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture(autouse=True)
def _no_real_model_requests(no_model_requests: None) -> None:
    """No test may reach a real model provider; loopback wire-format tests opt back in explicitly."""
