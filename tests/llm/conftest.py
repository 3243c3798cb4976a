"""Fixtures for the LLM layer's tests: a loopback fake provider, and the forbid-requests fixture."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from chronomem.llm.closing import aclose_model
from chronomem.llm.fakeserver import FakeProviderServer
from chronomem.llm.pytest_plugin import no_model_requests
from chronomem.llm.structured import forget_negotiated_modes
from chronomem.providers.guard import allow_model_requests

__all__ = ["closing", "fake_server", "no_model_requests"]


@pytest.fixture
def fake_server() -> Iterator[FakeProviderServer]:
    """A fresh fake provider on 127.0.0.1; real adapters may talk to it (it is local).

    Learnt structured-output modes are forgotten first: a port can be reused by a later test.
    """
    forget_negotiated_modes()
    with FakeProviderServer() as server, allow_model_requests():
        yield server


@pytest.fixture
async def closing() -> AsyncIterator[Callable[[Any], Any]]:
    """``closing(model)`` returns ``model`` and closes it (its HTTP connections) after the test."""
    models: list[Any] = []

    def track(model: Any) -> Any:
        models.append(model)
        return model

    yield track
    for model in models:
        await aclose_model(model)
