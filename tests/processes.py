"""Every process the tests start is stopped, with its children, however the test ends; a process
still running when the session ends fails the run. (Also a pytest plugin: ``tests/conftest.py``
loads it.)

Why: a failing test, a fixture that raised after starting a server, or a Ctrl-C used to leave
servers and workers running for hours. So:

* :func:`start` is ``subprocess.Popen`` in a session of its own (``start_new_session``): the child
  and whatever it forks are one process group, signalled at once; and a Ctrl-C in the terminal
  reaches pytest only, whose clean-up then stops the processes in order.
* Each started process carries a mark in its environment (:data:`MARK`) that its descendants
  inherit. :func:`stop` and the session-end check look for the mark, not only the group: that still
  finds a child whose parent was SIGKILLed and reaped, or one that left the group, and never names an
  unrelated process that got a recycled pid (``pid_max`` is 32768 on the team's machines).
* :func:`stop` sends SIGTERM, waits a short grace, then SIGKILLs what is left. :func:`stopping` and
  :class:`Scope` call it when a ``with`` block ends, however it ends (failed assertion, exception,
  KeyboardInterrupt); a fixture yields inside one.
* A registry holds every process started, or :func:`adopt`-ed (one that library code started, such
  as a FalkorDB ``ServerProcess``), until it is stopped. When the session ends (after every fixture's
  teardown) :func:`pytest_sessionfinish` kills whatever is still alive and fails the run, naming it.
* SIGTERM and SIGHUP to pytest become a KeyboardInterrupt, as Ctrl-C is, so that a CI timeout or a
  closed terminal also runs the clean-up (the children, in sessions of their own, no longer get the
  terminal's signals). A SIGKILL of pytest (or an ``os._exit``, as pytest-timeout's thread method
  does) can still leave processes behind.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import pytest

__all__ = [
    "GRACE_S",
    "MARK",
    "Scope",
    "adopt",
    "pytest_configure",
    "pytest_sessionfinish",
    "pytest_unconfigure",
    "start",
    "stop",
    "stop_leftovers",
    "stopped_on_error",
    "stopping",
]

MARK = "TESTS_PROCESS_MARK"  # space-separated tokens: the process's own and those of the helpers above it
GRACE_S = 10.0  # from SIGTERM to SIGKILL

P = TypeVar("P", bound="subprocess.Popen[Any]")


@dataclass(eq=False)
class _Started:
    process: subprocess.Popen[Any]
    name: str
    test: str  # the test (and phase) during which it started
    token: str | None  # None: adopted; its descendants carry no mark


_registry: dict[subprocess.Popen[Any], _Started] = {}


def start(args: Sequence[str | os.PathLike[str]], *, env: dict[str, str] | None = None, **popen: Any) -> Any:
    """``subprocess.Popen(args, **popen)`` in a session of its own, marked and registered: stop it with
    :func:`stop` (or start it inside :func:`stopping` / :class:`Scope`)."""
    token = os.urandom(8).hex()
    base = os.environ if env is None else env
    marked_env = {**base, MARK: f"{base.get(MARK, '')} {token}".strip()}
    process = subprocess.Popen(args, env=marked_env, start_new_session=True, **popen)
    _registry[process] = _Started(process, _describe(args), _current_test(), token)
    return process


def adopt(process: P, name: str) -> P:
    """Register a process started elsewhere (library code that calls ``Popen`` itself), so that the
    session-end check kills it and names it if it is still running then; its children are not tracked."""
    _registry[process] = _Started(process, name, _current_test(), None)
    return process


def stop(*processes: subprocess.Popen[Any], grace: float = GRACE_S) -> None:
    """SIGTERM to each process and its children, up to ``grace`` seconds (shared) for all to exit, then
    SIGKILL to what is left; their pipes are drained and closed. Stopping a stopped process does nothing."""
    entries = [_registry.get(p) or _Started(p, _describe(p.args), _current_test(), None) for p in processes]
    try:
        for entry in entries:
            _signal(entry, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for entry in entries:
            _wait(entry, deadline)
    finally:  # after the grace, or at once if the wait was interrupted (a second Ctrl-C)
        for entry in entries:
            _signal(entry, signal.SIGKILL)
        for entry in entries:
            _wait(entry, time.monotonic() + 5)
            _close_pipes(entry)
            if not _alive(entry):
                _registry.pop(entry.process, None)


@contextmanager
def stopping(process: P, grace: float = GRACE_S) -> Iterator[P]:
    """``process``, stopped when the block ends, however it ends."""
    try:
        yield process
    finally:
        stop(process, grace=grace)


@contextmanager
def stopped_on_error(process: P) -> Iterator[P]:
    """For a helper that waits for ``process`` to be ready before returning it: if the wait fails (or
    is interrupted), stop the process before the error propagates."""
    try:
        yield process
    except BaseException:
        stop(process)
        raise


class Scope:
    """The processes :meth:`add`-ed inside a ``with`` block (restarts included), stopped together
    when it ends, however it ends."""

    def __init__(self, grace: float = GRACE_S) -> None:
        self.grace = grace
        self._processes: list[subprocess.Popen[Any]] = []

    def add(self, process: P) -> P:
        self._processes.append(process)
        return process

    def __enter__(self) -> Scope:
        return self

    def __exit__(self, *exc_info: object) -> None:
        stop(*self._processes, grace=self.grace)


def stop_leftovers(grace: float = 5.0) -> list[str]:
    """Stop every registered process that is still running (or whose children are); describe each.
    The others (stopped by their tests without :func:`stop`) are reaped and forgotten."""
    running = _scan()  # once: the registry holds every process of the session
    leftovers = [entry for entry in _registry.values() if _alive(entry, running)]
    descriptions = [_leftover(entry, running) for entry in leftovers]
    stop(*(entry.process for entry in leftovers), grace=grace)
    for entry in [entry for entry in _registry.values() if entry not in leftovers]:
        entry.process.poll()  # reaps it
        _close_pipes(entry)
        _registry.pop(entry.process, None)
    return descriptions


# -- the pytest plugin --------------------------------------------------------------------------------


@pytest.hookimpl(trylast=True)  # after the runner's hook (which tears the fixtures down) and falkordb_server's
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    leaked = stop_leftovers()
    if not leaked:
        return
    lines = ["processes started by the tests were still running when the session ended (now killed):", *leaked]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("")  # ends the progress line
        reporter.write_sep("!", "leaked processes", red=True)
        for line in lines:
            reporter.write_line(line, red=True)
    else:
        print("\n".join(lines), file=sys.stderr)
    if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_replaced: dict[int, Any] = {}


def pytest_configure(config: pytest.Config) -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) == signal.SIG_DFL:  # not one someone installed, nor an ignored SIGHUP (nohup)
            _replaced[signum] = signal.signal(signum, _interrupt)


def pytest_unconfigure(config: pytest.Config) -> None:
    while _replaced:
        signum, previous = _replaced.popitem()
        signal.signal(signum, previous)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


# -- finding and signalling a process's family ----------------------------------------------------------


def _scan() -> dict[str, list[int]]:
    """Each token, and the pids of the running (not zombie) processes whose environment carries it."""
    running: dict[str, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            for token in _marks(entry.name):
                running.setdefault(token, []).append(int(entry.name))
    return running


def _marks(pid: str | int) -> list[str]:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()  # empty for a zombie; unreadable: not ours
    except OSError:
        return []
    for variable in environ.split(b"\0"):
        name, _, value = variable.partition(b"=")
        if name == MARK.encode():
            return value.decode().split()
    return []


def _signal(entry: _Started, signum: int) -> None:
    process = entry.process
    if entry.token is None:
        if process.poll() is None:
            process.send_signal(signum)
        return
    if process.returncode is None:  # not reaped yet, so its pid is still its group's id, not a recycled one
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signum)
    for pid in _scan().get(entry.token, []):  # children that left the group, or outlived a reaped parent
        try:
            handle = os.pidfd_open(pid)
        except OSError:
            continue  # gone meanwhile
        try:
            if entry.token in _marks(pid):  # still the process found above, not one that reused its pid
                signal.pidfd_send_signal(handle, signum)
        except OSError:
            pass
        finally:
            os.close(handle)


def _alive(entry: _Started, running: dict[str, list[int]] | None = None) -> bool:
    """Whether the process, or a child of it, still runs (``running``: a :func:`_scan` already made)."""
    if entry.token is None:
        return entry.process.poll() is None
    return bool((_scan() if running is None else running).get(entry.token))


def _wait(entry: _Started, deadline: float) -> None:
    """Until the process and its marked children have exited, or the deadline. ``communicate`` reads
    what is left in its pipes (a process blocked writing to a full pipe would not exit) and reaps it."""
    if entry.process.returncode is None:
        with suppress(subprocess.TimeoutExpired):
            entry.process.communicate(timeout=max(0.0, deadline - time.monotonic()))
    while _alive(entry) and time.monotonic() < deadline:
        time.sleep(0.05)


def _close_pipes(entry: _Started) -> None:
    if entry.process.returncode is not None:  # reaped: its pipes can go (communicate may not have run)
        for stream in (entry.process.stdin, entry.process.stdout, entry.process.stderr):
            if stream is not None:
                stream.close()


def _leftover(entry: _Started, running: dict[str, list[int]]) -> str:
    children = [pid for pid in running.get(entry.token, []) if pid != entry.process.pid] if entry.token else []
    family = f"pid {entry.process.pid}" + (f" (children {children})" if children else "")
    return f"  {family}, started during {entry.test}: {entry.name}"


def _describe(args: Any) -> str:
    words = [str(a) for a in args] if isinstance(args, (list, tuple)) else [str(args)]
    if words and words[0] == sys.executable:
        words[0] = "python"
    text = shlex.join(words)
    return text if len(text) <= 200 else text[:197] + "..."


def _current_test() -> str:
    return os.environ.get("PYTEST_CURRENT_TEST", "no test (session start or end)")
