"""Prompts render what the paper's prompts ask for; the communities hook hears about new entities."""

from __future__ import annotations

from datetime import UTC, datetime

from ingest_doubles import Script, at

from chronomem.domain import Episode, EpisodeKind
from chronomem.ingest import Ingestor
from chronomem.ingest.prompts import (
    COMBINED_EXTRACTION,
    ENTITY_EXTRACTION,
    ENTITY_RESOLUTION,
    FACT_RESOLUTION,
    SUMMARY_REWRITE,
    CandidateEntity,
    CandidateFact,
    CombinedExtractionContext,
    EntityExtractionContext,
    EntityQuestion,
    EntityResolutionContext,
    EpisodeText,
    FactQuestion,
    FactResolutionContext,
    SummaryContext,
    SummaryItem,
    TypeSpec,
)
from chronomem.llm.base import Message
from chronomem.llm.testing import FunctionModel


def whole(messages: list[Message]) -> str:
    return "\n".join(m.content for m in messages)


TEXT = EpisodeText("Alice: I joined Beta.", datetime(2024, 6, 1, tzinfo=UTC), previous=("Bob: hi", "Alice: hey"))


def test_entity_extraction_follows_the_paper_speaker_first_no_dates_and_lists_ontology_types():
    (system, user) = ENTITY_EXTRACTION.messages(
        EntityExtractionContext(TEXT, (TypeSpec("Person", "A human being.", (("occupation", "str", "their job"),)),))
    )
    assert "JSON" in system.content
    # the rules and the ontology are the static system message; the episode is the user's
    for rule in ("speaker", "No nodes for relationships, actions, dates", "- Person: A human being.",
                 "attribute occupation (str): their job"):
        assert rule in system.content
    for data in ("Bob: hi\nAlice: hey", "Alice: I joined Beta."):
        assert data in user.content and data not in system.content
    json_episode = EpisodeText('{"a": 1}', TEXT.reference_time, kind=EpisodeKind.JSON)
    assert "record is about" in ENTITY_EXTRACTION.messages(EntityExtractionContext(json_episode))[0].content


def test_combined_and_resolution_prompts_number_candidates_instead_of_uuids():
    combined = whole(COMBINED_EXTRACTION.messages(CombinedExtractionContext(TEXT)))
    assert '"entities"' in combined and '"facts"' in combined and "REFERENCE TIME" in combined
    entities = ENTITY_RESOLUTION.messages(EntityResolutionContext(
        TEXT, (EntityQuestion(0, "Bob", "Entity", (CandidateEntity(1, "Robert Smith", "plays chess"),)),)))
    assert "NEW 0: Bob" in entities[-1].content and "existing 1: Robert Smith — plays chess" in entities[-1].content
    facts = FACT_RESOLUTION.messages(FactResolutionContext((FactQuestion(
        0, "Alice works at Beta", "WORKS_FOR",
        (CandidateFact(1, "Alice works at Acme", "WORKS_FOR", False, at("2020-01-01")),)),)))
    assert "existing 1 (shares an entity): WORKS_FOR: Alice works at Acme [2020-01-01 .. now]" in facts[-1].content
    summary = SUMMARY_REWRITE.messages(SummaryContext((SummaryItem(0, "Alice", "Long."),), 300))
    assert "at most LENGTH characters" in summary[0].content and "<LENGTH>300</LENGTH>" in summary[-1].content


async def test_on_entities_added_hears_the_new_entities_once(store, embedder, script: Script):
    script.episodes["Acme"] = (["Alice", "Acme"], [
        {"source": "Alice", "relation_type": "WORKS_FOR", "target": "Acme", "fact": "Alice works at Acme"}])
    heard: list[tuple[str, list[str]]] = []

    async def hook(group_id: str, entity_ids: list[str]) -> None:
        heard.append((group_id, entity_ids))

    ingestor = Ingestor(store, embedder, FunctionModel(script), on_entities_added=hook)
    first = await ingestor.add_episode(Episode(group_id="g", speaker="Alice", content="I work at Acme."))
    await ingestor.add_episode(Episode(group_id="g", speaker="Alice", content="Acme again."))
    assert heard == [("g", [e.id for e in first.entities_created])]
    assert {e.name for e in first.entities_created} == {"Alice", "Acme"}


async def test_text_episodes_use_the_same_pipeline_and_their_own_guideline(store, embedder, script: Script):
    script.episodes["Lisbon office"] = (["Acme", "Lisbon"], [
        {"source": "Acme", "relation_type": "OPENED_OFFICE_IN", "target": "Lisbon",
         "fact": "Acme opened an office in Lisbon", "valid_at": "2024-03-01"}])
    model = FunctionModel(script)
    result = await Ingestor(store, embedder, model).add_episode(Episode(
        group_id="g", kind=EpisodeKind.TEXT, content="Press release: Acme opened its Lisbon office in March.",
        reference_time=at("2024-04-02")))
    (_, context) = model.calls[0]
    assert "main actor" in ENTITY_EXTRACTION.messages(context)[0].content
    (fact,) = result.facts_created
    assert fact.valid_at == at("2024-03-01") and fact.relation_type == "OPENED_OFFICE_IN"
    assert (await store.entities_of_episodes("g", [result.episode.id]))[result.episode.id]
