"""Fixtures for the ingestion suites: the hashing embedder and a scripted model (``store``, on every backend,
is the root conftest's)."""

from __future__ import annotations

import pytest
from ingest_doubles import Script

from chronomem.embed.testing import HashingEmbedder
from chronomem.llm.testing import FunctionModel


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def model(script: Script) -> FunctionModel:
    return FunctionModel(script, model_name="scripted")
