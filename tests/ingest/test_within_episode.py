"""Contradictions between two facts of one episode: the later statement wins (issue 13, item 5)."""

from __future__ import annotations

from typing import Any

from ingest_doubles import Script, at

from chronomem.domain import Episode, Fact, true_at
from chronomem.ingest import IngestConfig, Ingestor, Ontology
from chronomem.ingest.invalidation import supersede_within_episode
from chronomem.llm.testing import FunctionModel

NOW = at("2024-05-15T12:00")


def message(text: str, when: str) -> Episode:
    return Episode(group_id="g", speaker="Alice", content=text, reference_time=at(when))


def said(target: str, relation: str, text: str, valid: str | None = None) -> dict[str, Any]:
    return {"source": "Alice", "relation_type": relation, "target": target, "fact": text, "valid_at": valid}


def draft(text: str, valid: str | None) -> Fact:
    return Fact(group_id="g", source_id="alice", target_id=text, fact=text, valid_at=at(valid) if valid else None,
                created_at=NOW)


def test_an_earlier_statement_about_an_earlier_time_is_history_born_closed():
    lisbon, paris = draft("Lisbon", "2020-01-01"), draft("Paris", "2024-05-01")
    earlier, later = supersede_within_episode(lisbon, paris, now=NOW, reference_time=NOW)
    assert earlier.invalid_at == at("2024-05-01") and earlier.expired_at is None  # true history, not superseded
    assert later == paris


def test_a_self_correction_supersedes_the_earlier_statement_at_once():
    acme, beta = draft("Acme", None), draft("Beta", None)
    earlier, later = supersede_within_episode(acme, beta, now=NOW, reference_time=NOW)
    assert earlier.expired_at == NOW and earlier.attributes["superseded_by"] == beta.id and later.expired_at is None


def test_an_earlier_statement_about_a_later_time_closes_the_later_one():
    paris_next_year, lisbon_now = draft("Paris", "2025-01-01"), draft("Lisbon", None)
    earlier, later = supersede_within_episode(paris_next_year, lisbon_now, now=NOW, reference_time=NOW)
    assert earlier == paris_next_year and later.invalid_at == at("2025-01-01")


async def test_a_single_valued_relation_stated_twice_keeps_the_later_value_without_a_call(store, embedder):
    script = Script()
    script.episodes["Lisbon"] = (["Alice", "Lisbon", "Paris"], [
        said("Lisbon", "LIVES_IN", "Alice lived in Lisbon", "2020-01-01T00:00:00Z"),
        said("Paris", "LIVES_IN", "Alice lives in Paris", "2024-05-01T00:00:00Z"),
    ])
    model = FunctionModel(script)
    ingestor = Ingestor(store, embedder, model, ontology=Ontology(single_valued=["LIVES_IN"]))
    await ingestor.add_episode(message("I lived in Lisbon from 2020; since May I live in Paris.", "2024-05-15"))
    facts = {f.fact: f for f in await _all(store)}
    lisbon, paris = facts["Alice lived in Lisbon"], facts["Alice lives in Paris"]
    assert lisbon.invalid_at == at("2024-05-01") and true_at(lisbon, at("2022-01-01"))
    assert not true_at(lisbon, at("2024-06-01")) and paris.invalid_at is None
    assert "resolve_facts" not in model.prompt_names


async def _all(store: Any) -> list[Fact]:
    from chronomem.filters import SearchFilters

    return await store.list_facts("g", filters=SearchFilters(include_superseded=True), limit=100)


