"""Metrics outside the HTTP app: a worker's own /metrics, several processes summed, the queue gauges."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime

import httpx
from prometheus_client.parser import text_string_to_metric_families

from chronomem.app.workers import refresh_queue_metrics
from chronomem.config.settings import Settings
from chronomem.domain import Episode, EpisodeStatus
from chronomem.embed.testing import HashingEmbedder
from chronomem.memory import Chronomem
from chronomem.store.factory import open_store
from chronomem.telemetry import metrics
from chronomem.timeutil import utc_now


def _samples(text: str) -> dict[tuple[str, frozenset], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_a_worker_serves_its_metrics_on_a_port_of_its_own():
    stop = metrics.serve_metrics(0)
    try:
        url = f"http://127.0.0.1:{stop.port}/metrics"
        before = _samples(httpx.get(url).text).get(("chronomem_episodes_total", frozenset({("outcome", "done")})), 0)
        metrics.record_episode("done")
        after = _samples(httpx.get(url).text)[("chronomem_episodes_total", frozenset({("outcome", "done")}))]
    finally:
        stop()
    assert after == before + 1


_RECORD = """
from chronomem.telemetry import metrics
from chronomem.timeutil import utc_now
for _ in range({n}):
    metrics.record_episode("done")
metrics.record_model_call(provider="openai", model="m", prompt="p", calls=1, input_tokens={n}, cached_input_tokens=0,
                          output_tokens=1, seconds=0.1)
metrics.mark_process_dead()
"""


def test_server_processes_sharing_a_directory_are_summed(tmp_path):
    env = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for n in (3, 4):
        subprocess.run([sys.executable, "-c", _RECORD.format(n=n)], env=env, check=True, timeout=60)
    rendered = subprocess.run(
        [sys.executable, "-c", "from chronomem.telemetry import metrics; print(metrics.render()[0].decode())"],
        env=env,
        check=True,
        timeout=60,
        capture_output=True,
        text=True,
    ).stdout
    samples = _samples(rendered)
    assert samples[("chronomem_episodes_total", frozenset({("outcome", "done")}))] == 7
    tokens = (
        "chronomem_llm_tokens_total",
        frozenset({("provider", "openai"), ("model", "m"), ("prompt", "p"), ("kind", "input")}),
    )
    assert samples[tokens] == 7


async def test_the_queue_gauges_count_what_waits_and_for_how_long(tmp_path):
    store = await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    memory = Chronomem(store=store, embedder=HashingEmbedder(), llm=None, settings=Settings(data_dir=tmp_path))
    try:
        first = Chronomem.new_episode("g1", "one")
        await memory.enqueue([first, Chronomem.new_episode("g1", "two"), Chronomem.new_episode("g2", "three")])
        assert await refresh_queue_metrics(store) == {"pending": 3, "processing": 0}
        text, _ = metrics.render()
        samples = _samples(text.decode())
        assert samples[("chronomem_queue_episodes", frozenset({("state", "pending")}))] == 3
        assert samples[("chronomem_queue_oldest_age_seconds", frozenset({("state", "pending")}))] >= 0
        await memory.process("g1", first.id)  # no model: stored as unextracted, out of the queue
        assert await refresh_queue_metrics(store) == {"pending": 2, "processing": 0}
    finally:
        await memory.close()



async def test_an_episode_processing_in_a_group_with_nothing_pending_is_counted(tmp_path):
    """A worker holds g1's only episode: g1 has nothing pending, and its episode is still in the queue."""
    store = await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    ingested = datetime(2024, 1, 1, tzinfo=UTC)
    try:
        held, _ = await store.insert_episode(Episode(group_id="g1", content="held", created_at=ingested))
        waiting, _ = await store.insert_episode(Episode(group_id="g2", content="waiting"))
        await store.set_episode_status("g1", held.id, EpisodeStatus.PROCESSING)
        before = utc_now()
        assert await refresh_queue_metrics(store) == {"pending": 1, "processing": 1}
        after = utc_now()
        samples = _samples(metrics.render()[0].decode())
        assert samples[("chronomem_queue_episodes", frozenset({("state", "processing")}))] == 1
        held_for = samples[("chronomem_queue_oldest_age_seconds", frozenset({("state", "processing")}))]
        assert (before - ingested).total_seconds() <= held_for <= (after - ingested).total_seconds()
        await store.set_episode_status("g2", waiting.id, EpisodeStatus.PROCESSING)  # nothing pending anywhere
        assert await refresh_queue_metrics(store) == {"pending": 0, "processing": 2}
        await store.set_episode_status("g1", held.id, EpisodeStatus.DONE)
        assert await refresh_queue_metrics(store) == {"pending": 0, "processing": 1}
    finally:
        await store.close()
