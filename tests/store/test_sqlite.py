"""Behaviour specific to the embedded SQLite backend (the contract suite covers the Store port)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from chronomem.domain import Entity, Episode, Fact
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import StoreError
from chronomem.filters import SearchFilters
from chronomem.store import GraphWrite, Scope, open_store
from chronomem.store.base import ScoredId
from chronomem.store.sqlite import SQLiteStore
from chronomem.store.sqlite.connection import SCHEMA_VERSION
from chronomem.store.sqlite.fastscan import faiss_module
from chronomem.store.sqlite.ranking import walk_ranking
from chronomem.store.sqlite.text import TextIndex, query_terms
from chronomem.store.sqlite.timemask import NULL_TIME, fact_time_mask
from chronomem.store.sqlite.vectors import VectorIndex

G = "group"
EMBED = HashingEmbedder(32)


def sample(group: str = G, text: str = "Ann rows a boat") -> tuple[Entity, Fact]:
    ann = Entity(group_id=group, name="Ann")
    return ann, Fact(group_id=group, source_id=ann.id, target_id=ann.id, fact=text)


async def write_sample(store: SQLiteStore, group: str = G, text: str = "Ann rows a boat") -> Fact:
    ann, fact = sample(group, text)
    await store.write(
        GraphWrite(group_id=group, entities=[ann], facts=[fact], fact_vectors={fact.id: EMBED.embed_one(text)})
    )
    return fact


async def test_data_survives_closing_and_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = await open_store(f"sqlite:///{path}")
    fact = await write_sample(store)
    await store.insert_episode(Episode(group_id=G, content="queued"))
    await store.close()
    await store.close()  # idempotent

    reopened = await SQLiteStore.open(str(path))
    try:
        assert await reopened.get_facts(G, [fact.id]) == [fact]
        assert [h.id for h in await reopened.fulltext_search(G, Scope.FACTS, "boat")] == [fact.id]
        assert [h.id for h in await reopened.vector_search(G, Scope.FACTS, EMBED.embed_one(fact.fact))] == [fact.id]
        assert await reopened.pending_groups() == [G]
    finally:
        await reopened.close()


async def test_the_file_is_in_wal_mode_at_the_current_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = await SQLiteStore.open(str(path))
    await store.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
        assert versions == list(range(1, SCHEMA_VERSION + 1))
    finally:
        conn.close()
    again = await SQLiteStore.open(str(path))  # migrations are not re-applied
    await again.close()


async def test_a_file_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    await (await SQLiteStore.open(str(path))).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_migrations VALUES (?, 'later')", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        await SQLiteStore.open(str(path))


async def test_a_closed_store_refuses_calls(tmp_path: Path) -> None:
    store = await SQLiteStore.open(str(tmp_path / "x.db"))
    await store.close()
    with pytest.raises(StoreError):
        await store.list_groups()


async def test_an_in_memory_store_works() -> None:
    store = await open_store("sqlite://:memory:")
    try:
        fact = await write_sample(store)
        assert [h.id for h in await store.fulltext_search(G, Scope.FACTS, "rows")] == [fact.id]
        assert [h.id for h in await store.vector_search(G, Scope.FACTS, EMBED.embed_one(fact.fact))] == [fact.id]
    finally:
        await store.close()


async def test_reads_do_not_wait_for_another_process_holding_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = await SQLiteStore.open(str(path))
    try:
        fact = await write_sample(store)
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("DELETE FROM facts")
        try:
            found = await asyncio.wait_for(store.get_facts(G, [fact.id]), timeout=2)
            assert found == [fact]  # the uncommitted delete is invisible, and nothing blocked
        finally:
            other.execute("ROLLBACK")
            other.close()
    finally:
        await store.close()


async def test_the_store_can_be_shared_by_threads_with_their_own_event_loops(tmp_path: Path) -> None:
    store = await SQLiteStore.open(str(tmp_path / "memory.db"))
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        async def run() -> None:
            for i in range(5):
                fact = await write_sample(store, f"group {n}", f"thread {n} item {i}")
                assert await store.get_facts(f"group {n}", [fact.id]) == [fact]
                assert await store.fulltext_search(f"group {n}", Scope.FACTS, "thread")

        try:
            asyncio.run(run())
        except BaseException as exc:  # surfaced below, in the test's thread
            errors.append(exc)

    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            await asyncio.get_running_loop().run_in_executor(None, lambda: list(pool.map(worker, range(4))))
        assert errors == []
        for n in range(4):
            assert (await store.stats(f"group {n}")).facts == 5
    finally:
        await store.close()


async def test_vector_search_sees_writes_racing_the_first_search(tmp_path: Path) -> None:
    store = await SQLiteStore.open(str(tmp_path / "memory.db"))
    try:
        written = await asyncio.gather(*(write_sample(store, G, f"fact number {i}") for i in range(30)))
        searches = [store.vector_search(G, Scope.FACTS, EMBED.embed_one("fact"), limit=100) for _ in range(5)]
        more = [write_sample(store, G, f"later fact {i}") for i in range(30)]
        results = await asyncio.gather(*searches, *more)
        later = results[5:]
        final = await store.vector_search(G, Scope.FACTS, EMBED.embed_one("fact"), limit=100)
        assert {h.id for h in final} == {f.id for f in [*written, *later]}
    finally:
        await store.close()


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("coffee tea", ["coffee", "tea"]),
        ('NEAR("a" b) OR c*', ["near", "a", "b", "or", "c"]),
        ("Coffee coffee COFFEE", ["coffee"]),
        ("  \t", []),
        ("-:^()*", []),
        ("snake_case", ["snake", "case"]),
        ("Café CAFE Zoë", ["cafe", "zoe"]),
    ],
)
def test_queries_become_plain_words(query: str, terms: list[str]) -> None:
    assert query_terms(query) == terms


def test_very_long_queries_are_capped() -> None:
    assert len(query_terms(" ".join(f"w{i}" for i in range(1000)))) == 64


async def test_vectors_are_stored_unit_normalized(tmp_path: Path) -> None:
    store = await SQLiteStore.open(str(tmp_path / "memory.db"))
    try:
        ann = Entity(group_id=G, name="Ann")
        await store.write(GraphWrite(group_id=G, entities=[ann], entity_vectors={ann.id: np.array([3.0, 4.0])}))
        stored = (await store.get_vectors(G, Scope.ENTITIES, [ann.id]))[ann.id]
        np.testing.assert_allclose(stored, [0.6, 0.8], rtol=1e-6)
        assert stored.dtype == np.float32
    finally:
        await store.close()


def test_nothing_runs_on_import() -> None:
    before = threading.active_count()
    import chronomem.store.sqlite  # noqa: F401

    assert threading.active_count() == before


def test_bm25_scores_agree_with_sqlite_fts5() -> None:
    """The in-memory ranking is FTS5's bm25(): same scores, up to float32 rounding."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(40)]
    docs = {f"d{i}": " ".join(rng.choice(words, size=int(rng.integers(1, 12)))) for i in range(300)}
    index = TextIndex()
    for doc_id, text in docs.items():
        index.upsert(doc_id, text)
    for doc_id in list(docs)[:40]:  # dead rows must not count in N, df or the average length
        index.remove(doc_id)
        del docs[doc_id]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(doc_id UNINDEXED, body)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", docs.items())
    for query in ("w0", "w1 w7", "w3 w3 w39 w12", "w5 nothing"):
        expression = " OR ".join(f'"{w}"' for w in query_terms(query))
        expected = dict(conn.execute("SELECT doc_id, -bm25(t) FROM t WHERE t MATCH ?", (expression,)))
        got = {hit.id: hit.score for hit in index.search(query_terms(query), 1000, min_score=1e-12)}
        assert got.keys() == expected.keys()
        for doc_id, score in expected.items():
            assert got[doc_id] == pytest.approx(score, rel=1e-4), (query, doc_id)


