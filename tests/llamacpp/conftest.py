"""A real llama.cpp server serving the packaged Qwen2.5-Coder-1.5B-Instruct, for the tests here.

The server is chronomem's own managed one (:class:`chronomem.llm.local_model.LocalServer`: the
model joined from its registry parts into the cache, llama-cpp-python's server with its prompt
cache), so these tests run the path ``CHRONOMEM_LLM_MODEL=local`` runs. ``make test`` installs the
``local-model`` extra and sets ``CHRONOMEM_REAL_MODEL_TESTS=1``: then a missing model or server is
an error; run by hand without it, the tests skip.

One server per session, on a free loopback port, stopped when the session ends.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

import processes
from chronomem.errors import MissingExtraError
from chronomem.llm import openai as openai_adapter
from chronomem.llm.local_model import LocalServer, ServerOptions, assemble, local_model
from chronomem.llm.structured import forget_negotiated_modes
from chronomem.providers.guard import allow_model_requests

MODEL = "qwen2.5-coder-1.5b"


def _model_path() -> Any:
    required = os.environ.get("CHRONOMEM_REAL_MODEL_TESTS") == "1"
    try:
        if importlib.util.find_spec("llama_cpp") is None:
            raise MissingExtraError("llama-cpp-python", "local-model")
        return assemble(local_model(MODEL))
    except MissingExtraError as missing:
        if required:
            pytest.fail(f"the real-model tests need the packaged model: {missing}")
        pytest.skip(str(missing))


@pytest.fixture(scope="session")
def model_path() -> Any:
    return _model_path()


@pytest.fixture(scope="session")
def llamacpp_server(model_path: Any) -> Iterator[LocalServer]:
    # two threads: pytest only waits while the server works; a fixed seed and temperature 0 (the
    # settings' default) make its answers repeatable
    server = LocalServer(model_path, ServerOptions(threads=2, startup_s=300))
    try:
        server.start()
        assert server.process is not None
        processes.adopt(server.process, "llama.cpp server (local model)")
        yield server
    finally:
        server.stop()


@dataclass(slots=True)
class CallLog:
    """Every HTTP call the OpenAI-compatible adapter made: seconds taken and how it ended."""

    calls: list[tuple[float, str]] = field(default_factory=list)

    @property
    def longest_s(self) -> float:
        return max((seconds for seconds, _ in self.calls), default=0.0)


@pytest.fixture
def real_server(llamacpp_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The server, with real requests allowed, modes forgotten (each test negotiates) and every
    adapter request timed (``real_server.log``)."""
    forget_negotiated_modes()
    log = CallLog()
    post = openai_adapter.post_json

    async def timed_post(*args: Any, **kwargs: Any) -> dict[str, Any]:
        started = time.perf_counter()
        outcome = "ok"
        try:
            return await post(*args, **kwargs)
        except Exception as error:
            outcome = f"{type(error).__name__}: {str(error)[:160]}"
            raise
        finally:
            log.calls.append((time.perf_counter() - started, outcome))

    monkeypatch.setattr(openai_adapter, "post_json", timed_post)
    with allow_model_requests():
        yield _Handle(llamacpp_server, log)


@dataclass(frozen=True, slots=True)
class _Handle:
    server: LocalServer
    log: CallLog

    @property
    def base_url(self) -> str:
        return self.server.base_url
