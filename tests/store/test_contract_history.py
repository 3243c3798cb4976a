"""The store contract, continued: append-only fact history (DESIGN §1), on every backend.

Transaction times are injected (``recorded_at``), so "as known at t'" never depends on the clock.
The invalidations are the pipeline's own pure functions, so these are the writes ingestion makes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from chronomem.domain import Entity, Fact, FactSource
from chronomem.embed.testing import HashingEmbedder
from chronomem.filters import SearchFilters
from chronomem.ingest.invalidation import invalidate, reopen
from chronomem.store import GraphWrite, Scope, Store

G = "history-group"
EMBED = HashingEmbedder(64)
WORLD = datetime(2020, 1, 1, tzinfo=UTC)  # T: when things happened
RECORDS = datetime(2025, 1, 1, tzinfo=UTC)  # T': when we learned them


def year(n: int) -> datetime:
    return datetime(n, 1, 1, tzinfo=UTC)


def learned(days: float) -> datetime:
    return RECORDS + timedelta(days=days)


def vec(text: str) -> np.ndarray:
    return EMBED.embed_one(text)


def entity(name: str) -> Entity:
    return Entity(group_id=G, name=name, created_at=RECORDS)


def fact(source: Entity, target: Entity, text: str, *, at: datetime, **kw: object) -> Fact:
    return Fact(group_id=G, source_id=source.id, target_id=target.id, fact=text, created_at=at, **kw)


async def write(store: Store, entities: list[Entity], facts: list[Fact], *, vectors: bool = True) -> None:
    await store.write(GraphWrite(
        group_id=G, entities=entities, facts=facts,
        entity_vectors={e.id: vec(e.name) for e in entities} if vectors else {},
        fact_vectors={f.id: vec(f.fact) for f in facts} if vectors else {},
    ))


async def job_change(store: Store) -> tuple[Fact, Fact]:
    """Alice works at Acme from 2020 (learned on day 0); on day 10 we learn she joined Beta in 2024."""
    alice, acme, beta = entity("Alice"), entity("Acme"), entity("Beta")
    acme_job = fact(alice, acme, "Alice works at Acme", at=learned(0), relation_type="WORKS_AT", valid_at=year(2020))
    await write(store, [alice, acme, beta], [acme_job])
    beta_job = fact(alice, beta, "Alice works at Beta", at=learned(10), relation_type="WORKS_AT", valid_at=year(2024))
    change = invalidate(beta_job, [acme_job], now=learned(10), reference_time=learned(10))
    await write(store, [], [change.new_fact, *change.expired])
    return acme_job, beta_job


async def search_ids(store: Store, filters: SearchFilters) -> dict[str, set[str]]:
    """Which facts each search path admits under ``filters``."""
    vector = await store.vector_search(G, Scope.FACTS, vec("Alice works at"), limit=10, filters=filters)
    text = await store.fulltext_search(G, Scope.FACTS, "Alice works", limit=10, filters=filters)
    listed = await store.list_facts(G, filters=filters)
    alice = (await store.find_entities_by_names(G, ["Alice"]))[0]
    walked = await store.bfs(G, [alice.id], max_hops=1, filters=filters)
    return {
        "vector": {h.id for h in vector},
        "fulltext": {h.id for h in text},
        "list": {f.id for f in listed},
        "bfs": set(walked.facts),
    }


def everywhere(*ids: str) -> dict[str, set[str]]:
    return {path: set(ids) for path in ("vector", "fulltext", "list", "bfs")}


async def test_an_invalidation_keeps_the_version_it_replaces(store: Store) -> None:
    acme_job, _ = await job_change(store)
    history = await store.fact_history(G, acme_job.id)
    assert [v.fact.version for v in history] == [1, 2]
    first, latest = history
    assert first.fact == acme_job  # exactly as written: nothing rewritten in place
    assert first.recorded_from == learned(0) and first.recorded_to == learned(10)
    assert latest.recorded_from == learned(10) and latest.recorded_to is None
    assert latest.fact.invalid_at == year(2024) and latest.fact.expired_at == learned(10)
    assert (await store.get_facts(G, [acme_job.id]))[0] == latest.fact


async def test_true_at_t_as_known_before_the_change_has_no_later_knowledge(store: Store) -> None:
    acme_job, beta_job = await job_change(store)
    before = SearchFilters(as_of=year(2022), known_at=learned(5))
    (known,) = await store.list_facts(G, filters=before)
    assert known == acme_job and known.invalid_at is None and known.expired_at is None
    assert await search_ids(store, before) == everywhere(acme_job.id)
    (by_id,) = await store.get_facts(G, [acme_job.id, beta_job.id], known_at=learned(5))
    assert by_id == acme_job  # the Beta job was not recorded yet


async def test_the_job_change_triad(store: Store) -> None:
    acme_job, beta_job = await job_change(store)
    # 2025 as known on day 5: we still believed Alice was at Acme
    assert await search_ids(store, SearchFilters(as_of=year(2025), known_at=learned(5))) == everywhere(acme_job.id)
    # 2025 as known on day 20: Beta
    assert await search_ids(store, SearchFilters(as_of=year(2025), known_at=learned(20))) == everywhere(beta_job.id)
    # 2022 as known on day 20: Acme, now with the end we learned on day 10
    after = SearchFilters(as_of=year(2022), known_at=learned(20))
    assert await search_ids(store, after) == everywhere(acme_job.id)
    (known,) = await store.list_facts(G, filters=after)
    assert known.invalid_at == year(2024) and known.version == 2


async def test_known_at_alone_is_what_was_current_then(store: Store) -> None:
    acme_job, beta_job = await job_change(store)
    assert {f.id for f in await store.list_facts(G, filters=SearchFilters(known_at=learned(5)))} == {acme_job.id}
    assert {f.id for f in await store.list_facts(G, filters=SearchFilters(known_at=learned(20)))} == {beta_job.id}
    assert await store.list_facts(G, filters=SearchFilters(known_at=learned(-1))) == []


async def test_a_late_arriving_older_fact_is_born_closed_and_unknown_before(store: Store) -> None:
    alice, lisbon, porto = entity("Alice"), entity("Lisbon"), entity("Porto")
    porto_home = fact(alice, porto, "Alice lives in Porto", at=learned(0), relation_type="LIVES_IN",
                      valid_at=year(2023))
    await write(store, [alice, lisbon, porto], [porto_home])
    # on day 10 we learn that she lived in Lisbon from 2020 (before Porto)
    lisbon_home = fact(alice, lisbon, "Alice lives in Lisbon", at=learned(10), relation_type="LIVES_IN",
                       valid_at=year(2021))
    change = invalidate(lisbon_home, [porto_home], now=learned(10), reference_time=learned(10))
    assert not change.expired and change.new_fact.invalid_at == year(2023)
    await write(store, [], [change.new_fact])

    in_2022 = await store.list_facts(G, filters=SearchFilters(as_of=year(2022), known_at=learned(20)))
    assert [f.id for f in in_2022] == [lisbon_home.id] and in_2022[0].invalid_at == year(2023)
    assert await store.list_facts(G, filters=SearchFilters(as_of=year(2022), known_at=learned(5))) == []
    assert [v.fact.version for v in await store.fact_history(G, porto_home.id)] == [1]  # Porto never changed


async def test_deleting_the_episode_that_invalidated_reopens_as_a_new_version(store: Store) -> None:
    acme_job, beta_job = await job_change(store)
    (closed,) = await store.get_facts(G, [acme_job.id])
    await store.write(GraphWrite(group_id=G, facts=[reopen(closed, now=learned(30))], delete_fact_ids=[beta_job.id]))

    assert [(v.fact.version, v.fact.invalid_at) for v in await store.fact_history(G, acme_job.id)] == [
        (1, None), (2, year(2024)), (3, None),
    ]
    assert await store.fact_history(G, beta_job.id) == []  # deletion erases a fact with its history
    assert await search_ids(store, SearchFilters(as_of=year(2025), known_at=learned(40))) == everywhere(acme_job.id)
    # what we believed while the episode stood is still answerable
    (then,) = await store.list_facts(G, filters=SearchFilters(as_of=year(2022), known_at=learned(20)))
    assert then.invalid_at == year(2024)
    assert await search_ids(store, SearchFilters(as_of=year(2025), known_at=learned(20))) == everywhere()
    current = await store.list_facts(G, filters=SearchFilters(now=learned(40)))
    assert [f.id for f in current] == [acme_job.id] and current[0].version == 3


async def test_new_provenance_updates_the_latest_version_in_place(store: Store) -> None:
    alice, acme = entity("Alice"), entity("Acme")
    job = fact(alice, acme, "Alice works at Acme", at=learned(0), episode_ids=("e1",))
    await write(store, [alice, acme], [job])
    restated = job.model_copy(update={"episode_ids": ("e1", "e2"), "sources": (FactSource(name="crm", reference="7"),),
                                      "recorded_at": learned(3)})
    await write(store, [], [restated], vectors=False)
    (stored,) = await store.get_facts(G, [job.id])
    assert stored.episode_ids == ("e1", "e2") and stored.sources == (FactSource(name="crm", reference="7"),)
    assert (stored.version, stored.recorded_at) == (1, learned(0))  # no new version: it says the same
    assert len(await store.fact_history(G, job.id)) == 1


async def test_a_version_is_never_recorded_before_the_one_it_replaces(store: Store) -> None:
    alice, acme = entity("Alice"), entity("Acme")
    job = fact(alice, acme, "Alice works at Acme", at=learned(0))
    await write(store, [alice, acme], [job])
    backdated = job.model_copy(update={"fact": "Alice works at Acme Corp", "recorded_at": learned(-5)})
    await write(store, [], [backdated])
    first, latest = await store.fact_history(G, job.id)
    assert latest.recorded_from > first.recorded_from == learned(0)
    assert first.recorded_to == latest.recorded_from


async def test_history_is_per_group(store: Store) -> None:
    acme_job, _ = await job_change(store)
    assert await store.fact_history("another-group", acme_job.id) == []
    assert await store.get_facts("another-group", [acme_job.id], known_at=learned(5)) == []
