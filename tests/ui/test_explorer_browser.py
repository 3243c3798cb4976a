"""The explorer in a real browser (Debian's headless chromium) against a real ``chronomem serve``
over the seeded memory of ``explorer_seed.py``: what a user clicks and what they then see."""

from __future__ import annotations

import re

import pytest
from explorer_support import SCREENSHOTS, Server

pytestmark = pytest.mark.integration

READY = "body[data-state=ready]"


def open_explorer(page, server: Server) -> None:
    page.goto(f"{server.base}/ui/")
    page.wait_for_selector("#key-form:not([hidden])")
    page.fill("#key", server.seeded.key)
    page.click("#key-form button[type=submit]")
    page.wait_for_function("document.body.dataset.state === 'ready' && window.chronomemExplorer.state.pages.length > 0")


def settle(page) -> None:
    page.wait_for_selector(READY)


def open_entity(page, name: str) -> None:
    page.click("#tab-entities")
    page.click(f"#entity-list button:text-matches('^{re.escape(name)} \\\\(')")
    page.wait_for_selector(f"#card-title:text-is('{name}')")
    settle(page)


def shown_facts(page) -> list[str]:
    """The texts of the fact rows the entity card shows (hidden rows are not shown)."""
    return page.eval_on_selector_all(
        "#panel-details li.fact:not([hidden]) .fact-text", "rows => rows.map(row => row.textContent)")


def drawn_facts(page) -> list[str]:
    """The relation types and ends of the facts the graph draws in view."""
    return page.evaluate("""() => window.chronomemExplorer.graph.cy.edges('.fact')
        .filter(e => !e.hasClass('out-of-view'))
        .map(e => `${e.source().data('name')} ${e.data('label')} ${e.target().data('name')}`)""")


def set_time(page, slider: str, value: str) -> None:
    page.fill(f"#{slider}", value)
    page.press(f"#{slider}", "Enter")
    page.wait_for_timeout(50)
    settle(page)


def test_the_page_draws_the_graph_from_local_files_only(page, server: Server) -> None:
    open_explorer(page, server)
    assert page.inner_text("#project") == "explorer-test"
    names = page.evaluate("() => window.chronomemExplorer.graph.cy.nodes('.entity').map(n => n.data('name'))")
    assert {"Alice", "Bob", "Carol", "Acme", "Globex", "Lisbon"} <= set(names)
    # The hyperedge (Alice, Bob and Carol founded a book club) is a hub with a spoke to each of the three;
    # so is every fact whose text names a third entity ("Alice moved to Lisbon with Bob").
    spokes = page.evaluate("""() => window.chronomemExplorer.graph.cy.nodes('.hub')
        .map(hub => [hub.data('label'), hub.connectedEdges().map(e => e.target().data('name')).sort()])""")
    assert ["FOUNDED_WITH", ["Alice", "Bob", "Carol"]] in spokes
    assert ["Alice", "Bob", "Lisbon"] in [names for _, names in spokes]
    assert all(len(names) >= 3 for _, names in spokes)
    # Current facts only: Alice works for Globex now, not for Acme.
    assert "Alice WORKS_FOR Globex" in drawn_facts(page)
    assert "Alice WORKS_FOR Acme" not in drawn_facts(page)
    # Sizes follow mentions: Bob (3 episodes) is drawn larger than Acme (none).
    sizes = page.evaluate("() => Object.fromEntries(window.chronomemExplorer.graph.cy.nodes('.entity')"
                          ".map(n => [n.data('name'), n.data('size')]))")
    assert sizes["Bob"] > sizes["Acme"]
    page.screenshot(path=str(SCREENSHOTS / "explorer-graph.png"))
    assert page.outside == [] and page.errors == []


def test_clicking_an_entity_shows_its_facts_and_episodes(page, server: Server) -> None:
    open_explorer(page, server)
    page.evaluate("id => window.chronomemExplorer.graph.cy.getElementById(id).emit('tap')", server.seeded.alice_id)
    page.wait_for_selector("#card-title:text-is('Alice')")
    settle(page)
    facts = shown_facts(page)
    assert "Alice works for Globex" in facts and "Alice moved to Lisbon" in facts
    assert "Alice works for Acme" not in facts  # superseded: hidden unless asked for
    globex = page.locator(f"li.fact[data-fact-id='{server.seeded.globex_fact_id}'] .span")
    assert globex.inner_text() == "2023-06-01 – …"
    episodes = page.inner_text("#panel-details ul.episodes")
    assert "moved to Lisbon" in episodes and "book club" in episodes

    # Superseded facts on request, with when they stopped being true.
    page.check("#superseded")
    settle(page)
    acme = page.locator(f"li.fact[data-fact-id='{server.seeded.acme_fact_id}']")
    assert acme.is_visible() and acme.get_attribute("data-in-view") == "false"
    assert acme.locator(".span").inner_text() == "2020-01-01 – 2023-06-01"
    page.screenshot(path=str(SCREENSHOTS / "explorer-entity.png"))


