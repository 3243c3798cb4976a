"""Fixtures of the search suite: a scripted graph (see search_graph.py) in a fresh store of every backend."""

from __future__ import annotations

import pytest
from search_graph import Graph, build_graph

from chronomem.embed.testing import HashingEmbedder
from chronomem.store import Store


@pytest.fixture
async def graph(store: Store) -> Graph:
    embedder = HashingEmbedder()
    await build_graph(store, embedder)
    return Graph(store, embedder)