def test_text_index_forgets_replaced_and_removed_texts_across_compaction() -> None:
    index = TextIndex()
    for i in range(3000):
        index.upsert(f"d{i}", f"common word{i}")
    for i in range(2000):
        index.remove(f"d{i}")  # crosses the compaction threshold
    index.upsert("d2500", "replaced text")
    hits = index.search(["common"], 5000, min_score=1e-12)
    assert len(hits) == 999 and "d2500" not in {h.id for h in hits}
    assert [h.id for h in index.search(["replaced"], 10, min_score=1e-12)] == ["d2500"]
    assert index.search(["word5"], 10, min_score=1e-12) == []
    assert [h.id for h in index.search(["word2999"], 10, min_score=1e-12)] == ["d2999"]
    assert len(index) == 1000


@pytest.mark.skipif(faiss_module() is None, reason="faiss is not installed")
def test_the_half_precision_scan_returns_exactly_the_float32_ranking() -> None:
    """Same ids, order and scores as the plain scan, through upserts, removals, rebuilds and filters."""
    rng = np.random.default_rng(1)

    def unit(n: int) -> np.ndarray:
        rows = rng.standard_normal((n, 48)).astype(np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    ids = [f"v{i}" for i in range(3000)]
    vectors = unit(3000)
    blobs = [row.tobytes() for row in vectors]
    fast, plain = VectorIndex(ids, blobs, accelerate_from=0), VectorIndex(ids, blobs, accelerate_from=10**9)
    assert fast.accelerated and not plain.accelerated
    for step in range(1500):  # crosses the tombstone rebuild threshold
        changed = f"v{int(rng.integers(0, 3000))}"
        if step % 3 == 0:
            fast.remove(changed)
            plain.remove(changed)
        else:
            vector = unit(1)[0]
            fast.upsert(changed, vector)
            plain.upsert(changed, vector)
    banned = {f"v{i}" for i in range(0, 3000, 3)}

    def accept(batch: list[str]) -> set[str]:
        return {i for i in batch if i not in banned}

    for query in unit(20):
        for options in ({}, {"accept": accept}, {"min_score": 0.3}, {"accept": accept, "min_score": 0.2}):
            expected = plain.search(query, 25, **options)
            got = fast.search(query, 25, **options)
            assert [h.id for h in got] == [h.id for h in expected], options
            assert [h.score for h in got] == pytest.approx([h.score for h in expected], abs=1e-6)


@pytest.mark.parametrize("accelerate_from", [0, 10**9])
def test_time_masks_rank_exactly_the_rows_whose_times_pass(accelerate_from: int) -> None:
    if accelerate_from == 0 and faiss_module() is None:
        pytest.skip("faiss is not installed")
    rng = np.random.default_rng(2)
    n = 4000
    vectors = rng.standard_normal((n, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    day = 86_400_000_000
    valid = rng.integers(0, 100, n) * day
    times = np.stack([valid, valid + rng.integers(1, 50, n) * day, valid, np.full(n, NULL_TIME)], axis=1)
    ids = [f"f{i}" for i in range(n)]
    index = VectorIndex(ids, [v.tobytes() for v in vectors], times=times, accelerate_from=accelerate_from)
    for i in range(0, n, 7):  # later timestamp changes reach the index
        times[i, 3] = 5 * day
        index.set_times(ids[i], times[i])
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    for filters in (
        SearchFilters(as_of=epoch + timedelta(days=3)),  # selective
        SearchFilters(as_of=epoch + timedelta(days=60)),
        SearchFilters(include_superseded=True, now=epoch + timedelta(days=10**5)),
        SearchFilters(known_at=epoch + timedelta(days=50)),
    ):
        mask = fact_time_mask(filters)
        passing = mask(times)
        for query in vectors[:5]:
            scores = np.where(passing, vectors @ query, -np.inf)
            expected = [ids[i] for i in np.argsort(-scores, kind="stable")[:10] if passing[i]]
            got = index.search(query, 10, mask=mask)
            assert [h.id for h in got] == expected, filters


def test_a_min_score_walk_over_many_rows_ranks_like_a_full_sort() -> None:
    """Large walks rank only the rows at or above min_score; the ranking must not change."""
    rng = np.random.default_rng(4)
    scores = np.zeros(50_000, dtype=np.float32)
    scoring = rng.choice(50_000, 8_000, replace=False)
    scores[scoring] = rng.integers(1, 40, scoring.size).astype(np.float32)  # many ties
    ids = [f"r{i}" for i in range(scores.size)]
    banned = {f"r{i}" for i in range(0, scores.size, 3)}

    def accept(batch: list[str]) -> set[str]:
        return {i for i in batch if i not in banned}

    order = np.lexsort((np.arange(scores.size), -scores))
    for limit, min_score, check in ((10, 1e-12, None), (500, 20.0, accept), (20_000, 1e-12, accept)):
        got = walk_ranking(scores, lambda rows: [ScoredId(ids[r], float(scores[r])) for r in rows], limit, min_score,
                           check)
        expected = [r for r in order if scores[r] >= min_score and (check is None or ids[r] not in banned)][:limit]
        hits = got or []  # (rows tied at a window's edge may come in either order: compare scores)
        assert [h.score for h in hits] == [float(scores[r]) for r in expected]
        assert len({h.id for h in hits}) == len(hits) and all(check is None or h.id not in banned for h in hits)


def test_a_bulk_built_text_index_ranks_like_one_built_document_by_document() -> None:
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(30)]
    docs = [(f"d{i}", " ".join(rng.choice(words, size=int(rng.integers(0, 9))))) for i in range(500)]
    bulk, incremental = TextIndex.build(docs), TextIndex()
    for doc_id, text in docs:
        incremental.upsert(doc_id, text)
    for query in (["w1"], ["w2", "w9", "w29"], ["nothing"]):
        assert bulk.search(query, 50, min_score=1e-12) == incremental.search(query, 50, min_score=1e-12)
    bulk.upsert("d0", "w1 w1 w1")
    assert bulk.search(["w1"], 1, min_score=1e-12)[0].id == "d0"


async def test_a_memory_budget_drops_idle_indexes_and_searches_stay_correct(tmp_path: Path) -> None:
    store = await SQLiteStore.open(str(tmp_path / "memory.db"), index_memory=1)  # room for one index
    try:
        first = {g: await write_sample(store, g, f"{g} paddles a canoe") for g in ("a", "b")}
        for g in ("a", "b"):
            assert [h.id for h in await store.vector_search(g, Scope.FACTS, EMBED.embed_one("canoe"))] == [first[g].id]
        assert store._indexes.loaded() == [("vector", "b", "facts")]
        later = await write_sample(store, "a", "a paddles a kayak")  # lands while a's index is dropped
        hits = await store.vector_search("a", Scope.FACTS, EMBED.embed_one("a paddles a kayak"), limit=5)
        assert [h.id for h in hits][:1] == [later.id] and len(hits) == 2
        assert [h.id for h in await store.fulltext_search("b", Scope.FACTS, "canoe")] == [first["b"].id]
    finally:
        await store.close()
