"""Facts over three or more entities (hyperedges, paper §2.2.2) through the real pipeline."""

from __future__ import annotations

from ingest_doubles import Script, at

from chronomem.domain import Episode, EpisodeKind
from chronomem.ingest import EntitySpec, FactSpec, IngestConfig, Ingestor, JsonMapping
from chronomem.store.base import Store


def message(text: str, when: str) -> Episode:
    return Episode(group_id="g", speaker="Alice", content=text, reference_time=at(when))


SALE = {"source": "Alice", "relation_type": "SOLD", "target": "Bob", "fact": "Alice sold her car to Bob for Carol",
        "others": ["Carol"]}


async def test_an_extracted_hyperedge_keeps_every_participant(store: Store, embedder, model, script: Script):
    script.episodes["sold my car"] = (["Alice", "Bob", "Carol"], [{**SALE, "others": ["Carol", "Zed", "Alice"]}])
    ingestor = Ingestor(store, embedder, model)
    result = await ingestor.add_episode(message("I sold my car to Bob for Carol.", "2024-03-01"))
    (sale,) = result.facts_created
    names = {e.id: e.name for e in await store.list_entities("g")}
    assert [names[i] for i in sale.entity_ids] == ["Alice", "Bob", "Carol"]  # unknown Zed and the source left out
    assert any("Zed" in w for w in result.warnings)
    (carol,) = [i for i, n in names.items() if n == "Carol"]
    assert sale.id in (await store.bfs("g", [carol], max_hops=1)).facts
    assert [f.id for f in await store.facts_of_entities("g", [carol])] == [sale.id]


async def test_an_entity_the_fact_text_names_is_a_participant_though_the_model_left_it_out(
    store: Store, embedder, model, script: Script
):
    # a small model makes the doctor and the patient the ends and forgets the medicine it names
    script.episodes["put me on"] = (["Grace", "Dr. Morales", "lisinopril", "Oslo"], [
        {"source": "Dr. Morales", "relation_type": "TREATS", "target": "Grace",
         "fact": "Dr. Morales put Grace on lisinopril."}])
    ingestor = Ingestor(store, embedder, model)
    episode = Episode(group_id="g", speaker="Grace", content="In Oslo, Dr. Morales put me on lisinopril.",
                      reference_time=at("2024-03-05"))
    created = {f.fact: f for f in (await ingestor.add_episode(episode)).facts_created}
    names = {e.id: e.name for e in await store.list_entities("g")}
    fact = created["Dr. Morales put Grace on lisinopril."]
    assert [names[i] for i in fact.entity_ids] == ["Dr. Morales", "Grace", "lisinopril"]  # not Oslo: unnamed
    assert set(created) == {fact.fact, "Grace takes lisinopril."}  # the medicine, a fact of its own (set_forms)


async def test_a_restated_hyperedge_gains_provenance_not_a_copy(store: Store, embedder, model, script: Script):
    script.episodes["sold my car"] = (["Alice", "Bob", "Carol"], [SALE])
    script.episodes["again"] = (["Alice", "Bob", "Carol"], [SALE])
    ingestor = Ingestor(store, embedder, model)
    first = await ingestor.add_episode(message("I sold my car to Bob for Carol.", "2024-03-01"))
    second = await ingestor.add_episode(message("Yes, again: the car went to Bob, for Carol.", "2024-03-02"))
    (sale,) = await store.list_facts("g")
    assert sale.episode_ids == (first.episode.id, second.episode.id)


async def test_a_hyperedge_is_invalidated_like_a_binary_fact(store: Store, embedder, model, script: Script):
    script.episodes["sold my car"] = (["Alice", "Bob", "Carol"], [SALE])
    script.episodes["took it back"] = (["Alice", "Bob"], [
        {"source": "Alice", "relation_type": "SOLD", "target": "Bob", "fact": "Alice sold her car to Bob for herself",
         "valid_at": "2024-04-01T00:00:00Z"}])
    script.fact_verdict = lambda q: {"index": q.index, "contradicts": [c.index for c in q.candidates]}
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("I sold my car to Bob for Carol.", "2024-03-01"))
    result = await ingestor.add_episode(message("Bob took it back, it was for himself.", "2024-04-01"))
    (closed,) = result.facts_invalidated
    assert closed.other_entity_ids and closed.invalid_at == at("2024-04-01")
    assert [v.fact.version for v in await store.fact_history("g", closed.id)] == [1, 2]


async def test_a_json_mapping_declares_a_hyperedge(store: Store, embedder):
    mapping = JsonMapping(
        name="deals", source_description="crm",
        entities=(EntitySpec(key="buyer", name="buyer"), EntitySpec(key="seller", name="seller"),
                  EntitySpec(key="broker", name="broker"), EntitySpec(key="notary", name="notary")),
        facts=(FactSpec(source="seller", relation_type="SOLD_TO", target="buyer", others=("broker", "notary"),
                        fact="{seller} sold to {buyer} through {broker}"),),
    )
    ingestor = Ingestor(store, embedder, None, config=IngestConfig(json_mappings=(mapping,)))
    record = '{"buyer": "Bob", "seller": "Alice", "broker": "Carol"}'  # no notary: left out, never invented
    episode = Episode(group_id="g", kind=EpisodeKind.JSON, content=record, source_description="crm",
                      reference_time=at("2024-01-01"))
    (sale,) = (await ingestor.add_episode(episode)).facts_created
    names = {e.id: e.name for e in await store.list_entities("g")}
    assert [names[i] for i in sale.entity_ids] == ["Alice", "Bob", "Carol"]
    assert sale.episode_ids == (episode.id,)
