"""Fixtures for the embedder tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chronomem.llm.fakeserver import FakeProviderServer
from chronomem.providers.guard import allow_model_requests


@pytest.fixture
def embeddings_server() -> Iterator[FakeProviderServer]:
    """A loopback server answering /v1/embeddings with deterministic 8-dimensional vectors."""
    with FakeProviderServer(embedding_dimension=8) as server, allow_model_requests():
        yield server