async def test_the_batched_call_made_anyway_judges_the_episodes_own_facts_too(store, embedder):
    script = Script()
    script.episodes["I like jazz."] = (["Alice", "Jazz"], [said("Jazz", "LIKES", "Alice likes jazz")])
    script.episodes["Actually"] = (["Alice", "Jazz", "Acme", "Beta"], [
        said("Acme", "WORKS_FOR", "Alice works at Acme"),
        said("Beta", "WORKS_FOR", "Alice works at Beta"),
        said("Jazz", "LIKES", "Alice likes jazz a lot"),  # has a stored candidate: the call happens anyway
    ])
    asked: list[Any] = []

    def verdict(question: Any) -> dict[str, Any]:
        asked.append(question)
        job = [c.index for c in question.candidates if "works at" in c.fact and "works at" in question.fact]
        return {"index": question.index, "contradicts": job}

    script.fact_verdict = verdict
    model = FunctionModel(script)
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(extraction="combined"))
    await ingestor.add_episode(message("I like jazz.", "2024-05-01"))
    await ingestor.add_episode(message("I work at Acme. Actually, I work at Beta. And I like jazz a lot.",
                                       "2024-05-15"))
    facts = {f.fact: f for f in await _all(store)}
    assert facts["Alice works at Acme"].expired_at is not None  # corrected within the episode
    assert facts["Alice works at Beta"].expired_at is None and facts["Alice works at Beta"].invalid_at is None
    assert model.prompt_names.count("resolve_facts") == 1  # no extra call for the episode's own facts
    assert any(c.fact == "Alice works at Acme" for q in asked for c in q.candidates)


# -- the extraction answer's own verdict: `supersedes` (no call of its own) ------------------------------


def stated(target: str, relation: str, text: str, valid: str | None = None, **more: Any) -> dict[str, Any]:
    return {**said(target, relation, text, valid), **more}


async def test_a_self_correction_named_by_the_extraction_call_supersedes_the_earlier_fact(store, embedder):
    script = Script()
    script.episodes["Berlin"] = (["Alice", "Berlin", "Munich"], [
        stated("Berlin", "MOVED_TO", "Alice moved to Berlin", "2024-03-01T00:00:00Z"),
        stated("Munich", "MOVED_TO", "Alice moved to Munich", "2024-03-01T00:00:00Z", supersedes=[1]),
    ])
    model = FunctionModel(script)
    ingestor = Ingestor(store, embedder, model)
    result = await ingestor.add_episode(message("I moved to Berlin in March. Actually no, I moved to Munich.",
                                                "2024-05-15"))
    facts = {f.fact: f for f in await _all(store)}
    berlin, munich = facts["Alice moved to Berlin"], facts["Alice moved to Munich"]
    # as known after the episode: the correction holds, the corrected statement is superseded
    assert berlin.expired_at is not None and berlin.attributes["superseded_by"] == munich.id
    assert munich.expired_at is None and munich.invalid_at is None
    assert model.prompt_names == ["extract_entities", "extract_facts"]  # no call of its own
    assert not result.warnings


async def test_a_change_stated_in_combined_extraction_closes_the_earlier_fact_on_its_date(store, embedder):
    script = Script()
    script.episodes["manager"] = (["Alice", "Ann", "Bob"], [
        {"source": "Ann", "relation_type": "MANAGES", "target": "Alice", "fact": "Ann managed Alice",
         "valid_at": "2023-01-01T00:00:00Z"},
        {"source": "Bob", "relation_type": "MANAGES", "target": "Alice", "fact": "Bob manages Alice",
         "valid_at": "2024-05-01T00:00:00Z", "supersedes": [1]},
    ])
    model = FunctionModel(script)
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(extraction="combined"))
    await ingestor.add_episode(message("My manager was Ann; since May it's Bob.", "2024-05-15"))
    facts = {f.fact: f for f in await _all(store)}
    ann, bob = facts["Ann managed Alice"], facts["Bob manages Alice"]
    assert ann.invalid_at == at("2024-05-01") and ann.expired_at is None  # history, ended when Bob began
    assert true_at(ann, at("2024-01-01")) and not true_at(ann, at("2024-06-01")) and true_at(bob, at("2024-06-01"))
    assert model.prompt_names == ["extract_graph"]


