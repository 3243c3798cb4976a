"""Pytest fixtures for code that uses models (imports pytest: for test suites only).

Use it as a plugin (``pytest_plugins = ["chronomem.llm.pytest_plugin"]``) or import the fixture
into a ``conftest.py``. To forbid real model requests in every test, make it autouse there::

    @pytest.fixture(autouse=True)
    def _no_real_model_requests(no_model_requests): ...
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chronomem.providers.guard import forbid_model_requests

__all__ = ["no_model_requests"]


@pytest.fixture
def no_model_requests() -> Iterator[None]:
    """Real adapters raise ``ModelCallForbiddenError`` before any I/O while this fixture is active."""
    with forbid_model_requests():
        yield
