"""The approximate (IVF) vector index of the SQLite store, forced on at small sizes.

On clustered data a query's ten nearest rows all lie in its own cluster, which the IVF index probes
first, so the approximate ranking must equal the exact one; the tests then change the data (masks,
upserts, removals, a change landing while the index trains) and check it still does.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chronomem.config.settings import Settings
from chronomem.domain import Entity, Fact
from chronomem.filters import SearchFilters
from chronomem.store import open_store
from chronomem.store.base import GraphWrite, Scope
from chronomem.store.sqlite import SQLiteStore
from chronomem.store.sqlite import ann as ann_module
from chronomem.store.sqlite import vectors as vectors_module
from chronomem.store.sqlite.fastscan import faiss_module
from chronomem.store.sqlite.timemask import NULL_TIME, fact_time_mask
from chronomem.store.sqlite.vectors import VectorIndex

needs_faiss = pytest.mark.skipif(faiss_module() is None, reason="faiss is not installed")
DIM, CLUSTERS, PER_CLUSTER = 32, 40, 100
DAY = 86_400_000_000  # microseconds


def clustered(rng: np.random.Generator, clusters: int = CLUSTERS, per: int = PER_CLUSTER) -> np.ndarray:
    """Unit vectors in tight clusters around random centres, cluster by cluster."""
    centres = rng.standard_normal((clusters, DIM)).astype(np.float32)
    rows = np.repeat(centres, per, axis=0) + 0.05 * rng.standard_normal((clusters * per, DIM)).astype(np.float32)
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def exact_ids(ids: list[str], vectors: np.ndarray, query: np.ndarray, k: int,
              passing: np.ndarray | None = None) -> list[str]:
    scores = vectors @ query
    if passing is not None:
        scores = np.where(passing, scores, -np.inf)
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:k] if passing is None or passing[i]]


def build(vectors: np.ndarray, **options: Any) -> tuple[list[str], VectorIndex]:
    ids = [f"v{i}" for i in range(len(vectors))]
    options.setdefault("background", False)
    return ids, VectorIndex(ids, [v.tobytes() for v in vectors], ann_from=0, **options)


@needs_faiss
def test_the_approximate_ranking_equals_the_exact_one_on_clustered_data() -> None:
    vectors = clustered(np.random.default_rng(1))
    ids, index = build(vectors)
    assert index.approximate
    for query in vectors[::97]:
        got = index.search(query, 10)
        assert [h.id for h in got] == exact_ids(ids, vectors, query, 10)
        assert [h.score for h in got] == pytest.approx(sorted((vectors @ query).tolist(), reverse=True)[:10], abs=1e-6)


@needs_faiss
def test_min_score_and_accept_hold_on_the_approximate_path() -> None:
    vectors = clustered(np.random.default_rng(2))
    ids, index = build(vectors)
    banned = {f"v{i}" for i in range(0, len(ids), 2)}

    def accept(batch: list[str]) -> set[str]:
        return {i for i in batch if i not in banned}

    for query in vectors[::211]:
        hits = index.search(query, 10, accept=accept, min_score=0.5)
        passing = np.array([i not in banned for i in ids]) & (vectors @ query >= 0.5)
        assert [h.id for h in hits] == exact_ids(ids, vectors, query, 10, passing)
        assert all(h.score >= 0.5 and h.id not in banned for h in hits)


@needs_faiss
def test_time_masks_are_respected_by_the_approximate_index() -> None:
    rng = np.random.default_rng(3)
    vectors = clustered(rng)
    n = len(vectors)
    valid = rng.integers(0, 100, n) * DAY
    times = np.stack([valid, valid + rng.integers(1, 60, n) * DAY, valid, np.full(n, NULL_TIME)], axis=1)
    ids = [f"f{i}" for i in range(n)]
    index = VectorIndex(ids, [v.tobytes() for v in vectors], times=times, ann_from=0, background=False)
    assert index.approximate
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    for filters in (SearchFilters(as_of=epoch + timedelta(days=60)),  # ~30% of rows pass
                    SearchFilters(known_at=epoch + timedelta(days=50)),
                    SearchFilters(as_of=epoch + timedelta(days=2))):  # selective: the exact subset scan
        mask = fact_time_mask(filters)
        passing = mask(times)
        for query in vectors[::301]:
            assert [h.id for h in index.search(query, 10, mask=mask)] == exact_ids(ids, vectors, query, 10, passing)


@needs_faiss
def test_upserts_and_removals_are_searchable_at_once() -> None:
    rng = np.random.default_rng(4)
    vectors = clustered(rng)
    ids, index = build(vectors)
    lone = rng.standard_normal(DIM).astype(np.float32)
    lone /= np.linalg.norm(lone)
    index.upsert("new", lone)  # a new row
    assert index.search(lone, 1)[0].id == "new"
    index.upsert("v5", -lone)  # a row whose vector changed
    assert index.search(-lone, 1)[0].id == "v5"
    for i in range(0, len(ids), 3):  # swap-removal moves the last row into each hole
        index.remove(ids[i])
    index.remove("new")
    alive = [i for i in range(len(ids)) if i % 3 and i != 5]
    for i in alive[::50]:
        assert index.search(vectors[i], 1)[0].id == ids[i]
    assert index.search(lone, 1)[0].id != "new"
    kept = np.array([i % 3 != 0 and i != 5 for i in range(len(ids))])
    for query in vectors[::157]:
        assert [h.id for h in index.search(query, 10)] == exact_ids(ids, vectors, query, 10, kept)


@needs_faiss
def test_search_is_exact_while_the_index_trains_and_changes_made_meanwhile_reach_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vectors = clustered(np.random.default_rng(5))
    release, training = threading.Event(), threading.Event()
    train = ann_module.IvfIndex.train

    def paused_train(*args: Any) -> ann_module.IvfIndex:
        training.set()
        assert release.wait(30)
        return train(*args)

    monkeypatch.setattr(ann_module.IvfIndex, "train", staticmethod(paused_train))
    ids, index = build(vectors, background=True)
    assert training.wait(30)
    assert not index.approximate  # still training: the exact path answers
    query = vectors[7]
    assert [h.id for h in index.search(query, 10)] == exact_ids(ids, vectors, query, 10)
    index.upsert("v7", -vectors[7])  # lands after the sample was taken, before the rows are copied
    for i in range(100, 200):
        index.remove(ids[i])
    release.set()
    assert index.wait_for_index(30)
    assert index.approximate
    assert index.search(-vectors[7], 1)[0].id == "v7"
    assert not {f"v{i}" for i in range(100, 200)} & {h.id for h in index.search(vectors[150], 50)}
    moved = [h.id for h in index.search(vectors[3999], 1)]  # the last row moved into a hole
    assert moved == ["v3999"]


@needs_faiss
def test_the_index_is_retrained_when_the_group_doubles() -> None:
    vectors = clustered(np.random.default_rng(6), clusters=20)
    ids, index = build(vectors)
    first = index._ann
    assert first is not None and first.trained_for == 2000
    more = clustered(np.random.default_rng(7), clusters=20)
    for i, vector in enumerate(more):
        index.upsert(f"w{i}", vector)
    assert index._ann is not None and index._ann.trained_for == 4000
    everything = np.concatenate([vectors, more])
    for query in everything[::333]:
        assert [h.id for h in index.search(query, 10)] == exact_ids(
            ids + [f"w{i}" for i in range(2000)], everything, query, 10)


def test_without_faiss_every_size_is_searched_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors_module, "faiss_module", lambda: None)
    vectors = clustered(np.random.default_rng(8))
    ids, index = build(vectors)
    assert not index.approximate and not index.accelerated
    for query in vectors[::500]:
        assert [h.id for h in index.search(query, 10)] == exact_ids(ids, vectors, query, 10)


@needs_faiss
async def test_the_store_builds_the_approximate_index_from_its_setting(tmp_path: Path) -> None:
    settings = Settings.from_env({"CHRONOMEM_STORE_SQLITE_ANN_FROM": "1000"})
    store = await open_store(f"sqlite:///{tmp_path / 'ann.db'}", settings.store)
    assert isinstance(store, SQLiteStore)
    try:
        vectors = clustered(np.random.default_rng(9), clusters=12)
        a, b = Entity(group_id="g", name="A"), Entity(group_id="g", name="B")
        facts = [Fact(id=f"f{i}", group_id="g", source_id=a.id, target_id=b.id, fact=f"fact {i}")
                 for i in range(len(vectors))]
        await store.write(GraphWrite(group_id="g", entities=[a, b], facts=facts,
                                     fact_vectors={f.id: vectors[i] for i, f in enumerate(facts)}))
        hits = await store.vector_search("g", Scope.FACTS, vectors[10], limit=5)
        index = store._indexes.get("vector", "g", "facts")
        assert isinstance(index, VectorIndex) and index.wait_for_index(30) and index.approximate
        assert [h.id for h in hits] == [f"f{i}" for i in np.argsort(-(vectors @ vectors[10]), kind="stable")[:5]]
        late = Fact(id="late", group_id="g", source_id=a.id, target_id=b.id, fact="late fact")
        await store.write(GraphWrite(group_id="g", facts=[late], fact_vectors={"late": -vectors[10]}))
        assert (await store.vector_search("g", Scope.FACTS, -vectors[10], limit=1))[0].id == "late"
    finally:
        await store.close()


def test_the_current_filter_skips_its_mask_only_while_no_row_has_ended() -> None:
    vectors = clustered(np.random.default_rng(10), clusters=4, per=50)
    ids = [f"f{i}" for i in range(len(vectors))]
    times = np.tile(np.array([0, NULL_TIME, 0, NULL_TIME], dtype=np.int64), (len(ids), 1))
    index = VectorIndex(ids, [v.tobytes() for v in vectors], times=times)
    current = fact_time_mask(SearchFilters(now=datetime(2025, 1, 1, tzinfo=UTC)))
    assert index.search(vectors[3], 1, mask=current)[0].id == "f3"
    index.set_times("f3", np.array([0, NULL_TIME, 0, 5 * DAY], dtype=np.int64))  # superseded
    assert "f3" not in {h.id for h in index.search(vectors[3], 20, mask=current)}
    index.set_times("f3", np.array([0, NULL_TIME, 0, NULL_TIME], dtype=np.int64))
    assert index.search(vectors[3], 1, mask=current)[0].id == "f3"


@needs_faiss
def test_a_filter_that_rejects_the_nearest_clusters_widens_until_the_hits_are_found() -> None:
    vectors = clustered(np.random.default_rng(11))
    ids, index = build(vectors)
    allowed = {f"v{i}" for i in range(3900, 3905)}  # five rows of the last cluster only

    def accept(batch: list[str]) -> set[str]:
        return {i for i in batch if i in allowed}

    passing = np.array([i in allowed for i in ids])
    for query in (vectors[0], vectors[1234]):  # far from the allowed cluster
        assert [h.id for h in index.search(query, 5, accept=accept)] == exact_ids(ids, vectors, query, 5, passing)