async def test_compatible_facts_and_a_supersedes_about_something_else_are_left_alone(store, embedder):
    script = Script()
    script.episodes["jazz"] = (["Alice", "Jazz", "Acme", "Bob"], [
        stated("Jazz", "LIKES", "Alice likes jazz"),
        stated("Acme", "WORKS_FOR", "Alice works at Acme"),  # compatible: nothing named
        {"source": "Bob", "relation_type": "SIBLING_OF", "target": "Alice", "fact": "Bob is Alice's brother",
         "supersedes": [1]},  # shares no entity in the same role with "Alice likes jazz": not a change of it
    ])
    model = FunctionModel(script)
    result = await Ingestor(store, embedder, model).add_episode(
        message("I like jazz and I work at Acme; Bob is my brother.", "2024-05-15"))
    assert all(f.expired_at is None and f.invalid_at is None for f in await _all(store))
    assert len(result.facts_created) == 3 and not result.facts_invalidated
    assert any("shares no entity in its role" in w for w in result.warnings)


async def test_numbers_that_are_not_earlier_facts_of_the_answer_are_ignored(store, embedder):
    script = Script()
    script.episodes["Acme"] = (["Alice", "Acme", "Beta"], [
        stated("Acme", "WORKS_FOR", "Alice works at Acme", supersedes=[2]),  # a later fact
        stated("Beta", "WORKS_FOR", "Alice works at Beta", supersedes=[0, 2, 7]),  # none, itself, out of range
    ])
    model = FunctionModel(script)
    result = await Ingestor(store, embedder, model).add_episode(message("I work at Acme and at Beta.", "2024-05-15"))
    assert all(f.expired_at is None and f.invalid_at is None for f in await _all(store))
    assert sum("not an earlier fact of the answer" in w for w in result.warnings) == 4


def test_the_fact_prompts_ask_for_supersedes_by_the_answers_own_numbering():
    from chronomem.ingest.prompts import (
        COMBINED_EXTRACTION,
        FACT_EXTRACTION,
        CombinedExtractionContext,
        EntityRef,
        EpisodeText,
        FactExtractionContext,
    )

    text = EpisodeText("Alice: I work at Acme. Actually, at Beta.", NOW)
    staged = FACT_EXTRACTION.messages(FactExtractionContext(text, (EntityRef("Alice"), EntityRef("Acme"))))[0]
    combined = COMBINED_EXTRACTION.messages(CombinedExtractionContext(text))[0]
    for user in (staged.content, combined.content):  # the rules: the static system message
        assert "supersedes: numbers (1 = first) of your earlier facts" in user and '"supersedes": [int]' in user


async def test_supersedes_holds_when_the_batched_call_is_made_anyway(store, embedder):
    script = Script()
    script.episodes["I like jazz."] = (["Alice", "Jazz"], [said("Jazz", "LIKES", "Alice likes jazz")])
    script.episodes["Actually"] = (["Alice", "Jazz", "Acme", "Beta"], [
        said("Acme", "WORKS_FOR", "Alice works at Acme"),
        stated("Beta", "WORKS_FOR", "Alice works at Beta", supersedes=[1]),
        said("Jazz", "LIKES", "Alice likes jazz a lot"),  # a stored candidate: the batched call happens
    ])
    script.fact_verdict = lambda question: {"index": question.index}  # it names no contradiction
    model = FunctionModel(script)
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(extraction="combined"))
    await ingestor.add_episode(message("I like jazz.", "2024-05-01"))
    await ingestor.add_episode(message("I work at Acme. Actually, I work at Beta. And I like jazz a lot.",
                                       "2024-05-15"))
    facts = {f.fact: f for f in await _all(store)}
    assert facts["Alice works at Acme"].expired_at is not None and facts["Alice works at Beta"].expired_at is None
    assert model.prompt_names.count("resolve_facts") == 1