def test_an_episode_shows_what_it_produced(page, server: Server) -> None:
    open_explorer(page, server)
    open_entity(page, "Alice")
    page.click("#panel-details ul.episodes button:has-text('moved to Lisbon')")
    page.wait_for_selector(f"article[data-episode-id='{server.seeded.lisbon_episode_id}']")
    settle(page)
    assert page.inner_text(".episode-text") == "Alice: I moved to Lisbon with Bob."
    mentioned = page.eval_on_selector_all("#panel-details .inline button", "bs => bs.map(b => b.textContent)")
    assert {"Alice", "Lisbon", "Bob"} <= set(mentioned)
    assert "Alice moved to Lisbon" in shown_facts(page)
    # And back: from the episode to an entity it mentions.
    page.click("#panel-details .inline button:text-is('Lisbon')")
    page.wait_for_selector("#card-title:text-is('Lisbon')")


def test_as_of_shows_what_was_true_then(page, server: Server) -> None:
    open_explorer(page, server)
    open_entity(page, "Alice")
    # The slider's first stop is the earliest change on T: 2020-01-01, when Alice joined Acme.
    page.focus("#as-of-range")
    page.keyboard.press("Home")
    page.wait_for_timeout(50)
    settle(page)
    assert page.input_value("#as-of") == "2020-01-01T00:00:00Z"
    assert "Alice works for Acme" in shown_facts(page)
    assert "Alice works for Globex" not in shown_facts(page)
    assert "Alice WORKS_FOR Acme" in drawn_facts(page) and "Alice WORKS_FOR Globex" not in drawn_facts(page)

    set_time(page, "as-of", "2024-01-01")
    assert "Alice works for Acme" not in shown_facts(page)
    assert "Alice works for Globex" in shown_facts(page)
    assert "Alice WORKS_FOR Globex" in drawn_facts(page) and "Alice WORKS_FOR Acme" not in drawn_facts(page)
    page.screenshot(path=str(SCREENSHOTS / "explorer-as-of.png"))


def test_known_at_before_the_contradiction_shows_the_old_fact_as_current(page, server: Server) -> None:
    with server.api() as api:
        acme = api.get(f"/api/v3/graph/facts/{server.seeded.acme_fact_id}", params={"user_id": "alice"}).json()
    open_explorer(page, server)
    open_entity(page, "Alice")
    # As we knew it when the Acme fact was written (before we heard of Globex), in 2024.
    set_time(page, "known-at", acme["created_at"])
    set_time(page, "as-of", "2024-01-01")
    facts = shown_facts(page)
    assert "Alice works for Acme" in facts
    assert "Alice works for Globex" not in facts
    row = page.locator(f"li.fact[data-fact-id='{server.seeded.acme_fact_id}']")
    assert row.locator(".span").inner_text() == "2020-01-01 – …"  # then, nothing had ended it
    assert "Alice WORKS_FOR Acme" in drawn_facts(page)
    # Back to now: the contradiction is known again.
    page.click("#known-at-now")
    page.wait_for_timeout(50)
    settle(page)
    assert "Alice works for Globex" in shown_facts(page)
    assert "Alice works for Acme" not in shown_facts(page)


def test_search_shows_the_context_block_as_the_agent_receives_it(page, server: Server) -> None:
    question = "Where does Alice work?"
    with server.api() as api:
        agent_sees = api.get("/api/v3/users/alice/context", params={"query": question}).json()["context"]
    open_explorer(page, server)
    page.click("#tab-search")
    page.fill("#query", question)
    page.select_option("#recipe", "context")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector("#context-block")
    assert page.inner_text("#context-block") == agent_sees
    assert "Alice works for Globex" in agent_sees
    rows = page.eval_on_selector_all("table.hits tbody tr", """rows => rows.map(r =>
        Array.from(r.children).map(c => c.textContent))""")
    assert rows, "no hits listed"
    for scope, score, ranked_by, found_by, _text in rows:
        assert scope in {"facts", "entities", "communities"}
        assert re.fullmatch(r"-?\d+\.\d{4}", score)
        assert ranked_by == "rrf"
        assert set(found_by.split(", ")) <= {"cosine", "bm25", "bfs"}
    globex = next(r for r in rows if r[4] == "Alice works for Globex")
    assert "bm25" in globex[3]  # its words are in the question
    page.screenshot(path=str(SCREENSHOTS / "explorer-search.png"))


