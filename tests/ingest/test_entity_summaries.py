"""Entity summaries: a narrative grown by the note each episode's extraction answer carries, labelled by
who wrote it, within the per-episode call budget."""

from __future__ import annotations

from typing import Any

from ingest_doubles import at

from chronomem.domain import Entity, Episode
from chronomem.embed.testing import HashingEmbedder
from chronomem.heuristic import heuristic_model
from chronomem.ingest import IngestConfig, Ingestor
from chronomem.ingest.prompts import EndedFacts, ExtractedEntities, ExtractedFacts, RewrittenSummaries
from chronomem.ingest.summaries import bounded, is_news, mention_note, unsupported_names
from chronomem.llm.testing import FunctionModel
from chronomem.store.base import Store


class NotesModel:
    """Answers entity extraction with the notes scripted per message fragment; no facts; rewrites
    with ``rewrite`` (a function of the item) and records what each rewrite was asked."""

    def __init__(self) -> None:
        self.notes: dict[str, dict[str, str]] = {}  # fragment -> {entity name: note}
        self.rewrite = lambda item: item.summary[-120:]
        self.rewritten: list[list[str]] = []
        self.facts: dict[str, list[dict[str, str]]] = {}  # fragment -> facts (quoting the whole message)

    def __call__(self, prompt: Any, context: Any) -> Any:
        if prompt.name == "extract_entities":
            notes = next((n for fragment, n in self.notes.items() if fragment in context.episode.current), {})
            return ExtractedEntities.model_validate(
                {"entities": [{"name": name, "summary": note} for name, note in notes.items()]})
        if prompt.name == "extract_facts":
            current = context.episode.current
            facts = next((f for fragment, f in self.facts.items() if fragment in current), [])
            return ExtractedFacts.model_validate({"facts": [{**f, "quote": current} for f in facts]})
        if prompt.name == "review_endings":
            return EndedFacts()
        if prompt.name == "rewrite_summaries":
            self.rewritten.append([item.name for item in context.items])
            return RewrittenSummaries.model_validate(
                {"summaries": [{"index": i.index, "summary": self.rewrite(i)} for i in context.items]})
        raise AssertionError(f"unexpected prompt {prompt.name}")


def _message(text: str, when: str) -> Episode:
    return Episode(group_id="g", speaker="Alice", content=text, reference_time=at(when))


async def _entities(store: Store) -> dict[str, Entity]:
    return {e.name: e for e in await store.list_entities("g")}


async def test_an_entity_without_facts_gets_the_models_summary_and_a_second_episode_extends_it(store: Store) -> None:
    notes = NotesModel()
    notes.notes["adopted"] = {"Alice": "Alice adopted a cat named Tom on 2 March 2024.",
                              "Tom": "Tom is a cat Alice adopted on 2 March 2024."}
    notes.notes["vet"] = {"Alice": "Alice took Tom to the vet.", "Tom": "Tom had his first vet visit, and was healthy."}
    ingestor = Ingestor(store, HashingEmbedder(), FunctionModel(notes, model_name="scripted"))

    first = await ingestor.add_episode(_message("I adopted a cat, Tom, yesterday!", "2024-03-03"))
    assert not first.facts_created  # nothing but the note says anything about Tom
    tom = (await _entities(store))["Tom"]
    assert tom.summary == "Tom is a cat Alice adopted on 2 March 2024." and tom.summary_source == "model"

    second = await ingestor.add_episode(_message("Took Tom to the vet today, he is healthy.", "2024-03-10"))
    tom = (await _entities(store))["Tom"]
    assert tom.summary == ("Tom is a cat Alice adopted on 2 March 2024. "
                           "Tom had his first vet visit, and was healthy.")  # oldest first, nothing lost
    assert tom.summary_source == "model"
    # the summary cost no call: entity extraction and fact extraction are the episode's only calls
    for result in (first, second):
        assert result.usage.by_prompt == {"extract_entities": 1, "extract_facts": 1}
        assert result.episode.usage["summary_notes"] == {"added": 2, "skipped": 0, "skipped_with_new_fact": 0,
                                                         "facts_for_skipped": 0}


async def test_a_note_that_adds_nothing_is_skipped(store: Store) -> None:
    notes = NotesModel()
    notes.notes["Tom"] = {"Alice": "Alice has a cat named Tom.", "Tom": "Tom is Alice's cat."}
    ingestor = Ingestor(store, HashingEmbedder(), FunctionModel(notes, model_name="scripted"))
    await ingestor.add_episode(_message("My cat Tom is asleep.", "2024-03-03"))
    again = await ingestor.add_episode(_message("Tom, my cat, again.", "2024-03-04"))
    assert again.episode.usage["summary_notes"]["skipped"] == 2
    assert (await _entities(store))["Tom"].summary == "Tom is Alice's cat."


