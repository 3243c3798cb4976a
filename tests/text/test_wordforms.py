"""Other forms of the query's words: full text finds "Researching" for "research", and names and
function words are left alone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chronomem.domain import Episode, EpisodeStatus
from chronomem.embed.testing import HashingEmbedder
from chronomem.search import Searcher
from chronomem.search.config import Method, ScopeConfig, SearchConfig
from chronomem.store.base import GraphWrite
from chronomem.text.wordforms import expand_query, word_forms


@pytest.mark.parametrize(
    ("word", "form"),
    [("camped", "camping"), ("research", "researching"), ("shopping", "shop"), ("stories", "story"),
     ("moving", "moved"), ("kids", "kid"), ("paint", "paintings"), ("carry", "carried")],
)
def test_regular_forms(word, form):
    assert form in word_forms(word)


def test_names_and_function_words_are_not_expanded_and_the_query_words_come_first():
    expanded = expand_query("What has Melanie camped?").split()
    assert expanded[:4] == ["what", "has", "melanie", "camped"]
    assert "camping" in expanded and not any(w.startswith("melanie") for w in expanded[4:])
    assert expand_query("What does she do?") == "what does she do"


async def test_full_text_search_finds_another_form_of_the_word(store):
    when = datetime(2023, 5, 1, tzinfo=UTC)
    turns = [
        Episode(id="t1", group_id="g", content="Researching adoption agencies, a dream of mine", speaker="Ann",
                reference_time=when, status=EpisodeStatus.UNEXTRACTED),
        Episode(id="t2", group_id="g", content="We had pasta for dinner", speaker="Ann", reference_time=when,
                status=EpisodeStatus.UNEXTRACTED),
    ]
    embedder = HashingEmbedder()
    vectors = await embedder.embed([e.text for e in turns])
    await store.write(GraphWrite(group_id="g", episodes=turns,
                                 episode_vectors={e.id: v for e, v in zip(turns, vectors, strict=True)}))

    def config(forms: bool) -> SearchConfig:
        return SearchConfig(facts=None, entities=None, communities=None, word_forms=forms,
                            episodes=ScopeConfig(methods=(Method.BM25,)))

    searcher = Searcher(store, embedder)
    # (SQLite's index matches words exactly and misses it without the forms; FalkorDB's full-text
    # index stems by itself and finds it either way)
    forms = await searcher.search("g", "what to research", config=config(True), now=when)
    assert [e.id for e, _ in forms.episodes] == ["t1"]
