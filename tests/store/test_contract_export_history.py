"""The store contract, continued: an export carries every fact's history, and an import into a
fresh store restores it exactly, on every backend (DESIGN §1: history is append-only; a copy keeps it).

Transaction times are injected (``recorded_at``), as in ``test_contract_history``: "as known at t'"
is asked at fixed instants around each recorded change, never at the clock.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from backends import open_backend
from chronomem.archive import EXPORT_FORMAT, GroupExport, export_group, import_group, read_export
from chronomem.domain import Entity, Fact
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import InvalidInputError
from chronomem.filters import SearchFilters
from chronomem.ingest.invalidation import invalidate, reopen
from chronomem.store import GraphWrite, Scope, Store

G = "export-history"
EMBED = HashingEmbedder(64)
RECORDS = datetime(2025, 1, 1, tzinfo=UTC)  # T': when we learned things


def year(n: int) -> datetime:
    return datetime(n, 1, 1, tzinfo=UTC)


def learned(days: float) -> datetime:
    return RECORDS + timedelta(days=days)


# The instants asked about: before, between and after each change below (days 0, 10, 15, 30).
AS_OF = [year(2019), year(2022), year(2025)]
KNOWN_AT = [learned(d) for d in (-1, 0, 5, 10, 12, 15, 20, 30, 40)]


def vec(text: str) -> np.ndarray:
    return EMBED.embed_one(text)


def entity(name: str) -> Entity:
    return Entity(group_id=G, name=name, created_at=RECORDS)


async def write(store: Store, entities: list[Entity], facts: list[Fact], **more: object) -> None:
    await store.write(GraphWrite(
        group_id=G, entities=entities, facts=facts, entity_vectors={e.id: vec(e.name) for e in entities},
        fact_vectors={f.id: vec(f.fact) for f in facts}, **more,  # type: ignore[arg-type]
    ))


async def history_in(store: Store) -> dict[str, Fact]:
    """The job-change triad (day 0 Acme, day 10 Beta closes it), a correction (day 15) and the
    deletion of the Beta fact re-opening Acme (day 30). Returns the facts by name."""
    alice, acme, beta, tea = entity("Alice"), entity("Acme"), entity("Beta"), entity("tea")
    acme_job = Fact(group_id=G, source_id=alice.id, target_id=acme.id, fact="Alice works at Acme",
                    relation_type="WORKS_AT", valid_at=year(2020), created_at=learned(0))
    likes = Fact(group_id=G, source_id=alice.id, target_id=tea.id, fact="Alice likes tea",
                 relation_type="LIKES", valid_at=year(2021), created_at=learned(0))
    await write(store, [alice, acme, beta, tea], [acme_job, likes])
    beta_job = Fact(group_id=G, source_id=alice.id, target_id=beta.id, fact="Alice works at Beta",
                    relation_type="WORKS_AT", valid_at=year(2024), created_at=learned(10))
    change = invalidate(beta_job, [acme_job], now=learned(10), reference_time=learned(10))
    await write(store, [], [change.new_fact, *change.expired])
    corrected = likes.model_copy(update={"fact": "Alice likes green tea", "recorded_at": learned(15)})
    await write(store, [], [corrected])
    (closed,) = await store.get_facts(G, [acme_job.id])
    await store.write(GraphWrite(group_id=G, facts=[reopen(closed, now=learned(30))], delete_fact_ids=[beta_job.id]))
    return {"acme": acme_job, "likes": likes, "beta": beta_job}


async def answers(store: Store) -> dict[tuple[datetime, datetime], dict[str, object]]:
    """What every read path says under each (as_of, known_at): the facts listed (whole, so their
    timestamps and versions count) and the ids the vector, full-text and BFS searches admit."""
    (alice,) = await store.find_entities_by_names(G, ["Alice"])
    found: dict[tuple[datetime, datetime], dict[str, object]] = {}
    for as_of in AS_OF:
        for known in KNOWN_AT:
            filters = SearchFilters(as_of=as_of, known_at=known)
            vector = await store.vector_search(G, Scope.FACTS, vec("Alice works at"), limit=10, filters=filters)
            text = await store.fulltext_search(G, Scope.FACTS, "Alice", limit=10, filters=filters)
            walked = await store.bfs(G, [alice.id], max_hops=1, filters=filters)
            found[as_of, known] = {
                "list": sorted(await store.list_facts(G, filters=filters), key=lambda f: f.id),
                "vector": sorted(h.id for h in vector), "fulltext": sorted(h.id for h in text),
                "bfs": sorted(walked.facts),
            }
    return found


@pytest.fixture
async def fresh(store_backend: str, tmp_path: Path) -> AsyncIterator[Store]:
    """A second, empty store of the same backend (a new file; a new FalkorDB namespace)."""
    (tmp_path / "fresh").mkdir()
    opened = await open_backend(store_backend, tmp_path / "fresh")
    try:
        yield opened
    finally:
        await opened.close()


async def round_trip(source: Store, target: Store) -> GroupExport:
    exported = await export_group(source, EMBED, G)
    await import_group(target, EMBED, read_export(exported.model_dump_json()))  # through its JSON form
    return exported


async def test_an_export_carries_every_earlier_version(store: Store) -> None:
    facts = await history_in(store)
    exported = await export_group(store, EMBED, G)
    assert exported.format == EXPORT_FORMAT == "chronomem.group/2"
    order = [f.id for f in exported.facts]  # the history follows the facts, each oldest first
    expected = [(facts["acme"].id, 1), (facts["acme"].id, 2), (facts["likes"].id, 1)]
    assert [(v.fact.id, v.fact.version) for v in exported.fact_history] == sorted(
        expected, key=lambda pair: (order.index(pair[0]), pair[1]))
    versions = {(v.fact.id, v.fact.version): v for v in exported.fact_history}
    assert versions[facts["acme"].id, 1].fact == facts["acme"]  # exactly as first written
    assert [versions[key].recorded_to for key in expected] == [learned(10), learned(30), learned(15)]


async def test_after_export_and_import_history_and_as_known_answers_are_identical(store: Store, fresh: Store) -> None:
    facts = await history_in(store)
    await round_trip(store, fresh)
    for fact in facts.values():
        assert await fresh.fact_history(G, fact.id) == await store.fact_history(G, fact.id)
    assert [(v.fact.version, v.fact.invalid_at) for v in await fresh.fact_history(G, facts["acme"].id)] == [
        (1, None), (2, year(2024)), (3, None),  # the triad, then the re-opening
    ]
    before, after = await answers(store), await answers(fresh)
    assert after == before
    # the answers differ across the grid, so identity above is not that of empty answers
    assert len({json.dumps(a["vector"]) for a in before.values()}) > 1
    listed = {f.id: f for f in after[year(2022), learned(20)]["list"]}  # type: ignore[attr-defined]
    assert listed[facts["acme"].id].invalid_at == year(2024)  # what we believed while Beta stood
    assert listed[facts["likes"].id].fact == "Alice likes green tea"  # the correction of day 15
    assert after[year(2025), learned(5)]["bfs"] == sorted([facts["acme"].id, facts["likes"].id])
    # 2025 as known on day 12: Acme had ended, and the Beta fact is erased (deleted with its history)
    assert after[year(2025), learned(12)]["vector"] == [facts["likes"].id]
    assert after[year(2025), learned(40)]["vector"] == sorted([facts["acme"].id, facts["likes"].id])


async def test_exporting_the_copy_gives_the_same_document(store: Store, fresh: Store) -> None:
    await history_in(store)
    exported = await round_trip(store, fresh)
    assert await export_group(fresh, EMBED, G) == exported


async def test_an_export_of_format_1_still_imports_with_latest_versions_only(store: Store, fresh: Store) -> None:
    facts = await history_in(store)
    document = (await export_group(store, EMBED, G)).model_dump(mode="json")
    document["format"] = "chronomem.group/1"
    del document["fact_history"]  # what a /1 export holds
    await import_group(fresh, EMBED, read_export(json.dumps(document)))
    (head,) = await fresh.fact_history(G, facts["acme"].id)
    assert head.fact == (await store.get_facts(G, [facts["acme"].id]))[0] and head.fact.version == 3
    assert await fresh.list_facts(G) == await store.list_facts(G)


async def test_an_unknown_format_is_refused_with_a_clear_message() -> None:
    with pytest.raises(InvalidInputError, match=r"unsupported export format 'chronomem.group/9'.*chronomem.group/2"):
        read_export(json.dumps({"format": "chronomem.group/9", "group_id": G, "embedder": "x", "dimension": 1}))
    with pytest.raises(InvalidInputError, match="not a chronomem group export: group_id"):
        read_export(json.dumps({"format": EXPORT_FORMAT, "embedder": "x", "dimension": 1}))


async def test_a_history_with_a_gap_is_refused_and_nothing_is_written(store: Store, fresh: Store) -> None:
    facts = await history_in(store)
    exported = await export_group(store, EMBED, G)
    first = next(v for v in exported.fact_history if v.fact.id == facts["acme"].id and v.fact.version == 1)
    rest = [v for v in exported.fact_history if v is not first]
    with pytest.raises(InvalidInputError, match="versions 1-2 exactly"):
        await import_group(fresh, EMBED, exported.model_copy(update={"fact_history": tuple(rest)}))  # v1 lost
    shifted = first.model_copy(update={"recorded_to": learned(11)})  # v2 took force on day 10
    with pytest.raises(InvalidInputError, match="must end on T' when version 2 was recorded"):
        await import_group(fresh, EMBED, exported.model_copy(update={"fact_history": (shifted, *rest)}))
    assert await fresh.list_facts(G) == [] and (await fresh.stats(G)).entities == 0


async def test_history_is_not_restored_beside_a_stored_one(store: Store) -> None:
    facts = await history_in(store)
    (earliest, *_) = await store.fact_history(G, facts["likes"].id)
    (head,) = await store.get_facts(G, [facts["likes"].id])
    with pytest.raises(InvalidInputError, match="already holds"):
        await store.write(GraphWrite(group_id=G, facts=[head], fact_history=[earliest]))
    assert len(await store.fact_history(G, facts["likes"].id)) == 2
