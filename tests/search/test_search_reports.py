"""Reports of an event told apart from plans, by rules: "I just got back from a camping trip" answers
"the trips I took", "I'm planning a trip" does not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chronomem.domain import Episode, EpisodeKind, EpisodeStatus
from chronomem.embed.testing import HashingEmbedder
from chronomem.search import Searcher
from chronomem.search.config import Method, ScopeConfig, SearchConfig
from chronomem.search.reports import asks_what_was_done, done_words, reports_event
from chronomem.search.signals import reporting
from chronomem.store.base import GraphWrite, Store

G = "reports"
NOW = datetime(2023, 6, 1, tzinfo=UTC)
TRIPS = "What is the order of the three trips I took in the past three months, from earliest to latest?"


@pytest.mark.parametrize(
    "sentence",
    [
        "I just got back from a solo camping trip to Yosemite today, and I'm looking for something similar.",
        "We went on a road trip with friends to Big Sur last weekend.",
        "My wife and I visited Kyoto on our trip in April.",
        "I've finally finished my first trip report.",
        "I’ve just taken a trip to the coast.",  # a typographic apostrophe
        "I had visited the lake on an earlier trip.",
        "I was at the campsite during the trip, it rained.",
    ],
)
def test_first_person_past_and_perfect_sentences_report_the_trip(sentence):
    assert reports_event(sentence, ["trips"])


@pytest.mark.parametrize(
    "sentence",
    [
        "I'm planning a trip to Sequoia National Park and was wondering if you could help.",
        "I've been thinking about a trip to the Eastern Sierra.",
        "I was wondering what to pack for a trip.",
        "I want to go on a trip next month.",
        "I'll book the trip tomorrow.",
        "I mentioned the trip earlier.",  # said, not done
        "What should I bring on a trip?",
        "I just got back from the gym.",  # a report, but not of a trip
    ],
)
def test_plans_questions_and_other_events_do_not(sentence):
    assert not reports_event(sentence, ["trips"])


def test_the_report_and_the_word_must_share_a_sentence():
    text = "I'm planning a trip soon. By the way, I just got a new backpack last week."
    assert not reports_event(text, ["trips"])
    assert reports_event(text, ["backpack"])
    assert not reports_event(text, [])


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (TRIPS, True),
        ("How many charity events did I participate in before the 'Run for the Cure' event?", True),
        ("How many projects have I led or am currently leading?", True),
        ("What is the total number of online courses I've completed?", True),
        ("What breed is my dog?", False),
        ("How many stars do I need to reach the gold level?", False),
        ("I'm planning a trip to Denver soon. Any suggestions on what to do there?", False),
        ("I wanted to follow up on our previous conversation about mindfulness. You mentioned a website.", False),
        ("Did I mention the name of my hamster?", False),
    ],
)
def test_which_questions_ask_what_the_user_did(question, expected):
    assert asks_what_was_done(question) is expected


def test_the_words_a_report_must_mention_leave_out_the_frame_time_and_light_verbs():
    assert done_words(TRIPS) == ["trips"]
    assert done_words("What is the total weight of the new feed I purchased in the past two months?") == [
        "feed", "purchased"
    ]
    assert done_words("How many charity events did I participate in?") == ["charity", "events"]


def _turn(n: int, text: str, days_before: int, role: str = "user") -> Episode:
    when = NOW - timedelta(days=days_before, seconds=-n)
    return Episode(id=f"t{n}", group_id=G, kind=EpisodeKind.MESSAGE, content=text, speaker=role, role=role,
                   reference_time=when, created_at=when, source_description=f"session {n}",
                   status=EpisodeStatus.UNEXTRACTED)


def test_the_signal_keeps_reporting_user_messages_in_the_given_order():
    episodes = {
        "plan": _turn(1, "I'm planning a trip to Sequoia.", 20),
        "report": _turn(2, "I just got back from a road trip to Big Sur today!", 40),
        "assistant": _turn(3, "I went on a trip once, as a model.", 10, role="assistant"),
        "older": _turn(4, "I spent two nights in Yosemite during my road trip.", 60),
    }
    assert reporting(["plan", "older", "assistant", "report"], episodes, TRIPS) == ["older", "report"]
    assert reporting(["report"], episodes, "What breed is my dog?") == []  # not asked what the user did


PLANS = [
    "I'm planning a trip to the Eastern Sierra, which trips do you recommend for the past months?",
    "What should I pack for trips I take in the past three months of spring?",
    "I'm thinking of trips to take, what were the best trips of the past three months for you?",
]


async def _write(store: Store, embedder: HashingEmbedder) -> None:
    turns = [_turn(n, text, 10 + n) for n, text in enumerate(PLANS)]
    turns.append(_turn(9, "I just got back from a solo camping trip to Yosemite today.", 30))
    vectors = await embedder.embed([t.content for t in turns])
    await store.write(GraphWrite(group_id=G, episodes=turns,
                                 episode_vectors={t.id: v for t, v in zip(turns, vectors, strict=True)}))


def _config(report_boost: float) -> SearchConfig:
    episodes = ScopeConfig(methods=(Method.COSINE, Method.BM25), limit=4, rrf_k=10.0)
    return SearchConfig(facts=None, entities=None, communities=None, episodes=episodes, report_boost=report_boost,
                        focus_query=False)


async def test_the_report_is_lifted_above_the_plans_worded_like_the_question(store):
    embedder = HashingEmbedder()
    await _write(store, embedder)
    searcher = Searcher(store, embedder)
    without = await searcher.search(G, TRIPS, config=_config(0.0), now=NOW)
    with_reports = await searcher.search(G, TRIPS, config=_config(2.0), now=NOW)
    assert [e.id for e, _ in without.episodes].index("t9") > 0  # the plans share more words with the question
    assert with_reports.episodes[0][0].id == "t9"
