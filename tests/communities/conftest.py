"""Fixtures for the community suites (the ``store`` fixture, on every backend, is the root conftest's)."""

from __future__ import annotations

import pytest

from chronomem.embed.testing import HashingEmbedder


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()
