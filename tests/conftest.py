"""Shared fixtures. Backend-parametrized fixtures live here so every suite runs on every store."""

from __future__ import annotations

import os

import pytest

pytest_plugins = ["falkordb_server"]  # a FalkorDB server for the tests that need one

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Store backends the contract suite (and scenario suites that opt in) run against.
STORE_BACKENDS = ["sqlite", "falkordb"]
