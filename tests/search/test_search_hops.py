"""Multi-hop over names and keywords found by rules: a turn the question cannot reach is reached
through a turn it does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from chronomem.domain import Episode, EpisodeKind, EpisodeStatus
from chronomem.embed.testing import HashingEmbedder
from chronomem.search import Searcher
from chronomem.search.config import Method, ScopeConfig, SearchConfig
from chronomem.search.hops import MAX_NODES_PER_SEED, fuse_hops, hop_queries, hop_seeds, mentions
from chronomem.store.base import GraphWrite, Store

G = "hops"
NOW = datetime(2023, 6, 1, tzinfo=UTC)
QUESTION = "Where did she live before she moved, four years ago?"


def _turn(n: int, speaker: str, text: str, session: int, kind: EpisodeKind = EpisodeKind.MESSAGE) -> Episode:
    when = NOW - timedelta(days=10 * (10 - session), seconds=-n)
    return Episode(id=f"t{n}", group_id=G, kind=kind, content=text, speaker=speaker if kind is EpisodeKind.MESSAGE
                   else None, reference_time=when, created_at=when, source_description=f"session {session}",
                   status=EpisodeStatus.UNEXTRACTED)


def test_mentions_are_names_and_keywords_not_function_words_or_filler():
    text = "Wow, thanks! I moved from my home country, Sweden, with Jo. It's really awesome."
    assert mentions(text) == ["moved", "home", "country", "sweden", "jo"]
    assert mentions(text, exclude={"sweden", "moved"}) == ["home", "country", "jo"]
    assert mentions("I had a dog and a cat") == []  # short lower-case words are no nodes


def test_hop_queries_leave_out_the_question_words_and_the_speakers():
    seed = _turn(1, "Caroline", "Melanie, I moved from my home country four years ago", 3)
    [query] = hop_queries([seed], "Where did Caroline move from four years ago?", speakers={"Caroline", "Melanie"})
    assert query == "home country"
    long_seed = _turn(2, "Caroline", " ".join(f"word{i}x" for i in range(40)), 3)
    assert len(hop_queries([long_seed], QUESTION, speakers=())[0].split()) == MAX_NODES_PER_SEED


def test_seeds_are_messages_and_the_fused_hops_put_the_best_seeds_neighbours_first():
    document = _turn(1, "", "the whole session as one document", 1, kind=EpisodeKind.TEXT)
    turns = [_turn(n, "Ann", "text", 1) for n in (2, 3, 4)]
    assert [e.id for e in hop_seeds([document, *turns], 2)] == ["t2", "t3"]
    fused = fuse_hops([["t2", "a", "b"], ["c", "b"]], seeds={"t2", "t3"})
    # the seed itself is left out; a turn reached from two seeds leads, then the first seed's hit
    assert fused == ["b", "a", "c"]


async def _write(store: Store, embedder: HashingEmbedder) -> None:
    turns = [
        _turn(1, "Caroline", "I've known these friends for four years, since I moved from my home country.", 3),
        _turn(2, "Melanie", "That's lovely, friends are family you choose.", 3),
        _turn(3, "Caroline", "This necklace is a gift from my grandma in my home country, Sweden.", 5),
        # echoes of the question's words, spoken by the other speaker
        *(_turn(4 + i, "Melanie", f"We came here from the city years ago, where did {i} go?", 6 + i % 3)
          for i in range(6)),
    ]
    vectors = await embedder.embed([e.text for e in turns])
    await store.write(GraphWrite(group_id=G, episodes=turns,
                                 episode_vectors={e.id: v for e, v in zip(turns, vectors, strict=True)}))


def _config(hop_boost: float) -> SearchConfig:
    # full text alone: the hashing test embedder's cosine would only blur what the hop does
    episodes = ScopeConfig(methods=(Method.BM25,), limit=3, candidates=3)
    return SearchConfig(facts=None, entities=None, communities=None, episodes=episodes,
                        hop_boost=hop_boost, hop_seeds=1, speaker_boost=0.0, conversation_boost=0.0,
                        reply_boost=0.0)


async def test_the_hop_reaches_the_bridge_turn_the_question_does_not_name(store):
    embedder = HashingEmbedder()
    await _write(store, embedder)
    searcher = Searcher(store, embedder)
    without = await searcher.search(G, QUESTION, config=_config(0.0), now=NOW)
    ids = [e.id for e, _ in without.episodes]
    assert ids[0] == "t1" and "t3" not in ids  # the Sweden turn shares no word with the question
    hopped = await searcher.search(G, QUESTION, config=_config(2.0), now=NOW)
    hopped_ids = [e.id for e, _ in hopped.episodes]
    assert "t3" in hopped_ids and "t1" in hopped_ids  # through "home country"; the seed stays
