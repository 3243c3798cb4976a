"""Fixtures of the search suite: a scripted graph in a real SQLite store (see search_graph.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from search_graph import Graph, build_graph

from chronomem.embed.testing import HashingEmbedder
from chronomem.store.factory import open_store


@pytest.fixture
async def graph(tmp_path) -> AsyncIterator[Graph]:
    store = await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    embedder = HashingEmbedder()
    await build_graph(store, embedder)
    try:
        yield Graph(store, embedder)
    finally:
        await store.close()
