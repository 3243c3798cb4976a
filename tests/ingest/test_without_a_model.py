"""The LLM-free paths: unextracted episodes and reprocess, add_fact, declared JSON mappings, ontology rules."""

from __future__ import annotations

import json

import pytest
from ingest_doubles import Script, at
from pydantic import BaseModel, Field

from chronomem.domain import Episode, EpisodeKind, EpisodeStatus, true_at
from chronomem.errors import ConfigurationError
from chronomem.filters import SearchFilters
from chronomem.ingest import EntitySpec, FactSpec, IngestConfig, Ingestor, JsonMapping, Ontology
from chronomem.llm.testing import FunctionModel
from chronomem.store.base import Scope


async def test_without_a_model_episodes_are_stored_searchable_and_reprocessed_later(store, embedder, script: Script):
    ingestor = Ingestor(store, embedder, None)
    episode = Episode(group_id="g", speaker="Alice", content="I work at Acme.", reference_time=at("2024-01-01"))
    result = await ingestor.add_episode(episode)
    assert result.episode.status is EpisodeStatus.UNEXTRACTED
    assert [hit.id for hit in await store.fulltext_search("g", Scope.EPISODES, "Acme")] == [episode.id]
    assert episode.id in await store.get_vectors("g", Scope.EPISODES, [episode.id])
    assert (await store.stats("g")).entities == 0
    with pytest.raises(ConfigurationError):
        await ingestor.reprocess("g")

    script.episodes["Acme"] = (["Alice", "Acme"], [
        {"source": "Alice", "relation_type": "WORKS_FOR", "target": "Acme", "fact": "Alice works at Acme"}])
    assert await Ingestor(store, embedder, FunctionModel(script)).reprocess("g") == 1
    (stored,) = await store.get_episodes("g", [episode.id])
    assert stored.status is EpisodeStatus.DONE
    (fact,) = await store.list_facts("g")
    assert fact.fact == "Alice works at Acme" and fact.episode_ids == (episode.id,)


async def test_add_fact_needs_no_model_and_a_single_valued_relation_closes_the_previous_value(store, embedder):
    ingestor = Ingestor(store, embedder, None, ontology=Ontology(single_valued=["LIVES_IN"]))
    lisbon = await ingestor.add_fact("g", "Alice", "lives in", "Lisbon", "Alice lives in Lisbon",
                                     valid_at=at("2020-03-01"), target_labels=("City",))
    paris = await ingestor.add_fact("g", "alice", "LIVES_IN", "Paris", "Alice lives in Paris",
                                    valid_at=at("2024-05-01"))
    assert lisbon.relation_type == paris.relation_type == "LIVES_IN"
    assert paris.source_id == lisbon.source_id  # "alice" resolved to "Alice" deterministically
    facts = {f.fact: f for f in await store.list_facts("g")}
    assert facts["Alice lives in Lisbon"].invalid_at == at("2024-05-01")
    assert facts["Alice lives in Lisbon"].expired_at is not None
    assert facts["Alice lives in Paris"].invalid_at is None
    entities = {e.name: e for e in await store.list_entities("g")}
    assert entities["Lisbon"].labels == ("Entity", "City")
    assert "Alice lives in Paris." in entities["Alice"].summary and "Lisbon" not in entities["Alice"].summary
    again = await ingestor.add_fact("g", "Alice", "LIVES_IN", "Paris", "Alice lives in Paris")
    assert again.id == paris.id and len(await store.list_facts("g")) == 2


CRM = JsonMapping(
    name="crm",
    source_description="crm export",
    entities=(
        EntitySpec(key="account", name="company", label="Company", attributes={"plan": "plan"}),
        EntitySpec(key="manager", name="account_manager", label="Person"),
        EntitySpec(key="city", name="hq.city", label="City"),
    ),
    facts=(
        FactSpec(source="account", relation_type="MANAGED_BY", target="manager",
                 fact="{account} is managed by {manager}", valid_at="updated_at"),
        FactSpec(source="account", relation_type="HEADQUARTERED_IN", target="city",
                 fact="{account} is headquartered in {city}", valid_at="updated_at"),
    ),
)


