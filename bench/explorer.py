"""Explorer benchmark: page weight and time to first render of ``/ui`` on a 10,000-entity graph, in
Debian's headless chromium against a real ``chronomem serve``.

    .venv/bin/python bench/explorer.py                    # 10,000 entities, 15,000 facts
    .venv/bin/python bench/explorer.py --entities 2000

The group is written straight through the store (no model): ``--entities`` entities, 1.5 facts per
entity between random pairs (a fifth closed and superseded, a few hyperedges with a third
participant), 2,000 episodes mentioning five entities each (so mention counts vary), and 40
communities. The page loads its first page of entities (300, most mentioned first) and lays it out.

Figures (one ``name: value`` line each; times are medians of ``--runs`` page loads):
- ``page_weight_own_kb`` / ``page_weight_vendored_kb``: JS and CSS the page loads, ours and the
  vendored Cytoscape.js + fCoSE, uncompressed;
- ``first_render_ms``: navigation start → first graph drawn (``chronomem:first-render`` mark);
- ``snapshot_api_ms``: the first page's ``/explorer/snapshot`` request as the page timed it;
- ``first_layout_ms``: drawing and laying out that page (Cytoscape.js + fCoSE);
- ``load_more_ms``: the second page (300 more entities) fetched, added and laid out;
- ``time_move_ms``: ``as_of`` moved: every loaded page fetched again and redrawn.
Screenshots go to ``bench/out/explorer-10k*.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import numpy as np

from chronomem.config.settings import Settings
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.domain import Community, Entity, Episode, EpisodeStatus, Fact, Mention
from chronomem.store import GraphWrite, open_store

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
EPOCH = datetime(2020, 1, 1, tzinfo=UTC)
EPISODES = 2_000
COMMUNITIES = 40


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def synthetic_graph(group_id: str, entities: int, seed: int = 7) -> GraphWrite:
    rng = np.random.default_rng(seed)
    created = EPOCH + timedelta(days=2000)
    people = [Entity(group_id=group_id, name=f"Entity {i:05d}", summary=f"Synthetic entity number {i}.",
                     created_at=created) for i in range(entities)]
    facts = []
    for n in range(int(entities * 1.5)):
        a, b = (int(x) for x in rng.choice(entities, size=2, replace=False))
        start = EPOCH + timedelta(days=int(rng.integers(0, 1500)))
        closed = n % 5 == 0
        others = (people[int(rng.integers(entities))].id,) if n % 50 == 0 else ()
        facts.append(Fact(
            group_id=group_id, source_id=people[a].id, target_id=people[b].id, other_entity_ids=others,
            relation_type=("KNOWS", "WORKS_WITH", "LIVES_NEAR")[n % 3],
            fact=f"{people[a].name} relates to {people[b].name}",
            valid_at=start, invalid_at=start + timedelta(days=200) if closed else None,
            created_at=created, expired_at=created + timedelta(days=1) if closed else None,
        ))
    episodes = [Episode(group_id=group_id, content=f"Episode {i}", reference_time=EPOCH + timedelta(hours=i),
                        status=EpisodeStatus.DONE, created_at=created) for i in range(EPISODES)]
    # Zipf-like popularity: a few entities are mentioned often, most rarely.
    popular = np.minimum(rng.zipf(1.6, size=EPISODES * 5) - 1, entities - 1)
    mentions = {(episodes[i // 5].id, people[int(p)].id) for i, p in enumerate(popular)}
    communities = [Community(group_id=group_id, name=f"community {c}", summary="",
                             member_ids=tuple(p.id for p in people[c::COMMUNITIES])) for c in range(COMMUNITIES)]
    return GraphWrite(group_id, episodes=episodes, entities=people, facts=facts, communities=communities,
                      mentions=[Mention(group_id=group_id, episode_id=e, entity_id=i) for e, i in sorted(mentions)])


async def seed(data_dir: Path, entities: int) -> None:
    settings = Settings(data_dir=data_dir)
    control = SQLiteControlPlane.open(settings.resolved_control_db)
    group_id = control.create_user(control.ensure_project("default").id, "bench").group_id
    control.close()
    store = await open_store(settings.resolved_store_url)
    try:
        await store.write(synthetic_graph(group_id, entities))
    finally:
        await store.close()


def start_server(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CHRONOMEM_AUTH": "0", "CHRONOMEM_EMBEDDER": "hashing",
           "PYTHONPATH": str(ROOT / "src"), "CHRONOMEM_INPROCESS_WORKERS": "0"}
    with open(data_dir / "server.log", "ab") as sink:
        process = subprocess.Popen([sys.executable, "-m", "chronomem.cli", "--data-dir", str(data_dir), "serve",
                                    "--port", str(port)], env=env, stdout=sink, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the server did not start")


def measure(base: str, runs: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    figures: dict[str, list[float]] = {"first_render_ms": [], "snapshot_api_ms": [], "first_layout_ms": [],
                                       "load_more_ms": [], "time_move_ms": []}
    weight = {"own": 0, "vendored": 0}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for run in range(runs):
            # bypass_csp: the page forbids eval, which wait_for_function needs; it loads nothing else.
            context = browser.new_context(viewport={"width": 1400, "height": 860}, bypass_csp=True)
            page = context.new_page()
            sizes: dict[str, int] = {}
            page.on("response", lambda r, sizes=sizes: sizes.__setitem__(r.url, len(r.body()))
                    if r.url.endswith((".js", ".css")) else None)
            page.goto(f"{base}/ui/")
            page.wait_for_function("performance.getEntriesByName('chronomem:first-render').length > 0",
                                   timeout=120_000)
            figures["first_render_ms"].append(page.evaluate(
                "performance.getEntriesByName('chronomem:first-render')[0].startTime"))
            figures["snapshot_api_ms"].append(page.evaluate(
                "performance.getEntriesByType('resource').find(e => e.name.includes('/explorer/snapshot')).duration"))
            figures["first_layout_ms"].append(page.evaluate(
                "performance.getEntriesByName('chronomem:layout')[0].duration"))
            if run == 0:
                weight["own"] = sum(v for u, v in sizes.items() if "/vendor/" not in u)
                weight["vendored"] = sum(v for u, v in sizes.items() if "/vendor/" in u)
                page.screenshot(path=str(OUT / "explorer-10k.png"))
            page.wait_for_selector("body[data-state=ready]")
            started = time.perf_counter()
            page.click("#more")
            page.wait_for_function("window.chronomemExplorer.state.pages.length === 2")
            page.wait_for_selector("body[data-state=ready]")
            figures["load_more_ms"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            page.fill("#as-of", "2022-01-01")
            page.press("#as-of", "Enter")
            page.wait_for_function("document.body.dataset.state === 'loading'")
            page.wait_for_selector("body[data-state=ready]", timeout=120_000)
            # The page waits SETTLE_MS (120 ms) for the slider to rest before it fetches: included.
            figures["time_move_ms"].append((time.perf_counter() - started) * 1000)
            if run == 0:
                page.screenshot(path=str(OUT / "explorer-10k-as-of.png"))
            context.close()
        browser.close()
    result = {name: statistics.median(values) for name, values in figures.items()}
    result["page_weight_own_kb"] = weight["own"] / 1024
    result["page_weight_vendored_kb"] = weight["vendored"] / 1024
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--port", type=int, default=8791)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        started = time.perf_counter()
        asyncio.run(seed(data_dir, args.entities))
        log(f"seeded {args.entities} entities in {time.perf_counter() - started:.1f} s")
        process = start_server(data_dir, args.port)
        try:
            figures = measure(f"http://127.0.0.1:{args.port}", args.runs)
        finally:
            process.terminate()
            process.wait(timeout=15)
    print(f"entities: {args.entities}")
    for name in ("page_weight_own_kb", "page_weight_vendored_kb", "first_render_ms", "snapshot_api_ms",
                 "first_layout_ms", "load_more_ms", "time_move_ms"):
        print(f"{name}: {figures[name]:.1f}")
    print(f"screenshots: {OUT / 'explorer-10k.png'} {OUT / 'explorer-10k-as-of.png'}")


if __name__ == "__main__":
    main()
