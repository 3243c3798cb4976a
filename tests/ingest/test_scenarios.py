"""Scenario tests of ``add_episode`` with a scripted model: they assert the graph and its timestamps."""

from __future__ import annotations

from ingest_doubles import Script, at

from chronomem.domain import Episode, EpisodeStatus, true_at
from chronomem.ingest import Ingestor
from chronomem.store.base import Store


def message(group: str, speaker: str, text: str, when: str, **extra: object) -> Episode:
    return Episode(group_id=group, speaker=speaker, content=text, reference_time=at(when), **extra)


async def facts_by_text(store: Store, group: str) -> dict[str, object]:
    return {f.fact: f for f in await store.list_facts(group)}


async def test_job_change_invalidates_the_old_employer_at_the_new_valid_at(store, embedder, model, script: Script):
    script.episodes["I work at Acme"] = (
        ["Alice", "Acme"],
        [{"source": "Alice", "relation_type": "WORKS_FOR", "target": "Acme", "fact": "Alice works at Acme",
          "valid_at": "2024-01-10T00:00:00Z"}],
    )
    script.episodes["I joined Beta"] = (
        ["Alice", "Beta"],
        [{"source": "Alice", "relation_type": "WORKS_FOR", "target": "Beta", "fact": "Alice works at Beta",
          "valid_at": "2024-05-18T00:00:00Z"}],
    )
    script.fact_verdict = lambda q: {"index": q.index, "contradicts": [c.index for c in q.candidates]}
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("g", "Alice", "I work at Acme.", "2024-01-10"))
    result = await ingestor.add_episode(message("g", "Alice", "I joined Beta two weeks ago.", "2024-06-01"))

    facts = await facts_by_text(store, "g")
    acme, beta = facts["Alice works at Acme"], facts["Alice works at Beta"]
    assert acme.invalid_at == at("2024-05-18") == beta.valid_at
    assert acme.expired_at is not None and acme.expired_at >= beta.created_at
    assert beta.invalid_at is None and beta.expired_at is None
    assert [f.id for f in result.facts_invalidated] == [acme.id]
    assert true_at(acme, at("2024-03-01")) and not true_at(acme, at("2024-07-01"))
    assert result.episode.status is EpisodeStatus.DONE
    assert result.episode.usage["calls"] == model.usage.calls - 2  # the second episode's own calls
