"""A query naming several events is searched once per event and fused: each event's evidence ranks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chronomem.domain import Episode, EpisodeStatus
from chronomem.embed.testing import HashingEmbedder
from chronomem.search import Searcher
from chronomem.search.config import ScopeConfig, SearchConfig
from chronomem.store.base import GraphWrite, Store

G = "events"
NOW = datetime(2023, 6, 1, tzinfo=UTC)
QUESTION = "How many days passed between the day I fixed my mountain bike and the day I sold my old guitar?"


def _episode(n: int, text: str) -> Episode:
    when = NOW - timedelta(days=30 - n)
    return Episode(id=f"e{n}", group_id=G, content=text, speaker="user", reference_time=when, created_at=when,
                   status=EpisodeStatus.UNEXTRACTED)


async def _write(store: Store, embedder: HashingEmbedder) -> None:
    episodes = [
        _episode(1, "I fixed my mountain bike this morning, new chain"),
        _episode(2, "I sold my old guitar to a neighbour"),
        # The question's stem, not its events: word overlap with the whole question is high.
        *(_episode(3 + i, f"How many days passed between the day and the day? Day {i}") for i in range(4)),
    ]
    vectors = await embedder.embed([e.content for e in episodes])
    await store.write(GraphWrite(group_id=G, episodes=episodes,
                                 episode_vectors={e.id: v for e, v in zip(episodes, vectors, strict=True)}))


def _config(event_queries: bool) -> SearchConfig:
    # the whole query at the events' weight: four echoes of its stem against two events
    return SearchConfig(facts=None, entities=None, communities=None, episodes=ScopeConfig(limit=2),
                        event_queries=event_queries, whole_query_weight=1.0)


async def test_each_event_of_the_question_reaches_the_top(store):
    embedder = HashingEmbedder()
    await _write(store, embedder)
    searcher = Searcher(store, embedder)
    whole = await searcher.search(G, QUESTION, config=_config(False), now=NOW)
    assert {e.id for e, _ in whole.episodes} != {"e1", "e2"}  # the stem's echoes crowd the events out
    by_event = await searcher.search(G, QUESTION, config=_config(True), now=NOW)
    assert {e.id for e, _ in by_event.episodes} == {"e1", "e2"}


async def test_a_single_event_question_is_searched_once(store):
    embedder = HashingEmbedder()
    await _write(store, embedder)
    searcher = Searcher(store, embedder)
    await searcher.search(G, "When did I fix my mountain bike?", config=_config(True), now=NOW)
    assert embedder.texts_embedded == 6 + 1  # the episodes, then the query alone
