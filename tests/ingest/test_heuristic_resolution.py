"""The rule-based stand-in judges a fact a duplicate by what it says, not by whose names it repeats
(chronomem.heuristic): the same verdict whether the fact call was shown the stored facts or the
batched resolution call judges them."""

from __future__ import annotations

import pytest
from ingest_doubles import at

from chronomem.domain import Episode, EpisodeKind
from chronomem.embed.testing import HashingEmbedder
from chronomem.heuristic import heuristic_model
from chronomem.ingest import IngestConfig, Ingestor
from chronomem.store.base import Store


@pytest.mark.parametrize("facts_shown", [0, 10])
async def test_a_new_statement_about_the_same_names_is_no_duplicate_but_a_restatement_is(
    store: Store, embedder: HashingEmbedder, facts_shown: int
) -> None:
    ingestor = Ingestor(store, embedder, heuristic_model(), config=IngestConfig(facts_shown=facts_shown))
    await ingestor.add_episode(Episode(group_id="g", speaker="Lena Berg", content="I moved to Bergen last spring.",
                                       reference_time=at("2024-05-01")))
    works = await ingestor.add_episode(Episode(group_id="g", kind=EpisodeKind.TEXT,
                                               content="Lena Berg works at the Bergen aquarium.",
                                               reference_time=at("2024-05-02")))
    again = await ingestor.add_episode(Episode(group_id="g", speaker="Lena Berg", content="I moved to Bergen.",
                                               reference_time=at("2024-05-03")))

    assert [f.fact for f in works.facts_created] == ["Lena Berg works at Bergen aquarium"]
    assert again.facts_created == ()  # says nothing the move did not: restated
    assert len(await store.list_facts("g")) == 2