def test_ingestion_lists_the_failed_episode_and_retries_it(page, server: Server) -> None:
    open_explorer(page, server)
    page.click("#tab-ingestion")
    failed = page.locator(f"li.queued[data-episode-id='{server.seeded.failed_episode_id}']")
    failed.wait_for()
    assert failed.get_attribute("data-status") == "failed"
    assert "provider unreachable (scripted)" in failed.inner_text()
    assert "1 failed" in page.inner_text("#queue-counts")
    failed.locator("button:text-is('Retry')").click()
    failed_row = f"li.queued.failed[data-episode-id='{server.seeded.failed_episode_id}']"
    page.wait_for_selector(failed_row, state="detached")
    with server.api() as api:
        episode = api.get(f"/api/v3/graph/episodes/{server.seeded.failed_episode_id}",
                          params={"user_id": "alice"}).json()
    assert episode["status"] != "failed"


def test_the_key_is_kept_for_the_tab_only(page, server: Server, browser) -> None:
    open_explorer(page, server)
    assert page.evaluate("() => sessionStorage.getItem('chronomem.apiKey')") == server.seeded.key
    assert page.evaluate("() => localStorage.length") == 0
    page.reload()
    page.wait_for_function("window.chronomemExplorer && window.chronomemExplorer.state.pages.length > 0")
    assert page.is_hidden("#key-form")  # same tab: not asked again
    other = browser.new_context().new_page()
    other.goto(f"{server.base}/ui/")
    other.wait_for_selector("#key-form:not([hidden])")  # another tab must enter it
    other.context.close()


def test_a_wrong_key_is_refused_with_the_reason(page, server: Server) -> None:
    page.goto(f"{server.base}/ui/")
    page.fill("#key", "cmk_nope_nope")
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#key-error:text-matches('invalid or revoked')")
    assert page.is_visible("#key-form")


def test_the_panels_are_reachable_by_keyboard(page, server: Server) -> None:
    open_explorer(page, server)
    page.focus("#tab-details")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.id") == "tab-entities"
    assert page.is_visible("#panel-entities")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # the filter box, then the first entity
    page.keyboard.press("Enter")
    page.wait_for_selector("#card-title")


def test_the_explorer_runs_under_its_content_security_policy(strict_page, server: Server) -> None:
    page = strict_page
    page.goto(f"{server.base}/ui/")
    page.fill("#key", server.seeded.key)
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#loaded:text-matches('entities of')")
    assert page.inner_text("#loaded").startswith("8 entities of 8")
    assert page.outside == [] and page.errors == []


DOCS_PAGES = [("/docs", ".swagger-ui .info .title"), ("/redoc", "h1:has-text('chronomem')")]


@pytest.mark.parametrize(("path", "ready"), DOCS_PAGES)
def test_api_docs_render_offline(strict_page, server: Server, path: str, ready: str) -> None:
    page = strict_page
    page.goto(f"{server.base}{path}")
    page.wait_for_selector(ready, timeout=20_000)
    assert "chronomem" in page.inner_text(ready)
    assert page.outside == [], page.outside


def test_version_history_lists_what_our_records_held_and_when(page, server: Server) -> None:
    open_explorer(page, server)
    open_entity(page, "Alice")
    page.check("#superseded")
    settle(page)
    row = page.locator(f"li.fact[data-fact-id='{server.seeded.acme_fact_id}']")
    row.locator("button.history").click()
    versions = row.locator("ol.versions li")
    versions.first.wait_for()
    texts = versions.all_inner_texts()
    # Written open-ended, then closed when Globex was learned: two versions, the latest held now.
    assert len(texts) == 2, texts
    assert texts[0].startswith("2020-01-01 – …") and "now" not in texts[0]
    assert texts[1].startswith("2020-01-01 – 2023-06-01") and "– now" in texts[1]
    assert all(text.endswith("Alice works for Acme") for text in texts)
