"""The tests' process clean-up (``tests/processes.py``): whatever way a test ends (a failed
assertion, a fixture that raised after starting a server, Ctrl-C or SIGTERM), nothing it started is
left running, children included; and a process leaked past the end of the session fails the run.

Each case runs pytest on a small test file in a process of its own and then looks for survivors in
``/proc``, by a sentinel in their command lines: a "server" that starts a helper in a session of
its own (as a daemon does), which may also ignore SIGTERM.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import processes

TESTS = Path(__file__).resolve().parent

FAMILY = '''\
import os, signal, subprocess, sys, time

sentinel, pids, *flags = sys.argv[1:]
if "child" in flags:
    if "stubborn" in flags:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
else:
    subprocess.Popen([sys.executable, __file__, sentinel, pids, "child", *flags], start_new_session=True)
with open(pids, "a") as out:
    out.write(f"{os.getpid()}\\n")
time.sleep(300)
'''

SUPPORT = '''\
import sys, time
from pathlib import Path

import processes

HERE = Path(__file__).parent


def start_family(label, *flags):
    """The server (and its helper), started through the tests' helper."""
    return processes.start([sys.executable, str(HERE / "family.py"), {sentinel!r}, str(HERE / f"pids-{{label}}"),
                            *flags])


def wait_for_family(label):
    pids = HERE / f"pids-{{label}}"
    deadline = time.monotonic() + 20
    while not pids.exists() or len(pids.read_text().split()) < 2:
        assert time.monotonic() < deadline, "the server and its helper did not start"
        time.sleep(0.02)
'''


class Run:
    """A pytest run in ``directory`` over ``test_code``, with the clean-up plugin and nothing else."""

    def __init__(self, directory: Path, test_code: str) -> None:
        self.directory = directory
        self.sentinel = f"sentinel-{uuid.uuid4().hex}"
        (directory / "family.py").write_text(FAMILY)
        (directory / "family_support.py").write_text(SUPPORT.format(sentinel=self.sentinel))
        (directory / "conftest.py").write_text(
            f"import signal, sys\nsys.path.insert(0, {str(TESTS)!r})\npytest_plugins = ['processes']\n"
            # Ctrl-C raises KeyboardInterrupt, as in a terminal, even if this run was started in the
            # background of a shell (which starts it with SIGINT ignored)
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n")
        (directory / "test_inner.py").write_text(test_code)

    def __call__(self, interrupt: signal.Signals | None = None) -> tuple[int, str, list[int]]:
        """The run's exit code, its output, and the pids of its processes still running after it."""
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # this repository's plugins are not under test
        inner = processes.start([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_inner.py"],
                                cwd=self.directory, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        with processes.stopping(inner):
            if interrupt is not None:
                ready = self.directory / "ready"
                deadline = time.monotonic() + 30
                while not ready.exists():
                    assert inner.poll() is None and time.monotonic() < deadline, inner.communicate()[0]
                    time.sleep(0.02)
                inner.send_signal(interrupt)  # to pytest only, as the terminal's Ctrl-C now is
            output = inner.communicate(timeout=60)[0]
            # looked for before this test's own clean-up of the run could hide what the run left
            return inner.returncode, output, running(self.sentinel)

    def started(self) -> int:
        """How many processes of the family the run started."""
        return sum(len(pids.read_text().split()) for pids in self.directory.glob("pids-*"))


def running(sentinel: str) -> list[int]:
    """Pids of the live processes with ``sentinel`` in their command line (a zombie's is empty)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if sentinel.encode() in cmdline:
                found.append(int(entry.name))
    return found


def test_a_failing_test_leaves_neither_its_server_nor_the_servers_helper_running(tmp_path: Path) -> None:
    run = Run(tmp_path, '''
import processes
from family_support import start_family, wait_for_family


def test_fails_while_its_server_runs():
    with processes.stopping(start_family("test", "stubborn"), grace=1):
        wait_for_family("test")
        assert False, "the test failed"
''')
    code, output, survivors = run()
    assert code == pytest.ExitCode.TESTS_FAILED and "1 failed" in output, output
    assert run.started() == 2  # the server, and its helper (in a session of its own, ignoring SIGTERM)
    assert survivors == []


def test_a_fixture_or_helper_that_fails_after_starting_a_server_leaves_nothing_running(tmp_path: Path) -> None:
    run = Run(tmp_path, '''
import pytest

import processes
from family_support import start_family, wait_for_family


@pytest.fixture
def server():
    with processes.stopping(start_family("fixture"), grace=1) as process:
        wait_for_family("fixture")
        raise RuntimeError("a setup step after the start failed")
        yield process


def start_ready_server():
    """What start_live_server does: start, then wait until ready (here: never)."""
    process = start_family("helper")
    with processes.stopped_on_error(process):
        wait_for_family("helper")
        raise AssertionError("server did not become ready")


def test_with_a_server(server):
    pass


def test_with_a_server_that_never_gets_ready():
    start_ready_server()
''')
    code, output, survivors = run()
    assert code == pytest.ExitCode.TESTS_FAILED and "1 failed, 1 error" in output, output
    assert run.started() == 4
    assert survivors == []


@pytest.mark.parametrize("interrupt", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_run_leaves_nothing_running(tmp_path: Path, interrupt: signal.Signals) -> None:
    """Ctrl-C (or a SIGTERM, from a CI timeout say) while a test runs: the test's server and a
    session fixture's server are both stopped, and the run reports the interruption."""
    run = Run(tmp_path, '''
import time
from pathlib import Path

import pytest

import processes
from family_support import HERE, start_family, wait_for_family


@pytest.fixture(scope="session")
def session_server():
    with processes.stopping(start_family("session"), grace=1) as process:
        yield process


def test_runs_until_interrupted(session_server):
    with processes.stopping(start_family("test"), grace=1):
        wait_for_family("session")
        wait_for_family("test")
        (HERE / "ready").touch()
        time.sleep(60)
''')
    code, output, survivors = run(interrupt)
    assert code == pytest.ExitCode.INTERRUPTED and "KeyboardInterrupt" in output, output
    assert run.started() == 4
    assert survivors == []


def test_a_process_leaked_past_the_end_of_the_session_is_killed_and_fails_the_run(tmp_path: Path) -> None:
    run = Run(tmp_path, '''
from family_support import start_family, wait_for_family


def test_forgets_to_stop_its_server():
    start_family("leaked")
    wait_for_family("leaked")
''')
    code, output, survivors = run()
    assert "1 passed" in output, output
    assert code == pytest.ExitCode.TESTS_FAILED  # though every test passed
    assert "leaked processes" in output and run.sentinel in output  # which process, named
    assert "started during test_inner.py::test_forgets_to_stop_its_server (call): python" in output
    assert survivors == []


def test_stop_finds_a_helper_that_outlived_its_reaped_server_and_left_its_group(tmp_path: Path) -> None:
    """As when a test SIGKILLs a server (and reaps it): the server's pid no longer names its process
    group, yet the helper it started, in a session of its own and ignoring SIGTERM, is still found
    (by the mark in its environment) and killed."""
    run = Run(tmp_path, "")
    sentinel, pids = run.sentinel, tmp_path / "pids-inline"
    server = processes.start([sys.executable, str(tmp_path / "family.py"), sentinel, str(pids), "stubborn"])
    with processes.stopping(server):
        deadline = time.monotonic() + 20
        while not pids.exists() or len(pids.read_text().split()) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=10)
        [helper] = running(sentinel)
        assert os.getpgid(helper) != server.pid  # not in the server's group: a killpg would miss it
        processes.stop(server, grace=0.5)
        assert running(sentinel) == []