def record(day: str, manager: str, city: str, plan: str = "basic") -> Episode:
    content = json.dumps({"company": "Acme Corp", "account_manager": manager, "hq": {"city": city},
                          "plan": plan, "updated_at": day})
    return Episode(group_id="crm", kind=EpisodeKind.JSON, content=content, source_description="crm export",
                   reference_time=at(day))


async def test_a_json_record_stream_with_a_single_valued_relation_needs_no_model(store, embedder):
    ontology = Ontology(single_valued=["MANAGED_BY", "HEADQUARTERED_IN"])
    ingestor = Ingestor(store, embedder, None, config=IngestConfig(json_mappings=(CRM,)), ontology=ontology)
    results = await ingestor.add_episodes([
        record("2024-01-01", "Dana", "Boston"),
        record("2024-03-01", "Dana", "Boston", plan="pro"),  # nothing changed but the plan
        record("2024-06-01", "Evan", "Boston"),
    ], progress=False)
    assert all(r.episode.status is EpisodeStatus.DONE for r in results)
    assert [r.usage.calls for r in results] == [0, 0, 0]
    facts = {f.fact: f for f in await store.list_facts("crm")}
    assert set(facts) == {"Acme Corp is managed by Dana", "Acme Corp is managed by Evan",
                          "Acme Corp is headquartered in Boston"}
    dana, evan = facts["Acme Corp is managed by Dana"], facts["Acme Corp is managed by Evan"]
    assert dana.valid_at == at("2024-01-01") and dana.invalid_at == at("2024-06-01") and dana.expired_at
    assert len(dana.episode_ids) == 2  # restated by the second record
    assert len(facts["Acme Corp is headquartered in Boston"].episode_ids) == 3
    assert true_at(dana, at("2024-04-01")) and not true_at(dana, at("2024-07-01")) and true_at(evan, at("2024-07-01"))
    as_of = await store.list_facts("crm", filters=SearchFilters(as_of=at("2024-04-01"), relation_types=("MANAGED_BY",)))
    assert [f.fact for f in as_of] == ["Acme Corp is managed by Dana"]
    acme = {e.name: e for e in await store.list_entities("crm")}["Acme Corp"]
    assert acme.labels == ("Entity", "Company") and acme.attributes == {"plan": "basic"}


async def test_mapped_json_never_calls_a_configured_model(store, embedder, script: Script):
    model = FunctionModel(script)
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(json_mappings=(CRM,)))
    await ingestor.add_episode(record("2024-01-01", "Dana", "Boston"))
    await ingestor.add_episode(record("2024-02-01", "Dana Cruz", "Boston"))  # "Dana" is ambiguous: still no call
    assert model.calls == []
    assert len(await store.list_facts("crm")) == 3


async def test_add_fact_never_calls_a_configured_model(store, embedder, script: Script):
    model = FunctionModel(script)
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(summary_max_chars=100, summary_target_chars=50))
    await ingestor.add_fact("g", "Dana", "WORKS_AT", "Acme", "Dana works at Acme as a senior account manager in Europe")
    # Dana's summary now passes its bound, which a model would rewrite: the rules shorten it instead
    await ingestor.add_fact("g", "Dana", "LIVES_IN", "Boston", "Dana lives in Boston, near the harbour, since 2019")
    assert model.calls == []
    dana = {e.name: e for e in await store.list_entities("g")}["Dana"]
    assert 0 < len(dana.summary) <= 100


class Person(BaseModel):
    """A human being."""

    occupation: str | None = Field(None, description="their job")


class Company(BaseModel):
    """A business."""


class WorksFor(BaseModel):
    """Employment of a person by a company."""

    title: str | None = None


