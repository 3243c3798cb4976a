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


COUNTING = "How many doctor's appointments did I go to in total?"


async def _write_counting(store: Store, embedder: HashingEmbedder) -> None:
    episodes = [
        _episode(1, "My doctor's appointments: first the knee"),
        _episode(2, "Two doctor's appointments this month already"),
        # question-like turns that echo the counting frame, not what the evidence says
        *(_episode(3 + i, f"How many did I go to in total? I went to {i}") for i in range(4)),
    ]
    vectors = await embedder.embed([e.content for e in episodes])
    await store.write(GraphWrite(group_id=G, episodes=episodes,
                                 episode_vectors={e.id: v for e, v in zip(episodes, vectors, strict=True)}))


async def test_a_counting_question_is_also_searched_by_its_focus(store):
    embedder = HashingEmbedder()
    await _write_counting(store, embedder)
    searcher = Searcher(store, embedder)
    off = SearchConfig(facts=None, entities=None, communities=None, episodes=ScopeConfig(limit=6),
                       focus_query=False, whole_query_weight=1.0)

    async def places(config: SearchConfig) -> list[int]:
        found = [e.id for e, _ in (await searcher.search(G, COUNTING, config=config, now=NOW)).episodes]
        return [found.index("e1") + 1, found.index("e2") + 1]

    whole = await places(off)
    focused = await places(off.model_copy(update={"focus_query": True}))
    assert max(whole) > 3  # the frame's echoes crowd the evidence out of the top 3
    assert max(focused) <= 3 and sum(focused) < sum(whole)


async def test_event_leaders_give_each_event_a_place_behind_the_fused_first(store):
    embedder = HashingEmbedder()
    await _write(store, embedder)
    searcher = Searcher(store, embedder)
    # the whole query far outweighs the events: without leaders the stem's echoes take the top 3
    heavy = SearchConfig(facts=None, entities=None, communities=None, episodes=ScopeConfig(limit=3),
                         whole_query_weight=10.0)
    plain = await searcher.search(G, QUESTION, config=heavy, now=NOW)
    assert not {"e1", "e2"} <= {e.id for e, _ in plain.episodes}
    led = await searcher.search(G, QUESTION, config=heavy.model_copy(update={"event_leaders": True}), now=NOW)
    assert {"e1", "e2"} <= {e.id for e, _ in led.episodes}
