"""Several processes on one SQLite file: each one's in-memory indexes follow the others' writes.

Two stores opened on the same file stand for two processes (each has its own writer connection,
indexes and change feed); one test runs the writer in a real child process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chronomem.domain import Entity, Episode, Fact
from chronomem.embed.testing import HashingEmbedder
from chronomem.filters import SearchFilters
from chronomem.store import GraphWrite, Scope
from chronomem.store.sqlite import SQLiteStore, changefeed

G = "group"
EMBED = HashingEmbedder(32)


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[SQLiteStore, SQLiteStore]]:
    path = str(tmp_path / "shared.db")
    writer, reader = await SQLiteStore.open(path), await SQLiteStore.open(path)
    yield writer, reader
    await writer.close()
    await reader.close()


def fact_about(text: str, **times: datetime) -> tuple[Entity, Fact]:
    ann = Entity(group_id=G, name="Ann")
    return ann, Fact(group_id=G, source_id=ann.id, target_id=ann.id, fact=text, **times)


async def put(store: SQLiteStore, entity: Entity, fact: Fact) -> None:
    await store.write(GraphWrite(group_id=G, entities=[entity], facts=[fact],
                                 fact_vectors={fact.id: EMBED.embed_one(fact.fact)}))


async def found(store: SQLiteStore, text: str, filters: SearchFilters | None = None) -> tuple[list[str], list[str]]:
    """(vector hits, BM25 hits) for a query."""
    by_vector = await store.vector_search(G, Scope.FACTS, EMBED.embed_one(text), limit=5, filters=filters)
    by_text = await store.fulltext_search(G, Scope.FACTS, text, limit=5, filters=filters)
    return [h.id for h in by_vector], [h.id for h in by_text]


async def test_a_search_sees_what_another_process_wrote_after_its_index_was_built(
    pair: tuple[SQLiteStore, SQLiteStore],
) -> None:
    writer, reader = pair
    ann, boat = fact_about("Ann rows a boat")
    await put(writer, ann, boat)
    assert await found(reader, "Ann rows a boat") == ([boat.id], [boat.id])  # the reader's indexes now exist

    _, kayak = fact_about("Ann paddles a kayak")
    await put(writer, ann, kayak)
    vector_hits, text_hits = await found(reader, "paddles kayak")
    assert vector_hits[0] == kayak.id and text_hits == [kayak.id]

    # New timestamps (an invalidation) reach the reader's vector index, which filters on them.
    ended = boat.model_copy(update={"invalid_at": datetime(2020, 1, 1, tzinfo=UTC),
                                    "expired_at": datetime(2024, 1, 1, tzinfo=UTC)})
    await writer.write(GraphWrite(group_id=G, facts=[ended]))
    current = SearchFilters(as_of=datetime(2025, 1, 1, tzinfo=UTC))
    assert boat.id not in (await found(reader, "Ann rows a boat", current))[0]

    await writer.write(GraphWrite(group_id=G, delete_fact_ids=[kayak.id]))
    assert kayak.id not in (await found(reader, "Ann paddles a kayak"))[0]
    for query in ("Ann rows a boat", "Ann paddles a kayak", "Ann"):  # the same answers as the writer's own
        assert await found(reader, query) == await found(writer, query)
        assert await found(reader, query, current) == await found(writer, query, current)


async def test_episodes_queued_elsewhere_are_found_by_text(pair: tuple[SQLiteStore, SQLiteStore]) -> None:
    writer, reader = pair
    await writer.insert_episode(Episode(group_id=G, content="first visit to Lisbon"))
    assert await reader.fulltext_search(G, Scope.EPISODES, "Kyoto") == []
    queued, _ = await writer.insert_episode(Episode(group_id=G, content="moving to Kyoto"))
    assert [h.id for h in await reader.fulltext_search(G, Scope.EPISODES, "Kyoto")] == [queued.id]


async def test_a_group_deleted_elsewhere_disappears_and_can_come_back(pair: tuple[SQLiteStore, SQLiteStore]) -> None:
    writer, reader = pair
    ann, boat = fact_about("Ann rows a boat")
    await put(writer, ann, boat)
    assert (await found(reader, "boat"))[1] == [boat.id]
    await writer.delete_group(G)
    assert await found(reader, "boat") == ([], [])
    ann2, boat2 = fact_about("Ann rows a boat again")
    await put(writer, ann2, boat2)
    assert await found(reader, "boat") == ([boat2.id], [boat2.id])


async def test_own_writes_also_bring_in_the_other_process_changes(pair: tuple[SQLiteStore, SQLiteStore]) -> None:
    """A write catches up inside its transaction, so the log never skips another process's entries."""
    a, b = pair
    ann, boat = fact_about("Ann rows a boat")
    await put(a, ann, boat)
    assert (await found(b, "boat"))[1] == [boat.id]
    _, kayak = fact_about("Ann paddles a kayak")
    await put(a, ann, kayak)
    _, bike = fact_about("Ann rides a bike")
    await put(b, ann, bike)  # b applies a's kayak while writing its bike
    assert b._feed.applied == changefeed.head(b._writer)
    assert (await found(b, "kayak"))[1] == [kayak.id]
    assert (await found(a, "bike"))[1] == [bike.id]


async def test_a_process_that_fell_behind_the_pruned_log_rebuilds(
    pair: tuple[SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changefeed, "RETAINED", 3)
    monkeypatch.setattr(changefeed, "_PRUNE_EVERY", 1)
    writer, reader = pair
    ann, first = fact_about("Ann rows a boat")
    await put(writer, ann, first)
    assert (await found(reader, "boat"))[1] == [first.id]
    facts = []
    for word in ("kayak", "bike", "piano", "tent"):
        _, fact = fact_about(f"Ann owns a {word}")
        await put(writer, ann, fact)
        facts.append(fact)
    assert (await found(reader, "tent"))[1] == [facts[-1].id]
    assert (await found(reader, "kayak"))[1] == [facts[0].id]  # pruned from the log, rebuilt from the file


async def test_a_write_from_a_real_child_process_is_searchable(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    store = await SQLiteStore.open(str(path))
    try:
        ann, boat = fact_about("Ann rows a boat")
        await put(store, ann, boat)
        assert (await found(store, "kayak"))[1] == []
        child = textwrap.dedent(f"""
            import asyncio
            from chronomem.domain import Entity, Fact
            from chronomem.embed.testing import HashingEmbedder
            from chronomem.store import GraphWrite
            from chronomem.store.sqlite import SQLiteStore

            async def main():
                store = await SQLiteStore.open({str(path)!r})
                fact = Fact(group_id={G!r}, source_id={ann.id!r}, target_id={ann.id!r}, fact="Ann paddles a kayak")
                await store.write(GraphWrite(group_id={G!r}, facts=[fact],
                                             fact_vectors={{fact.id: HashingEmbedder(32).embed_one(fact.fact)}}))
                await store.close()
                print(fact.id)

            asyncio.run(main())
        """)
        done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60, check=True)
        kayak_id = done.stdout.strip()
        vector_hits, text_hits = await found(store, "Ann paddles a kayak")
        assert text_hits[0] == kayak_id and vector_hits[0] == kayak_id
    finally:
        await store.close()
