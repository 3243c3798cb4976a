"""A relation stated in apposition is a fact of its own (chronomem.ingest.apposition, stages/facts.py).

"Daniel Okafor's daughter Amara just started at Lakeside Primary" is two facts with different
lives: ending her time at the school must not end her being his daughter.
"""

from __future__ import annotations

from typing import Any

import pytest
from ingest_doubles import Script, at

from chronomem.domain import Episode
from chronomem.embed.testing import HashingEmbedder
from chronomem.ingest import Ingestor
from chronomem.ingest.apposition import apposition, holder_named
from chronomem.llm.testing import FunctionModel
from chronomem.store.base import Store

PEOPLE = {"daniel": ["Daniel Okafor"], "amara": ["Amara"], "school": ["Lakeside Primary"],
          "samuel": ["Samuel Owusu"], "anna": ["Anna Kowalski"], "clinic": ["MoveWell Clinic"],
          "hana": ["Hana Sato"], "keller": ["Dr. Keller"], "heliox": ["Heliox Energy"], "victor": ["Victor Lang"],
          "marco": ["Marco Bianchi"], "giulia": ["Giulia Bianchi"], "paolo": ["Paolo"], "ayesha": ["Ayesha Khan"],
          "zara": ["Zara"], "lauren": ["Lauren Hayes"], "mike": ["Mike"]}


@pytest.mark.parametrize(("fact", "owner", "holder", "relation", "statement"), [
    ("Daniel Okafor's daughter Amara just started at Lakeside Primary.", "daniel", "amara",
     "Amara is Daniel Okafor's daughter.", "Amara just started at Lakeside Primary."),
    ("Samuel Owusu's physiotherapist, Anna Kowalski, is treating his ACL at MoveWell Clinic.", "samuel", "anna",
     "Anna Kowalski is Samuel Owusu's physiotherapist.", "Anna Kowalski is treating his ACL at MoveWell Clinic."),
    ("Marco Bianchi's sister Giulia teaches math in Turin.", "marco", "giulia",  # a first name names her
     "Giulia is Marco Bianchi's sister.", "Giulia teaches math in Turin."),
    ("Heliox Energy's CEO Victor Lang opened the plant.", "heliox", "victor",
     "Victor Lang is Heliox Energy's CEO.", "Victor Lang opened the plant."),
    ("Zara, Ayesha Khan's niece, goes to Park View School.", "ayesha", "zara",  # the holder first
     "Zara is Ayesha Khan's niece.", "Zara goes to Park View School."),
    ("Lauren Hayes' husband Mike got a job at Summit Bank.", "lauren", "mike",  # a name ending in s
     "Mike is Lauren Hayes's husband.", "Mike got a job at Summit Bank."),
])
def test_a_fact_opening_with_an_apposition_splits_into_the_relation_and_the_statement(
    fact: str, owner: str, holder: str, relation: str, statement: str
) -> None:
    split = apposition(fact, PEOPLE)
    assert split is not None
    assert (split.owner, split.holder, split.relation, split.statement) == (owner, holder, relation, statement)


@pytest.mark.parametrize("fact", [
    "Hana Sato's dentist appointment with Dr. Keller is this Thursday.",  # a preposition: no apposition
    "Heliox Energy's board appointed Victor Lang as CEO.",  # a verb
    "Marco Bianchi's sister Giulia and her husband Paolo moved to Milan.",  # the apposition goes on
    "Samuel Owusu's physiotherapist, Anna Kowalski is treating him.",  # an apposition never closed
    "Daniel Okafor's daughter Zoe plays chess.",  # Zoe is no entity
    "Amara started at Lakeside Primary.",  # no possessive
    "Daniel Okafor's daughter is Amara.",  # the relation alone
    "Zara, Ayesha Khan's niece, and Paolo moved.",  # the apposition goes on
    "Zara, Ayesha Khan's niece.",  # says nothing more
])
def test_other_sentences_are_no_apposition(fact: str) -> None:
    assert apposition(fact, PEOPLE) is None


def test_the_holder_an_apposition_names_is_read_whether_or_not_it_is_an_entity() -> None:
    assert holder_named("Lauren Hayes' husband Mike got a job at Summit Bank.") == "Mike"
    assert holder_named("Daniel Okafor's daughter Zoe Okafor, 7, plays chess.") == "Zoe Okafor"
    assert holder_named("Heliox Energy's board appointed Victor Lang as CEO.") is None
    assert holder_named("Mike got a job at Summit Bank.") is None


def fact(source: str, relation: str, target: str, text: str, **more: Any) -> dict[str, Any]:
    return {"source": source, "relation_type": relation, "target": target, "fact": text, **more}


async def test_leaving_the_school_ends_the_statement_and_not_the_relation(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script
) -> None:
    said = "My daughter Amara started at Lakeside Primary on September 4."
    script.episodes["daughter"] = (["Daniel Okafor", "Amara", "Lakeside Primary"], [
        fact("Daniel Okafor", "PARENT_OF", "Amara",
             "Daniel Okafor's daughter Amara started at Lakeside Primary on September 4.",
             quote=said, valid_at="2023-09-04T00:00:00Z"),
    ])
    ingestor = Ingestor(store, embedder, model)
    first = await ingestor.add_episode(
        Episode(group_id="g", speaker="Daniel Okafor", content=said, reference_time=at("2023-09-10")))

    facts = {f.fact: f for f in first.facts_created}
    assert set(facts) == {"Amara is Daniel Okafor's daughter.", "Amara started at Lakeside Primary on September 4."}
    relation, statement = facts["Amara is Daniel Okafor's daughter."], facts[
        "Amara started at Lakeside Primary on September 4."]
    entities = {e.name: e.id for e in await store.list_entities("g")}
    assert (relation.source_id, relation.target_id, relation.relation_type) == (
        entities["Amara"], entities["Daniel Okafor"], "DAUGHTER_OF")
    assert relation.valid_at is None  # the date is the statement's, not the relation's
    assert {statement.source_id, statement.target_id} == {entities["Amara"], entities["Lakeside Primary"]}
    assert statement.valid_at == at("2023-09-04")
    (span,) = relation.evidence
    assert first.episode.text[span.start:span.end] == "My daughter Amara"

    script.episodes["moved schools"] = (["Amara", "Lakeside Primary"], [])
    script.endings = lambda ctx: [{"number": c.index, "quote": "Amara left Lakeside Primary"}
                                  for c in ctx.known if "Lakeside" in c.fact]
    later = await ingestor.add_episode(Episode(
        group_id="g", speaker="Daniel Okafor", content="Amara left Lakeside Primary when we moved schools.",
        reference_time=at("2024-06-30")))
    assert [f.fact for f in later.facts_invalidated] == ["Amara started at Lakeside Primary on September 4."]
    current = {f.fact for f in await store.list_facts("g") if f.invalid_at is None}
    assert "Amara is Daniel Okafor's daughter." in current