async def test_a_repeated_note_with_a_new_fact_appends_what_the_fact_says(store: Store) -> None:
    notes = NotesModel()
    notes.notes["Tom"] = {"Alice": "Alice has a cat named Tom.", "Tom": "Tom is Alice's cat."}
    notes.facts["vet"] = [{"source": "Alice", "relation_type": "TOOK", "target": "Tom",
                           "fact": "Alice took Tom to the vet on 4 March 2024"}]
    ingestor = Ingestor(store, HashingEmbedder(), FunctionModel(notes, model_name="scripted"))
    await ingestor.add_episode(_message("My cat Tom is asleep.", "2024-03-03"))
    again = await ingestor.add_episode(_message("Tom, my cat, went to the vet.", "2024-03-04"))
    assert again.episode.usage["summary_notes"]["skipped_with_new_fact"] == 2
    tom = (await _entities(store))["Tom"]
    assert tom.summary == "Tom is Alice's cat. Alice took Tom to the vet on 4 March 2024."
    assert tom.summary_source == "graph"  # part of it is now the graph's own sentence


async def test_a_note_naming_what_no_message_says_falls_back_to_the_message_and_says_so(store: Store) -> None:
    notes = NotesModel()
    notes.notes["Tom"] = {"Alice": "Alice has a cat.", "Tom": "Tom is a cat Alice brought back from Paris."}
    ingestor = Ingestor(store, HashingEmbedder(), FunctionModel(notes, model_name="scripted"))
    result = await ingestor.add_episode(_message("My cat Tom is asleep. It rains.", "2024-03-03"))
    tom = (await _entities(store))["Tom"]
    assert "Paris" not in tom.summary
    assert tom.summary == "Alice said: My cat Tom is asleep." and tom.summary_source == "graph"
    assert any("Paris" in w for w in result.warnings)


async def test_an_entity_the_model_wrote_no_note_for_gets_its_sentence_not_an_empty_summary(store: Store) -> None:
    notes = NotesModel()
    notes.notes["Tom"] = {"Alice": "Alice has a cat.", "Tom": ""}
    ingestor = Ingestor(store, HashingEmbedder(), FunctionModel(notes, model_name="scripted"))
    await ingestor.add_episode(_message("Good morning! My cat Tom is asleep.", "2024-03-03"))
    found = await _entities(store)
    assert found["Tom"].summary == "Alice said: My cat Tom is asleep." and found["Tom"].summary_source == "graph"
    assert found["Alice"].summary == "Alice has a cat." and found["Alice"].summary_source == "model"


async def test_without_entity_notes_the_call_asks_for_none_and_summaries_are_the_messages_sentences(
    store: Store,
) -> None:
    notes = NotesModel()
    notes.notes["Tom"] = {"Alice": "", "Tom": ""}
    asked = []
    model = FunctionModel(lambda prompt, context: (asked.append(prompt.build(context)), notes(prompt, context))[1],
                          model_name="scripted")
    ingestor = Ingestor(store, HashingEmbedder(), model, config=IngestConfig(entity_notes=False))
    await ingestor.add_episode(_message("Good morning! My cat Tom is asleep.", "2024-03-03"))
    entity_prompt = next(str(messages[0].content) for messages in asked if "entity nodes" in str(messages[0].content))
    assert "summary" not in entity_prompt  # nothing asked that the answer would spend tokens on
    tom = (await _entities(store))["Tom"]
    assert tom.summary == "Alice said: My cat Tom is asleep." and tom.summary_source == "graph"


async def test_a_long_summary_is_rewritten_once_in_one_batched_call_and_stays_bounded(store: Store) -> None:
    notes = NotesModel()
    for day in range(1, 6):
        notes.notes[f"day {day}"] = {"Alice": f"Alice wrote diary entry {day} about her garden and her roses.",
                                     "Tom": f"Tom slept on the sofa for the whole of day {day} in the garden."}
    notes.rewrite = lambda item: f"{item.name} keeps a garden diary."
    config = IngestConfig(summary_max_chars=150, summary_target_chars=60)
    ingestor = Ingestor(store, HashingEmbedder(), FunctionModel(notes, model_name="scripted"), config=config)
    calls = []
    for day in range(1, 6):
        result = await ingestor.add_episode(_message(f"Tom and I, day {day}.", f"2024-03-0{day}"))
        calls.append(result.usage.calls)
    assert max(calls) == 3 and calls.count(3) == len(notes.rewritten)  # the rewrite is the only extra call
    assert all(set(batch) == {"Alice", "Tom"} for batch in notes.rewritten)  # both summaries, one call
    found = await _entities(store)
    assert all(len(e.summary) <= 150 and e.summary for e in found.values())
    assert found["Tom"].summary.startswith("Tom keeps a garden diary.") and found["Tom"].summary_source == "model"


