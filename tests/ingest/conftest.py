"""Fixtures for the ingestion suites: a real SQLite store per test, the hashing embedder, a scripted model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from ingest_doubles import Script

from chronomem.embed.testing import HashingEmbedder
from chronomem.llm.testing import FunctionModel
from chronomem.store.base import Store
from chronomem.store.factory import open_store


@pytest.fixture
async def store(tmp_path: Any) -> AsyncIterator[Store]:
    opened = await open_store(f"sqlite:///{tmp_path}/graph.db")
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def model(script: Script) -> FunctionModel:
    return FunctionModel(script, model_name="scripted")
