"""The question in the voice of the speaker it names is searched beside it: the turn that says
"my kids" ranks for "What do Melanie's kids like?"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chronomem.domain import Episode, EpisodeStatus
from chronomem.embed.testing import HashingEmbedder
from chronomem.search import Searcher
from chronomem.search.config import ScopeConfig, SearchConfig
from chronomem.store.base import GraphWrite, Store

G = "voice"
NOW = datetime(2023, 6, 1, tzinfo=UTC)
QUESTION = "What do Melanie's kids like?"


def _turn(n: int, speaker: str, text: str) -> Episode:
    when = NOW - timedelta(days=n)  # each turn its own session: no conversation signal between them
    return Episode(id=f"t{n}", group_id=G, content=text, speaker=speaker, reference_time=when, created_at=when,
                   source_description=f"session {n}", status=EpisodeStatus.UNEXTRACTED)


TURNS = [
    _turn(1, "Melanie", "My kids love dinosaurs, they like them so much"),  # the evidence, in her voice
    _turn(2, "Melanie", "I painted a lake at sunrise, I like my new garden"),
    # echoes of the question's third-person frame, which hold nothing about what her kids like
    *(_turn(3 + i, "Caroline", f"What do you think, Melanie? What do Melanie's {w} do?") for i, w in
      enumerate(("dogs", "cats", "birds", "people"))),
]


async def _searcher(store: Store) -> tuple[Searcher, HashingEmbedder]:
    embedder = HashingEmbedder()
    vectors = await embedder.embed([t.text for t in TURNS])
    await store.write(GraphWrite(group_id=G, episodes=TURNS,
                                 episode_vectors={t.id: v for t, v in zip(TURNS, vectors, strict=True)}))
    return Searcher(store, embedder), embedder


def _config(weight: float, **others: object) -> SearchConfig:
    return SearchConfig(facts=None, entities=None, communities=None, episodes=ScopeConfig(limit=6, rrf_k=20.0),
                        perspective_weight=weight, speaker_boost=0.0, conversation_boost=0.0, reply_boost=0.0,
                        **others)


async def _place(searcher: Searcher, config: SearchConfig, episode_id: str = "t1", question: str = QUESTION) -> int:
    found = [e.id for e, _ in (await searcher.search(G, question, config=config, now=NOW)).episodes]
    return found.index(episode_id) + 1


async def test_the_speakers_voice_lifts_the_turn_that_says_my(store):
    searcher, _ = await _searcher(store)
    whole = await _place(searcher, _config(0.0))
    voiced = await _place(searcher, _config(2.0))
    assert whole > 1  # the question's frame and name favour its echoes
    assert voiced < whole


async def test_the_voice_is_searched_only_when_configured_and_one_speaker_is_named(store):
    searcher, embedder = await _searcher(store)

    async def embedded(config: SearchConfig, question: str) -> int:
        before = embedder.texts_embedded
        await searcher.search(G, question, config=config, now=NOW)
        return embedder.texts_embedded - before

    assert await embedded(_config(0.0), QUESTION) == 1  # off: the question alone
    assert await embedded(_config(2.0), QUESTION) == 2  # and "my kids like"
    assert await embedded(_config(2.0), "What do kids like?") == 1  # no speaker named
    assert await embedded(_config(2.0), "What do Melanie and Caroline like?") == 1  # whose voice?


async def test_own_turns_keep_the_voice_to_the_named_speakers_messages(store):
    searcher, _ = await _searcher(store)
    # "I painted" in Melanie's voice, asked about Caroline: the voice alone would find Melanie's turn
    question = "What has Caroline painted?"
    free = await _place(searcher, _config(2.0, unnamed_speaker_offset=0), "t2", question)
    own = await _place(searcher, _config(2.0, unnamed_speaker_offset=0, perspective_own_turns=True), "t2", question)
    assert own > free