async def test_a_rewrite_that_invents_a_name_is_dropped_and_the_summary_kept_within_bound(store: Store) -> None:
    notes = NotesModel()
    for day in range(1, 4):
        notes.notes[f"day {day}"] = {"Alice": "Alice went out.",
                                     "Tom": f"Tom slept on the sofa for the whole of day {day} in the garden."}
    notes.rewrite = lambda item: f"{item.name} moved to Berlin."
    config = IngestConfig(summary_max_chars=100, summary_target_chars=60)
    ingestor = Ingestor(store, HashingEmbedder(), FunctionModel(notes, model_name="scripted"), config=config)
    results = [await ingestor.add_episode(_message(f"Tom and I, day {d}.", f"2024-03-0{d}")) for d in range(1, 4)]
    tom = (await _entities(store))["Tom"]
    assert notes.rewritten and "Berlin" not in tom.summary and 0 < len(tom.summary) <= 100
    assert any("Berlin" in w for r in results for w in r.warnings)


async def test_without_a_model_summaries_are_the_graphs_text_and_say_so(store: Store) -> None:
    ingestor = Ingestor(store, HashingEmbedder(), None)
    await ingestor.add_fact("g", "Alice", "WORKS_FOR", "Acme", "Alice works at Acme")
    alice = (await _entities(store))["Alice"]
    assert alice.summary == "Alice works at Acme." and alice.summary_source == "graph"


async def test_the_heuristic_stand_in_writes_mention_sentences_labelled_as_the_graphs(store: Store) -> None:
    ingestor = Ingestor(store, HashingEmbedder(), heuristic_model())
    await ingestor.add_episode(_message("I went to the Louvre with Bob. It was great.", "2024-03-03"))
    found = await _entities(store)
    assert found["Bob"].summary == "Alice said: I went to the Louvre with Bob."
    assert {e.summary_source for e in found.values()} == {"graph"}


async def test_a_hand_edited_summary_says_so(store: Store) -> None:
    from chronomem.memory import Chronomem

    memory = Chronomem(store=store, embedder=HashingEmbedder(), llm=None, owns_store=False)
    fact = await memory.add_fact("g", "Alice", "WORKS_FOR", "Acme", "Alice works at Acme")
    edited = await memory.update_entity("g", fact.source_id, summary="Alice, Acme's CTO since 2020.")
    assert edited.summary_source == "edit" and (await _entities(store))["Alice"].summary_source == "edit"


# -- the pure rules ----------------------------------------------------------------------------------------


def test_news_is_a_word_the_summary_lacks_negations_and_numbers_included() -> None:
    assert not is_news("Tom is Alice's cat.", "Tom is the cat of Alice.")
    assert is_news("Tom likes fish.", "Tom does not like fish.")
    assert is_news("Tom turned 2.", "Tom turned 3.")


def test_unsupported_names_are_capitalized_words_no_source_has() -> None:
    sources = ["Alice: I adopted Tom yesterday."]
    assert unsupported_names("Alice adopted Tom on 2 March 2024.", sources) == []
    assert unsupported_names("Alice adopted Tom in Paris with Bob.", sources) == ["Paris", "Bob"]
    assert unsupported_names("Adopted a cat named Tom.", sources) == []  # a sentence's first word is not judged


def test_a_mention_note_is_the_first_sentence_naming_the_entity() -> None:
    text = "Alice: Hi Bob! I met Carol at the gym. Carol runs."
    assert mention_note(text, "Carol", speaker="Alice") == "Alice said: I met Carol at the gym."
    # "Hi Bob!" says little about the speaker: the first sentence of some substance does
    assert mention_note(text, "Alice", speaker="Alice") == "Alice said: I met Carol at the gym."
    assert mention_note(text, "Dave", speaker="Alice") == ""


def test_bounded_cuts_at_a_sentence_end() -> None:
    assert bounded("One two three. Four five six seven.", 20) == "One two three."
    assert len(bounded("word " * 100, 50)) <= 51


async def test_an_entity_whose_every_fact_closed_keeps_them_as_dated_history(store: Store) -> None:
    """Without a model, a single-valued relation closes Alice's old employer's only fact: Acme's
    summary says what the graph still knows of it, dated, not nothing; Globex's is current."""
    from chronomem.ingest import Ontology

    ingestor = Ingestor(store, HashingEmbedder(), None, ontology=Ontology(single_valued=["WORKS_FOR"]))
    await ingestor.add_fact("g", "Alice", "WORKS_FOR", "Acme", "Alice works at Acme", valid_at=at("2020-01-01"))
    await ingestor.add_fact("g", "Alice", "WORKS_FOR", "Globex", "Alice works at Globex", valid_at=at("2024-06-01"))
    found = await _entities(store)
    assert found["Acme"].summary == "Until 2024-06-01: Alice works at Acme."
    assert found["Acme"].summary_source == "graph"
    assert found["Globex"].summary == "Alice works at Globex."
    assert found["Alice"].summary == "Alice works at Globex."  # a current sentence left: no history added