async def test_custom_ontology_types_attributes_signatures_and_single_valued_relations(
    store, embedder, script: Script
):
    ontology = Ontology([Person, Company], [WorksFor], signatures={"WORKS_FOR": [("Person", "Company")]},
                        single_valued=["WORKS_FOR"])
    script.episodes["Acme"] = ([("Alice", "Person", {"occupation": "engineer", "shoe_size": 38}),
                                ("Acme", "Company", {}), ("Lisbon", "Planet", {})], [
        {"source": "Alice", "relation_type": "WORKS_FOR", "target": "Acme", "fact": "Alice is an engineer at Acme",
         "attributes": {"title": "engineer", "salary": 1}},
        {"source": "Lisbon", "relation_type": "WORKS_FOR", "target": "Acme", "fact": "Lisbon hosts Acme"}])
    script.episodes["Beta"] = ([("Alice", "Person", {}), ("Beta", "Company", {})], [
        {"source": "Alice", "relation_type": "WORKS_FOR", "target": "Beta", "fact": "Alice works at Beta",
         "valid_at": "2024-06-01"}])
    model = FunctionModel(script)
    ingestor = Ingestor(store, embedder, model, ontology=ontology)
    first = await ingestor.add_episode(Episode(group_id="g", speaker="Alice", content="I work at Acme in Lisbon.",
                                               reference_time=at("2024-01-01")))
    (_, extraction_context) = model.calls[0]
    assert [t.name for t in extraction_context.entity_types] == ["Person", "Company"]
    assert extraction_context.entity_types[0].description == "A human being."

    entities = {e.name: e for e in await store.list_entities("g")}
    assert entities["Alice"].labels == ("Entity", "Person")
    assert entities["Alice"].attributes == {"occupation": "engineer"}  # undeclared attributes dropped
    assert entities["Lisbon"].labels == ("Entity",)  # undeclared type
    facts = {f.fact: f for f in await store.list_facts("g")}
    assert facts["Alice is an engineer at Acme"].attributes == {"title": "engineer"}
    assert facts["Lisbon hosts Acme"].relation_type == "RELATES_TO"  # signature refused WORKS_FOR
    assert any("RELATES_TO" in w for w in first.warnings)

    second = await ingestor.add_episode(Episode(group_id="g", speaker="Alice", content="I joined Beta.",
                                                reference_time=at("2024-06-01")))
    assert "resolve_facts" not in model.prompt_names  # single-valued: decided without the model
    (closed,) = second.facts_invalidated
    assert closed.fact == "Alice is an engineer at Acme" and closed.invalid_at == at("2024-06-01")


async def test_combined_extraction_uses_one_call_and_reflexion_adds_missed_entities(store, embedder, script: Script):
    script.episodes["Acme"] = (["Alice", "Acme"], [
        {"source": "Alice", "relation_type": "WORKS_FOR", "target": "Acme", "fact": "Alice works at Acme"}])
    model = FunctionModel(script)
    combined = Ingestor(store, embedder, model, config=IngestConfig(extraction="combined"))
    result = await combined.add_episode(Episode(group_id="c", speaker="Alice", content="I work at Acme."))
    assert model.prompt_names == ["extract_graph"] and result.usage.calls == 1
    assert [f.fact for f in await store.list_facts("c")] == ["Alice works at Acme"]

    def reflect(prompt, context):
        if prompt.name == "entity_reflexion":
            assert context.extracted == ("Alice",)
            return {"missed": [{"name": "Acme"}]}
        if prompt.name == "extract_entities":
            return {"entities": [{"name": "Alice"}]}
        return script(prompt, context)

    reflective = Ingestor(store, embedder, FunctionModel(reflect), config=IngestConfig(reflexion=True))
    result = await reflective.add_episode(Episode(group_id="r", speaker="Alice", content="I work at Acme."))
    assert {e.name for e in result.entities_created} == {"Alice", "Acme"}
    assert len(result.facts_created) == 1
