"""Shared fixtures. Backend-parametrized fixtures live here so every suite runs on every store."""

from __future__ import annotations

import os

import pytest

# a FalkorDB server for the tests that need one; the fixture that forbids real model requests
pytest_plugins = ["falkordb_server", "chronomem.llm.pytest_plugin"]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Store backends the contract suite (and scenario suites that opt in) run against.
STORE_BACKENDS = ["sqlite", "falkordb"]


@pytest.fixture(autouse=True)
def _no_real_model_requests(no_model_requests: None) -> None:
    """No test may reach a real model provider; loopback wire-format tests opt back in explicitly."""
