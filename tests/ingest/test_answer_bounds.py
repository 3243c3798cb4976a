"""The ingestion answers are bounded by their context (issue 14, item 3): what happens past a bound,
and what the bounds leave alone (typed attributes, JSON mappings, facts stated by code)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ingest_doubles import Script, at
from pydantic import BaseModel

from chronomem.domain import Episode
from chronomem.ingest import Ingestor, Ontology
from chronomem.ingest.prompts import (
    ENTITY_EXTRACTION,
    FACT_EXTRACTION,
    CandidateFact,
    EntityExtractionContext,
    EntityRef,
    EpisodeText,
    ExtractedFact,
    ExtractedGraph,
    FactExtractionContext,
    TypeSpec,
    facts_allowed,
)
from chronomem.llm.budget import answer_schema_for
from chronomem.llm.testing import FunctionModel


class Person(BaseModel):
    """A human being."""

    age: int | None = None
    occupation: str | None = None


def message(text: str) -> Episode:
    return Episode(group_id="g", speaker="Alice", content=text, reference_time=at("2024-05-15"))


def test_attributes_may_hold_only_as_many_keys_as_the_declared_types_have():
    episode = EpisodeText("Alice: hi", datetime(2024, 5, 15, tzinfo=UTC))
    untyped = answer_schema_for(ENTITY_EXTRACTION, EntityExtractionContext(episode))
    typed = answer_schema_for(ENTITY_EXTRACTION, EntityExtractionContext(
        episode, (TypeSpec("Person", "A human being.", (("age", "int", ""), ("occupation", "str", ""))),)))
    # no declared fields: no attributes to write (left out of the schema, not offered empty)
    assert "attributes" not in untyped["$defs"]["ExtractedEntity"]["properties"]
    assert untyped["$defs"]["ExtractedEntity"]["additionalProperties"] is False
    assert typed["$defs"]["ExtractedEntity"]["properties"]["attributes"]["maxProperties"] == 2


def test_the_fact_call_offers_only_the_fields_its_context_can_fill():
    episode = EpisodeText("Alice: I work at Acme.", datetime(2024, 5, 15, tzinfo=UTC))
    two = (EntityRef("Alice", "Person"), EntityRef("Acme", "Organization"))

    def offered(entities: tuple[EntityRef, ...] = two, **context: Any) -> set[str]:
        schema = answer_schema_for(FACT_EXTRACTION, FactExtractionContext(episode, entities, **context))
        return set(schema["$defs"]["ExtractedFact"]["properties"]) | set(schema["properties"])

    # no stored facts shown, two entities, no typed edges, nothing ambiguous: what the fact needs
    assert offered() == {"source", "relation_type", "target", "fact", "quote", "valid_at", "invalid_at",
                         "supersedes", "facts"}
    shown = (CandidateFact(1, "Alice works at Initech.", "WORKS_AT", False, None, None),)
    assert {"duplicate_of", "contradicts"} <= offered(existing=shown)
    assert "others" in offered((*two, EntityRef("Bob", "Person")))


async def test_typed_attributes_still_arrive_converted_by_the_ontology(store, embedder):
    script = Script()
    script.episodes["engineer"] = ([("Alice", "Person", {"age": "41", "occupation": "engineer"})], [])
    ingestor = Ingestor(store, embedder, FunctionModel(script), ontology=Ontology(entity_types=[Person]))
    result = await ingestor.add_episode(message("I am a 41 year old engineer."))
    (alice,) = result.entities_created
    assert alice.attributes == {"age": 41, "occupation": "engineer"} and not result.warnings


async def test_facts_past_the_episodes_bound_are_dropped_first_ones_kept_and_said(store, embedder):
    text = "I met Bob."
    allowed = facts_allowed(EpisodeText(f"Alice: {text}", at("2024-05-15")))
    script = Script()
    facts: list[dict[str, Any]] = [{"source": "Alice", "relation_type": "MET", "target": "Bob",
                                    "fact": f"Alice met Bob ({n})", "quote": text} for n in range(allowed + 3)]
    script.episodes[text] = (["Alice", "Bob"], facts)
    result = await Ingestor(store, embedder, FunctionModel(script)).add_episode(message(text))
    assert [f.fact for f in result.facts_created] == [f"Alice met Bob ({n})" for n in range(allowed)]
    assert any("3 items past them dropped" in w for w in result.warnings)
    assert result.episode.usage["items_dropped"] == 3


def test_code_that_states_facts_is_not_held_to_a_models_bounds():
    long = "Alice " + "really " * 200 + "likes Bob"
    graph = ExtractedGraph(facts=[ExtractedFact(source="Alice", target="Bob", fact=long)] * 60)
    assert len(graph.facts) == 60 and graph.facts[0].fact == long


async def test_a_fact_answer_that_runs_to_its_token_cap_keeps_its_complete_facts(store, embedder):
    # a small model repeating itself until the cap: the episode keeps what came before the cut
    text = "I met Bob at the harbour on Monday, and we talked about boats, sails and the weather. " * 3
    facts: list[dict[str, Any]] = [
        {"source": "Alice", "relation_type": "MET", "target": "Bob", "quote": text.strip(),
         "fact": f"Alice met Bob at the harbour on Monday and they talked about boats and sails ({n})."}
        for n in range(facts_allowed(EpisodeText(f"Alice: {text}", at("2024-05-15"))))
    ]
    script = Script()
    script.episodes[text.strip()] = (["Alice", "Bob"], facts)
    result = await Ingestor(store, embedder, FunctionModel(script)).add_episode(message(text.strip()))
    assert result.episode.usage["answers_cut_off"] == 1
    kept = [f.fact for f in result.facts_created]
    assert kept and kept == [f["fact"] for f in facts[: len(kept)]] and len(kept) < len(facts)
    assert any("extract_facts: the answer ran to its output-token limit" in w for w in result.warnings)
