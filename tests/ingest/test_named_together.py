"""The fact call's checklist: which entities each sentence of a message names together."""

from __future__ import annotations

from typing import Any

from chronomem.ingest.pairs import NamedTogether, named_together


def _pairs(text: str, names: list[list[str]], speaker: str | None = None, limit: int = 20) -> list[tuple[str, str]]:
    return [(p.first, p.second) for p in named_together(text, names, speaker, limit=limit)]


def test_a_sentence_names_every_pair_of_its_entities_the_speaker_standing_for_i() -> None:
    text = "I'm a backend engineer on the Payments team at Brightline Software. I report to Marcus Hill."
    names = [["Chen Wei"], ["Payments team", "Payments"], ["Brightline Software"], ["Marcus Hill", "Marcus"]]
    assert _pairs(text, names, "Chen Wei") == [
        ("Chen Wei", "Payments team"), ("Chen Wei", "Brightline Software"), ("Payments team", "Brightline Software"),
        ("Chen Wei", "Marcus Hill"),
    ]


def test_a_pronoun_refers_back_to_the_first_entity_of_the_sentence_before() -> None:
    text = "My brother Sam moved to Denver. He quit Brightway on Friday."
    pairs = _pairs(text, [["Lena"], ["Sam"], ["Denver"], ["Brightway"]], "Lena")
    assert ("Brightway", "Sam") in pairs
    assert ("Brightway", "Denver") not in pairs and ("Lena", "Brightway") not in pairs


def test_clauses_a_semicolon_joins_are_sentences_and_aliases_name_their_entity() -> None:
    text = "My new lead is Aisha Bello; Marcus stays with Payments."
    names = [["Chen Wei"], ["Aisha Bello"], ["Marcus Hill", "Marcus"], ["Payments team", "Payments"]]
    assert _pairs(text, names, "Chen Wei") == [("Chen Wei", "Aisha Bello"), ("Marcus Hill", "Payments team")]


def test_without_a_speaker_first_person_names_no_one_and_the_list_is_bounded() -> None:
    text = "I met Ann, Bob, Cy and Di at Acme."
    names = [["Ann"], ["Bob"], ["Cy"], ["Di"], ["Acme"]]
    assert len(_pairs(text, names)) == 10
    assert _pairs(text, names, limit=3) == [("Ann", "Bob"), ("Ann", "Cy"), ("Ann", "Di")]
    assert named_together(text, names, limit=1) == [NamedTogether("Ann", "Bob", 1)]


async def test_the_fact_call_is_shown_the_pairs_of_the_message_and_renders_them_after_the_entities(store, embedder):
    from ingest_doubles import Script

    from chronomem.domain import Episode
    from chronomem.ingest import Ingestor
    from chronomem.ingest.prompts import FACT_EXTRACTION
    from chronomem.llm.testing import FunctionModel

    script = Script()
    script.episodes["Sam"] = (["Lena", "Sam", "Denver", "Brightway"], [
        {"source": "Sam", "relation_type": "LIVES_IN", "target": "Denver", "fact": "Sam moved to Denver"},
    ])
    seen: list[Any] = []

    def answer(prompt: Any, context: Any) -> Any:
        if prompt.name == "extract_facts":
            seen.append(context)
        return script(prompt, context)

    ingestor = Ingestor(store, embedder, FunctionModel(answer))
    await ingestor.add_episode(Episode(group_id="g", speaker="Lena", content="My brother Sam moved to Denver. "
                                       "He quit Brightway on Friday."))
    (context,) = seen
    assert context.pairs == (("Lena", "Sam"), ("Lena", "Denver"), ("Sam", "Denver"), ("Brightway", "Sam"))
    data = FACT_EXTRACTION.build(context)[-1].content
    assert data.index("<ENTITIES>") < data.index("<NAMED TOGETHER>\n- Lena + Sam\n- Lena + Denver")
