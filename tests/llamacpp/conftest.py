"""A real llama.cpp server (llama-cpp-python serving the packaged Gemma 3 270M GGUF) for the tests here.

``make test`` prepares it first (``scripts/llamacpp-env``: the wheel is built once per machine and
cached, the venv and the model are laid out) and exports ``CHRONOMEM_LLAMACPP_VENV``; then a
missing server is an error. Run by hand without that variable, the tests skip unless
``.venv-llamacpp`` exists.

One server per session, on a free loopback port, with one thread (two threads collapse to a tenth
of the speed whenever anything else runs on a two-core machine), stopped when the session ends.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

import processes
from chronomem.llm import openai as openai_adapter
from chronomem.llm.structured import forget_negotiated_modes
from chronomem.providers.guard import allow_model_requests

REPO = Path(__file__).resolve().parents[2]
_STARTUP_S = 120.0


@dataclass(frozen=True, slots=True)
class LlamaCppServer:
    base_url: str  # ends in /v1
    model_path: Path
    log_path: Path


def _venv() -> Path:
    configured = os.environ.get("CHRONOMEM_LLAMACPP_VENV")
    venv = Path(configured) if configured else REPO / ".venv-llamacpp"
    if not (venv / "model-path").exists():
        message = f"no llama.cpp server venv at {venv}: run `make llamacpp` (scripts/llamacpp-env)"
        if configured:
            pytest.fail(message)
        pytest.skip(message)
    return venv


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_up(process: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + _STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama.cpp server exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"llama.cpp server not up after {_STARTUP_S:.0f}s:\n{log_path.read_text()[-3000:]}")


@pytest.fixture(scope="session")
def llamacpp_server() -> Iterator[LlamaCppServer]:
    venv = _venv()
    model = Path((venv / "model-path").read_text().strip())
    port = _free_port()
    log_dir = Path(tempfile.mkdtemp(prefix="chronomem-llamacpp-"))
    log_path = log_dir / "server.log"
    command = [
        str(venv / "bin" / "python"), "-m", "llama_cpp.server", "--model", str(model),
        "--n_ctx", "8192", "--chat_format", "gemma", "--n_threads", "1",
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = processes.start(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    with processes.stopping(process, grace=15):  # however the wait, the tests or the session end
        _wait_until_up(process, url, log_path)
        yield LlamaCppServer(url, model, log_path)


@dataclass(slots=True)
class CallLog:
    """Every HTTP call the OpenAI-compatible adapter made: seconds taken and how it ended."""

    calls: list[tuple[float, str]] = field(default_factory=list)

    @property
    def longest_s(self) -> float:
        return max((seconds for seconds, _ in self.calls), default=0.0)


@pytest.fixture
def real_server(llamacpp_server: LlamaCppServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
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
    server: LlamaCppServer
    log: CallLog

    @property
    def base_url(self) -> str:
        return self.server.base_url
