"""A real ``chronomem serve`` over a seeded memory, and Debian's chromium driven by Playwright.

The browser is the system one (``/usr/bin/chromium``, installed by ``scripts/install-browser``, which
``make test`` runs): Playwright's own browser download is never used. A machine without it fails
these tests; it does not skip them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from explorer_seed import EMBEDDER, Seeded

from service_support import ROOT, free_port

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SCREENSHOTS = ROOT / "bench" / "out"


class Server:
    def __init__(self, base: str, seeded: Seeded, data_dir: Path) -> None:
        self.base = base
        self.seeded = seeded
        self.data_dir = data_dir

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers={"Authorization": f"Bearer {self.seeded.key}"}, timeout=10)


def seed_in_process(data_dir: Path) -> Seeded:
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("explorer_seed.py")), str(data_dir)],
                          env=env(), capture_output=True, text=True, timeout=120, check=True)
    return Seeded(**json.loads(done.stdout.strip().splitlines()[-1]))


def env() -> dict[str, str]:
    tests = Path(__file__).resolve().parents[1]
    path = os.pathsep.join([str(ROOT / "src"), str(tests)])
    return {**os.environ, "CHRONOMEM_EMBEDDER": EMBEDDER, "PYTHONPATH": path}


def chronomem(data_dir: Path, *args: str) -> list[str]:
    """The command line of ``chronomem --data-dir DATA_DIR ARGS...``."""
    return [sys.executable, "-m", "chronomem.cli", "--data-dir", str(data_dir), *args]


def start_server(data_dir: Path, port: int, command: str = "serve", *extra: str) -> subprocess.Popen[bytes]:
    """``chronomem serve`` (or ``ui``) on loopback over ``data_dir``, with the embedder the seed used."""
    with open(data_dir / "server.log", "ab") as log:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(chronomem(data_dir, command, "--port", str(port), *extra),
                                   env=env(), stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chronomem {command} exited: {(data_dir / 'server.log').read_text()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"chronomem {command} did not become ready in 60 s")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("explorer")
    seeded = seed_in_process(data_dir)
    port = free_port()
    process = start_server(data_dir, port)
    try:
        yield Server(f"http://127.0.0.1:{port}", seeded, data_dir)
    finally:
        process.terminate()
        process.wait(timeout=15)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    assert CHROMIUM.exists(), "no /usr/bin/chromium: run scripts/install-browser (make test does)"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _tab(browser, server: Server, *, bypass_csp: bool):
    """A fresh tab that refuses, and records, every request leaving the machine."""
    context = browser.new_context(viewport={"width": 1400, "height": 860}, bypass_csp=bypass_csp)
    tab = context.new_page()
    tab.outside = []
    tab.errors = []

    def only_local(route) -> None:
        url = route.request.url
        if url.startswith((server.base, "data:", "blob:")):
            route.continue_()
        else:
            tab.outside.append(url)
            route.abort()

    tab.route("**/*", only_local)
    tab.on("pageerror", lambda error: tab.errors.append(str(error)))
    return tab


@pytest.fixture
def page(browser, server: Server):
    """A tab for driving the explorer: its Content-Security-Policy is bypassed so that the test can
    evaluate scripts in it (``strict_page`` keeps the policy)."""
    tab = _tab(browser, server, bypass_csp=True)
    yield tab
    tab.context.close()


@pytest.fixture
def strict_page(browser, server: Server):
    """A tab that enforces the pages' Content-Security-Policy, as a user's browser does."""
    tab = _tab(browser, server, bypass_csp=False)
    yield tab
    tab.context.close()
