"""A real ``chronomem serve`` over a seeded memory, and Debian's chromium driven by Playwright.

The browser is the system one (``/usr/bin/chromium``, installed by ``scripts/install-browser``, which
``make test`` runs): Playwright's own browser download is never used. A machine without it fails
these tests; it does not skip them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from explorer_support import CHROMIUM, CHROMIUM_ARGS, Server, seed_in_process, start_server

import processes
from service_support import free_port


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("explorer")
    seeded = seed_in_process(data_dir)
    port = free_port()
    with processes.stopping(start_server(data_dir, port), grace=15):
        yield Server(f"http://127.0.0.1:{port}", seeded, data_dir)


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
