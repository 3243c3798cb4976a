"""FalkorDB's bulk load: HNSW indexes built once at the end of the block, over every holder, and
rebuilt by the next process when a load stopped before its end; vectors travel exactly."""

from __future__ import annotations

import numpy as np
import pytest

from chronomem.domain import Entity, Fact
from chronomem.errors import InvalidInputError
from chronomem.store.base import GraphWrite, Scope
from falkordb_server import drop_namespace, open_falkordb_store

pytestmark = pytest.mark.integration


def unit(seed: int, dim: int = 16) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


def entities_and_facts(group: str, n: int) -> tuple[list[Entity], list[Fact]]:
    entities = [Entity(id=f"n{i}", group_id=group, name=f"Entity {i}") for i in range(n)]
    facts = [Fact(id=f"f{i}", group_id=group, source_id=f"n{i}", target_id=f"n{(i + 1) % n}", fact=f"fact {i}")
             for i in range(n)]
    return entities, facts


async def vector_indexes(store, group: str) -> set[str]:
    text = "CALL db.indexes() YIELD label, types RETURN label, types"
    rows = await store.connection.query(store.graph_key(group), text, read_only=True)
    return {label for label, types in rows if "VECTOR" in types.get("emb", [])}


async def test_the_vector_index_is_built_when_the_block_ends(falkordb_store) -> None:
    entities, facts = entities_and_facts("g", 30)
    async with falkordb_store.bulk_load("g"):
        await falkordb_store.write(GraphWrite("g", entities=entities, entity_vectors={e.id: unit(i) for i, e in
                                                                                      enumerate(entities)}))
        for at in range(0, 30, 10):
            chunk = facts[at : at + 10]
            await falkordb_store.write(GraphWrite("g", facts=chunk, fact_vectors={f.id: unit(100 + int(f.id[1:]))
                                                                                   for f in chunk}))
        assert await vector_indexes(falkordb_store, "g") == set()  # nothing inserted one by one
        with pytest.raises(InvalidInputError, match="dimensions"):  # the dimension is still checked
            await falkordb_store.write(GraphWrite("g", fact_vectors={"f0": unit(1, dim=8)}))
    assert await vector_indexes(falkordb_store, "g") == {"EntityVec", "FactVec"}
    for i in (0, 17, 29):
        hits = await falkordb_store.vector_search("g", Scope.FACTS, unit(100 + i), limit=1)
        assert [h.id for h in hits] == [f"f{i}"]
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert [h.id for h in await falkordb_store.vector_search("g", Scope.ENTITIES, unit(5), limit=1)] == ["n5"]
    # after the block, writes insert into the index as usual
    await falkordb_store.write(GraphWrite("g", facts=[facts[0]], fact_vectors={"f0": unit(999)}))
    assert [h.id for h in await falkordb_store.vector_search("g", Scope.FACTS, unit(999), limit=1)] == ["f0"]


async def test_a_block_that_fails_still_builds_the_indexes_of_what_it_wrote(falkordb_store) -> None:
    entities, _ = entities_and_facts("g", 5)
    with pytest.raises(RuntimeError):
        async with falkordb_store.bulk_load("g"):
            await falkordb_store.write(GraphWrite("g", entities=entities, entity_vectors={"n3": unit(3)}))
            raise RuntimeError("the importer gave up")
    assert [h.id for h in await falkordb_store.vector_search("g", Scope.ENTITIES, unit(3), limit=1)] == ["n3"]


async def test_a_load_cut_short_is_indexed_by_the_next_process(falkordb_server) -> None:
    loader = await open_falkordb_store(falkordb_server.url)
    entities, facts = entities_and_facts("g", 12)
    # the loading process dies inside the block: its writes landed, its index build never ran
    loader._schema.defer_vector_indexes(loader.graph_key("g"))
    await loader.write(GraphWrite("g", entities=entities, facts=facts,
                                  fact_vectors={f.id: unit(int(f.id[1:])) for f in facts}))
    assert await vector_indexes(loader, "g") == set()
    await loader.close()
    later = await open_falkordb_store(falkordb_server.url, namespace=loader._keys.namespace)
    try:
        await later.write(GraphWrite("g", entities=[Entity(id="x", group_id="g", name="X")]))  # no vectors of its own
        assert await vector_indexes(later, "g") == {"FactVec"}
        assert [h.id for h in await later.vector_search("g", Scope.FACTS, unit(7), limit=1)] == ["f7"]
        with pytest.raises(InvalidInputError, match="16 dimensions"):  # learned from the holders themselves
            await later.write(GraphWrite("g", fact_vectors={"f1": unit(1, dim=8)}))
    finally:
        await drop_namespace(later)


async def test_vectors_come_back_exactly_as_written(falkordb_store) -> None:
    rng = np.random.default_rng(3)
    vector = rng.normal(size=384).astype(np.float32)
    vector[:4] = [1e-9, -3.4e-7, 0.0, 1.0000001]  # small components keep their low bits
    entity = Entity(id="n", group_id="g", name="N")
    await falkordb_store.write(GraphWrite("g", entities=[entity], entity_vectors={"n": vector}))
    stored = (await falkordb_store.get_vectors("g", Scope.ENTITIES, ["n"]))["n"]
    assert stored.dtype == np.float32
    assert np.array_equal(stored, vector)
