"""Exact history, provenance and hyperedges as a user of the facade sees them, on every store.

Transaction times come from the records themselves (each version's ``recorded_from``), never from
the clock: "as known at t'" is asked at the moment a version took force.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from chronomem import Chronomem, FactSource, SearchFilters
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import InvalidInputError, NotFoundError
from chronomem.ingest import Ontology
from chronomem.ingest.provenance import CORRECTION, DIRECT
from chronomem.store import Store

G = "alice"


def year(n: int) -> datetime:
    return datetime(n, 1, 1, tzinfo=UTC)


@pytest.fixture
async def memory(store: Store) -> AsyncIterator[Chronomem]:
    single_valued = Ontology(single_valued=["WORKS_FOR"])
    async with Chronomem(store=store, embedder=HashingEmbedder(), ontology=single_valued) as opened:
        yield opened


async def job_change(memory: Chronomem) -> tuple[str, str, datetime, datetime]:
    """Alice works for Acme from 2020; then we learn she works for Beta from 2024 (WORKS_FOR is
    single-valued, so the Beta fact closes the Acme one). Returns the ids and both record times."""
    acme = await memory.add_fact(G, "Alice", "WORKS_FOR", "Acme", "Alice works for Acme", valid_at=year(2020))
    beta = await memory.add_fact(G, "Alice", "WORKS_FOR", "Beta", "Alice works for Beta", valid_at=year(2024))
    first, closed = await memory.fact_history(G, acme.id)
    return acme.id, beta.id, first.recorded_from, closed.recorded_from


async def test_fact_history_shows_each_version_with_its_transaction_time(memory: Chronomem) -> None:
    acme_id, beta_id, before, after = await job_change(memory)
    first, closed = await memory.fact_history(G, acme_id)
    assert (first.fact.invalid_at, first.recorded_to) == (None, after)
    assert closed.fact.invalid_at == year(2024) and closed.recorded_to is None
    assert before < after
    assert [v.fact.version for v in await memory.fact_history(G, beta_id)] == [1]
    with pytest.raises(NotFoundError):
        await memory.fact_history(G, "no-such-fact")


async def test_search_and_context_as_known_before_and_after_the_change(memory: Chronomem) -> None:
    acme_id, beta_id, before, after = await job_change(memory)

    async def found(as_of: datetime, known: datetime) -> dict[str, datetime | None]:
        results = await memory.search(G, "Alice works for", filters=SearchFilters(as_of=as_of, known_at=known))
        return {f.id: f.invalid_at for f, _ in results.facts}

    assert await found(year(2022), before) == {acme_id: None}  # no later knowledge leaks in
    assert await found(year(2025), before) == {acme_id: None}  # we still believed Acme
    assert await found(year(2025), after) == {beta_id: None}
    assert await found(year(2022), after) == {acme_id: year(2024)}

    then = await memory.context(G, "Where does Alice work?", filters=SearchFilters(as_of=year(2022), known_at=before))
    assert "Alice works for Acme (Date range: 2020-01-01 00:00:00Z - present)" in then
    assert "Beta" not in then.split("</FACTS>")[0]  # (entity summaries are not versioned: see docs)
    now = await memory.context(G, "Where does Alice work?", filters=SearchFilters(as_of=year(2022), known_at=after))
    assert "Alice works for Acme (Date range: 2020-01-01 00:00:00Z - 2024-01-01 00:00:00Z)" in now


async def test_list_facts_takes_filters(memory: Chronomem) -> None:
    acme_id, beta_id, before, _ = await job_change(memory)
    await memory.add_fact(G, "Alice", "LIKES", "tea", "Alice likes tea")
    works = await memory.list_facts(G, filters=SearchFilters(relation_types=("WORKS_FOR",), include_superseded=True))
    assert {f.id for f in works} == {acme_id, beta_id}
    (as_known,) = await memory.list_facts(G, filters=SearchFilters(known_at=before))
    assert as_known.id == acme_id and as_known.invalid_at is None
    assert len(await memory.list_facts(G)) == 3  # no filters: every fact, superseded ones included


async def test_a_fact_added_twice_has_one_source_and_no_copy(memory: Chronomem) -> None:
    first = await memory.add_fact(G, "Alice", "LIKES", "tea", "Alice likes tea")
    again = await memory.add_fact(G, "Alice", "LIKES", "tea", "Alice likes tea")
    assert again.id == first.id and again.sources == (DIRECT,)
    crm = FactSource(name="crm", reference="contact/42")
    cited = await memory.add_fact(G, "Alice", "LIKES", "tea", "Alice likes tea", provenance=crm)
    assert cited.id == first.id and cited.sources == (DIRECT, crm)
    assert len(await memory.list_facts(G)) == 1
    assert [v.fact.version for v in await memory.fact_history(G, first.id)] == [1]  # evidence is no new version


async def test_add_fact_cites_an_episode_of_the_group_and_refuses_another(memory: Chronomem) -> None:
    episode = await memory.add_episode(G, "Alice: I drink tea every morning", speaker="Alice")
    cited = await memory.add_fact(G, "Alice", "LIKES", "tea", "Alice likes tea", provenance=episode.episode.id)
    assert cited.episode_ids == (episode.episode.id,) and cited.sources == ()
    with pytest.raises(NotFoundError):
        await memory.add_fact(G, "Alice", "LIKES", "coffee", "Alice likes coffee", provenance="not-an-episode")
    assert [f.fact for f in await memory.list_facts(G)] == ["Alice likes tea"]  # nothing written


async def test_update_fact_is_a_correction_with_its_own_version_and_source(memory: Chronomem) -> None:
    tea = await memory.add_fact(G, "Alice", "LIKES", "tea", "Alice likes tea", valid_at=year(2020))
    fixed = await memory.update_fact(G, tea.id, fact="Alice likes green tea", invalid_at=year(2023))
    assert (fixed.fact, fixed.valid_at, fixed.invalid_at, fixed.version) == (
        "Alice likes green tea", year(2020), year(2023), 2,
    )
    assert fixed.sources == (DIRECT, CORRECTION)
    first, latest = await memory.fact_history(G, tea.id)
    assert first.fact.fact == "Alice likes tea" and latest.fact == fixed
    (then,) = await memory.list_facts(G, filters=SearchFilters(known_at=first.recorded_from))
    assert then.fact == "Alice likes tea" and then.invalid_at is None
    hits = await memory.search(G, "green tea", filters=SearchFilters(include_superseded=True))
    assert [f.id for f, _ in hits.facts] == [tea.id]
    reopened = await memory.update_fact(G, tea.id, invalid_at=None, source=FactSource(name="ticket", reference="7"))
    assert reopened.invalid_at is None and reopened.version == 3


async def test_a_bad_correction_changes_nothing(memory: Chronomem) -> None:
    tea = await memory.add_fact(G, "Alice", "LIKES", "tea", "Alice likes tea", valid_at=year(2020))
    with pytest.raises(InvalidInputError):
        await memory.update_fact(G, tea.id, invalid_at=year(2019))
    with pytest.raises(InvalidInputError):
        await memory.update_fact(G, tea.id, fact="   ")
    with pytest.raises(NotFoundError):
        await memory.update_fact(G, "no-such-fact", fact="x")
    with pytest.raises(NotFoundError):
        await memory.update_fact(G, tea.id, fact="Alice likes mint tea", source="not-an-episode")
    assert [v.fact for v in await memory.fact_history(G, tea.id)] == [tea]
    assert await memory.update_fact(G, tea.id, fact="Alice likes tea", source=DIRECT) == tea  # nothing to correct


async def test_a_hyperedge_joins_every_participant(memory: Chronomem) -> None:
    sale = await memory.add_fact(G, "Alice", "SOLD", "Bob", "Alice sold her car to Bob for Carol",
                                 participants=["Carol"])
    (carol,) = await memory.store.find_entities_by_names(G, ["Carol"])
    assert sale.other_entity_ids == (carol.id,)
    walked = await memory.store.bfs(G, [carol.id], max_hops=1)
    assert sale.id in walked.facts and set(sale.entity_ids) <= set(walked.entities)
    hits = await memory.search(G, "sold car")
    assert [f.id for f, _ in hits.facts] == [sale.id]
    context = await memory.context(G, "Who bought the car?")
    assert "Alice sold her car to Bob for Carol [participants: Alice, Bob, Carol]" in context


async def test_hyperedges_are_deduplicated_by_their_participant_set(memory: Chronomem) -> None:
    sale = await memory.add_fact(G, "Alice", "SOLD", "Bob", "Alice sold her car to Bob for Carol",
                                 participants=["Carol"])
    again = await memory.add_fact(G, "Alice", "SOLD", "Bob", "Alice sold her car to Bob for Carol",
                                  participants=["Carol"], provenance=FactSource(name="contract.pdf", reference="p. 2"))
    assert again.id == sale.id and len(again.sources) == 2
    other = await memory.add_fact(G, "Alice", "SOLD", "Bob", "Alice sold her car to Bob for Carol",
                                  participants=["Dan"])
    assert other.id != sale.id  # another participant set: another fact
    with pytest.raises(InvalidInputError):
        await memory.add_fact(G, "Alice", "SOLD", "Bob", "Alice sold a car", participants=[" "])
