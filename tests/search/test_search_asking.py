"""Messages that only ask tell nothing: they follow the messages that tell, in search results too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chronomem.domain import Episode, EpisodeKind, EpisodeStatus
from chronomem.embed.testing import HashingEmbedder
from chronomem.search import Searcher
from chronomem.search.asking import asking_last, only_asks
from chronomem.search.config import Method, ScopeConfig, SearchConfig
from chronomem.store.base import GraphWrite, Store


@pytest.mark.parametrize(
    "text",
    [
        "What was your favourite part?",
        "Wow, what a great day! Glad everyone could make it. What was your favorite part?",
        "Wow, that's cool, Caroline! What happened? Did you hear any inspiring stories?",
        'Which book was it? "Becoming Nicole"?',
    ],
)
def test_a_question_with_no_statement_only_asks(text):
    assert only_asks(text)


@pytest.mark.parametrize(
    "text",
    [
        "I just signed up for a pottery class yesterday. Have you tried it?",  # tells, then asks
        "I went to a LGBTQ support group yesterday and it was so powerful.",
        "Cool! What did it look like? [shares a photo of a painting of a sunset]",  # the photo tells
        "",
    ],
)
def test_a_message_that_tells_something_does_not_only_ask(text):
    assert not only_asks(text)


def _ep(i: str, content: str, kind: EpisodeKind = EpisodeKind.MESSAGE) -> Episode:
    speaker = "Ann" if kind is EpisodeKind.MESSAGE else None
    return Episode(id=i, group_id="g", content=content, kind=kind, speaker=speaker,
                   reference_time=datetime(2023, 5, 1, tzinfo=UTC))


def test_asking_messages_follow_the_others_and_the_scores_stay_with_the_places():
    episodes = {
        "q1": _ep("q1", "What did you paint?"), "a": _ep("a", "I painted a sunset over the lake."),
        "q2": _ep("q2", "Nice! And then?"), "b": _ep("b", "We camped at the beach with the kids."),
        "doc": _ep("doc", "What did you paint?", kind=EpisodeKind.TEXT),  # a document is not a message
    }
    fused = [("q1", 0.9), ("a", 0.8), ("doc", 0.7), ("q2", 0.6), ("b", 0.5)]
    assert asking_last(fused, episodes) == [("a", 0.9), ("doc", 0.8), ("b", 0.7), ("q1", 0.6), ("q2", 0.5)]
    assert asking_last([], episodes) == []


G = "asking"
NOW = datetime(2023, 6, 1, tzinfo=UTC)


async def _write(store: Store, embedder: HashingEmbedder) -> None:
    def turn(n: int, text: str) -> Episode:
        when = NOW - timedelta(days=1, seconds=-n)
        return Episode(id=f"t{n}", group_id=G, content=text, speaker="Mel", reference_time=when, created_at=when,
                       source_description="session 1", status=EpisodeStatus.UNEXTRACTED)

    turns = [turn(1, "What pottery class do you take?"), turn(2, "A pottery class on Mondays, with clay bowls.")]
    vectors = await embedder.embed([e.text for e in turns])
    await store.write(GraphWrite(group_id=G, episodes=turns,
                                 episode_vectors={e.id: v for e, v in zip(turns, vectors, strict=True)}))


def _config(asking: bool) -> SearchConfig:
    episodes = ScopeConfig(methods=(Method.BM25,), limit=2)
    return SearchConfig(facts=None, entities=None, communities=None, episodes=episodes, asking_last=asking,
                        speaker_boost=0.0, reply_boost=0.0, conversation_boost=0.0)


async def test_search_puts_the_answer_before_a_question_worded_like_the_query(store):
    embedder = HashingEmbedder()
    await _write(store, embedder)
    searcher = Searcher(store, embedder)
    question = "What pottery class does Mel take?"
    without = await searcher.search(G, question, config=_config(False), now=NOW)
    assert [e.id for e, _ in without.episodes] == ["t1", "t2"]  # the question matches the question best
    with_rule = await searcher.search(G, question, config=_config(True), now=NOW)
    assert [e.id for e, _ in with_rule.episodes] == ["t2", "t1"]
