"""List questions, found by rules: their answer is spread over sessions, so they get the coverage
signal; a question about one thing does not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chronomem.domain import Episode, EpisodeStatus
from chronomem.embed.testing import HashingEmbedder
from chronomem.search import Searcher
from chronomem.search.config import Method, ScopeConfig, SearchConfig
from chronomem.search.lists import is_list_question
from chronomem.store.base import GraphWrite, Store


@pytest.mark.parametrize(
    "question",
    [
        "What activities does Melanie partake in?",
        "Where has Melanie camped?",
        "What books has Melanie read?",
        "Which city have both Jean and John visited?",
        "What are some changes Caroline has faced?",
    ],
)
def test_questions_asking_for_a_list(question):
    assert is_list_question(question)


@pytest.mark.parametrize(
    "question",
    [
        "What did Caroline research?",
        "When did Melanie paint a sunrise?",
        "What does Jon have to do before the show?",  # "have to" is not the perfect tense
        "Where did Caroline move from 4 years ago?",
    ],
)
def test_questions_about_one_thing(question):
    assert not is_list_question(question)


G = "lists"
NOW = datetime(2023, 6, 1, tzinfo=UTC)


async def _write(store: Store, embedder: HashingEmbedder) -> None:
    def turn(n: int, text: str, session: int) -> Episode:
        when = NOW - timedelta(days=10 * (10 - session), seconds=-n)
        return Episode(id=f"t{n}", group_id=G, content=text, speaker="Mel", reference_time=when, created_at=when,
                       source_description=f"session {session}", status=EpisodeStatus.UNEXTRACTED)

    # one session talks about pottery at length; the other activities come up once each, elsewhere
    turns = [
        *(turn(n, f"pottery activities again, the pottery class part {n}", 1) for n in range(4)),
        turn(10, "camping with the kids", 2),
        turn(11, "this week: swimming", 3),
    ]
    vectors = await embedder.embed([e.text for e in turns])
    await store.write(GraphWrite(group_id=G, episodes=turns,
                                 episode_vectors={e.id: v for e, v in zip(turns, vectors, strict=True)}))


def _config(list_coverage_boost: float) -> SearchConfig:
    episodes = ScopeConfig(methods=(Method.BM25,), limit=3)
    return SearchConfig(facts=None, entities=None, communities=None, episodes=episodes, conversation_boost=1.5,
                        list_coverage_boost=list_coverage_boost, speaker_boost=0.0, reply_boost=0.0)


async def test_a_list_question_reaches_every_session_and_a_single_question_is_unchanged(store):
    embedder = HashingEmbedder()
    await _write(store, embedder)
    searcher = Searcher(store, embedder)
    question = "What pottery activities does Mel do?"
    without = await searcher.search(G, question, config=_config(0.0), now=NOW)
    assert {e.source_description for e, _ in without.episodes} == {"session 1"}
    covered = await searcher.search(G, question, config=_config(2.0), now=NOW)
    sessions = [e.source_description for e, _ in covered.episodes]
    assert sessions[0] == "session 1" and len(set(sessions)) > 1
    single = "What did Mel do in the pottery class?"
    assert [e.id for e, _ in (await searcher.search(G, single, config=_config(2.0), now=NOW)).episodes] == [
        e.id for e, _ in (await searcher.search(G, single, config=_config(0.0), now=NOW)).episodes
    ]


async def _write_two_speakers(store: Store, embedder: HashingEmbedder) -> None:
    def turn(n: int, speaker: str, text: str, session: int) -> Episode:
        when = NOW - timedelta(days=10 * (10 - session), seconds=-n)
        return Episode(id=f"t{n}", group_id=G, content=text, speaker=speaker, reference_time=when, created_at=when,
                       source_description=f"session {session}", status=EpisodeStatus.UNEXTRACTED)

    turns = [
        *(turn(n, "Mel", f"pottery activities again, the pottery class part {n}", 1) for n in range(4)),
        # in each other session the other speaker echoes the question; Mel tells an activity
        turn(10, "Cas", "pottery activities, Mel? what activities do you do", 2),
        turn(11, "Mel", "camping with the kids", 2),
        turn(12, "Cas", "more activities, Mel? which activities do you do", 3),
        turn(13, "Mel", "this week: swimming", 3),
    ]
    vectors = await embedder.embed([e.text for e in turns])
    await store.write(GraphWrite(group_id=G, episodes=turns,
                                 episode_vectors={e.id: v for e, v in zip(turns, vectors, strict=True)}))


async def test_a_list_question_naming_a_speaker_covers_the_sessions_with_their_own_turns(store):
    embedder = HashingEmbedder()
    await _write_two_speakers(store, embedder)
    searcher = Searcher(store, embedder)
    question = "What pottery activities does Mel do?"
    config = _config(2.0).model_copy(update={"episodes": ScopeConfig(methods=(Method.BM25,), limit=8)})

    async def places(config: SearchConfig) -> list[int]:
        found = [e.id for e, _ in (await searcher.search(G, question, config=config, now=NOW)).episodes]
        return [found.index("t11") + 1, found.index("t13") + 1]  # every turn is found: the limit is 8

    each_best = await places(config)
    own = await places(config.model_copy(update={"list_coverage_own_turns": True}))
    assert sum(own) < sum(each_best)  # the echoes were each session's best; Mel's own turns are now
