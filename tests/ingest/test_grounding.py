"""Grounded extraction and junk facts: what the model extracts must be in the episode (issue 13, items 7-8)."""

from __future__ import annotations

from typing import Any

import pytest
from ingest_doubles import Script, at

from chronomem.domain import Episode
from chronomem.embed.testing import HashingEmbedder
from chronomem.ingest import IngestConfig, Ingestor
from chronomem.ingest.grounding import (
    ONLY_AN_IDENTITY,
    is_named,
    junk_reason,
    locate_quote,
    named_entities,
    sentence_around,
    sentences,
    stating_sentence,
)
from chronomem.llm.testing import FunctionModel


def message(text: str, when: str = "2024-05-15", speaker: str = "Alice", **extra: object) -> Episode:
    return Episode(group_id="g", speaker=speaker, content=text, reference_time=at(when), **extra)


def fact(source: str, target: str, text: str, quote: str | None, relation: str = "RELATES_TO") -> dict[str, Any]:
    return {"source": source, "relation_type": relation, "target": target, "fact": text, "quote": quote}


# -- the pure checks -----------------------------------------------------------------------------------


def test_a_quote_is_found_whatever_its_case_and_spacing_and_maps_back_to_the_original_offsets():
    text = "Alice: I  joined\nGlobex two weeks ago, as a designer."
    start, end = locate_quote("i joined globex two weeks ago", text)  # type: ignore[misc]
    assert text[start:end] == "I  joined\nGlobex two weeks ago"


def test_a_quote_with_a_small_slip_is_found_but_an_invented_one_is_not():
    text = "Alice: I joined Globex two weeks ago, as a designer."
    span = locate_quote("I joined Globex two weeks ago as a designer", text)  # the comma dropped
    assert span is not None and "joined Globex two weeks ago, as a designer" in text[span[0]:span[1]]
    assert locate_quote("I quit Initech last year", text) is None
    assert locate_quote("Alice", "Bob: hi") is None and locate_quote("", text) is None


def test_what_a_reader_does_not_see_in_a_pasted_message_does_not_break_a_quote_or_a_name():
    # a soft hyphen and a zero-width space (web copy), a trademark sign, a letter with a stroke
    text = "Alice: We moved the Data\u200bdog dash\u00adboards to the Coca-Cola\u00ae account in \u0141\u00f3d\u017a."
    start, end = locate_quote("We moved the Datadog dashboards to the Coca-Cola account", text)  # type: ignore[misc]
    assert text[start:end] == "We moved the Data\u200bdog dash\u00adboards to the Coca-Cola\u00ae account"
    assert is_named("Datadog", [text]) and is_named("Lodz", [text]) and is_named("Coca-Cola", [text])
    assert locate_quote("I'm in", "Bob: I\u2019m in \u2014 see you there") == (5, 11)  # a typographic apostrophe


def test_an_entity_must_be_named_in_the_messages():
    messages = ["Alice: My sister Zoë moved to São Paulo.", "Bob: nice"]
    assert is_named("Zoe", messages) and is_named("sao paulo", messages) and is_named("Bob", messages)
    assert is_named("Alice", messages)  # the speaker is in the "speaker: text" line
    assert not is_named("Rio de Janeiro", messages) and not is_named("Zoë Smith", messages)


def test_a_name_the_model_wrote_as_the_same_name_is_named():
    # what name_key makes one name: an article, a space between letters and digits, St. and Street
    for name, text in (("The Beatles", "Bob: I love beatles"), ("UA 1234", "Bob: my flight UA1234 is late"),
                       ("iPhone 15", "Bob: got an iPhone15"), ("Baker Street", "Bob: we met on Baker St."),
                       ("Saint Louis", "St. Louis was hot"), ("USA", "Bob: back in the U.S.A.")):
        assert is_named(name, [text]), name
    for name, text in (("Windows 10", "Bob: Windows 11 is out"), ("CocaCola", "Bob: a Coca-Cola"),
                       ("Jane Smith", "Bob: Jane called")):
        assert not is_named(name, [text]), name


def test_junk_fact_texts_are_recognised():
    assert junk_reason("'}, {'", ["Alice", "Globex"]) == "has no letters"
    assert junk_reason("...", ["Alice", "Globex"]) == "has no letters"
    assert junk_reason("2024-05-01", ["Alice", "Globex"]) == "has no letters"
    assert junk_reason("works somewhere", ["Alice", "Globex"]) == "names none of its entities"
    for only_names in ("Alice", "Alice, Globex", "Alice -> Globex", '"Alice", "Globex"', "Alice {} Globex",
                       "source: Alice, target: Globex", "Alice RELATES_TO Globex", "ALICE GLOBEX."):
        assert junk_reason(only_names, ["Alice", "Globex"]) == "says nothing but its entities' names", only_names
    assert junk_reason("Alice is Globex.", ["Alice", "Globex"]) == ONLY_AN_IDENTITY
    assert junk_reason("Assistant is Chen Wei's assistant.", ["Assistant", "Chen Wei"]) == ONLY_AN_IDENTITY
    statements = ("Alice works at Globex", "Alice is Globex's CTO", "Alice left Globex in 2023",
                  "Alice & Globex merged", "Alice is at Globex", "Alice was in Globex")
    for statement in statements:
        assert junk_reason(statement, ["Alice", "Globex"]) is None, statement
    assert junk_reason("Alice works at Globex", ["Alice", "Globex"]) is None
    assert junk_reason("Alice's manager is nice", ["Alice", "Bob"]) is None


# -- through the pipeline ------------------------------------------------------------------------------


async def test_a_hallucinated_entity_and_fact_are_rejected_and_counted_with_no_extra_call(store, embedder):
    script = Script()
    script.episodes["joined Globex"] = (
        ["Alice", "Globex", "Initech"],  # Initech is named nowhere
        [fact("Alice", "Globex", "Alice works at Globex", "I joined Globex", "WORKS_FOR"),
         fact("Alice", "Globex", "Alice founded Globex", "I founded Globex in 2010")],  # quote not in the episode
    )
    model = FunctionModel(script)
    result = await Ingestor(store, embedder, model).add_episode(message("I joined Globex two weeks ago."))
    assert sorted(e.name for e in await store.list_entities("g")) == ["Alice", "Globex"]
    assert [f.fact for f in await store.list_facts("g")] == ["Alice works at Globex"]
    assert (result.entities_rejected, result.facts_rejected) == (1, 1)
    assert result.episode.usage["entities_rejected"] == 1 and result.episode.usage["facts_rejected"] == 1
    assert model.prompt_names == ["extract_entities", "extract_facts"]
    assert any("Initech" in w for w in result.warnings) and any("founded" in w for w in result.warnings)


async def test_a_date_extracted_as_an_entity_is_rejected_and_its_fact_with_it(store, embedder):
    # the prompt says no nodes for dates; the 1.5B made "March 18, 2024" one and hung facts on it
    script = Script()
    script.episodes["appointed"] = (
        ["Auralis Energy", "Katja Virtanen", "March 18, 2024", "Summer"],
        [fact("Auralis Energy", "Katja Virtanen", "Auralis Energy appointed Katja Virtanen.",
              "Auralis Energy appointed Katja Virtanen"),
         fact("Auralis Energy", "March 18, 2024", "Auralis Energy made an appointment on March 18, 2024.",
              "March 18, 2024")],
    )
    episode = Episode(group_id="g", kind="text", content="March 18, 2024. Auralis Energy appointed Katja "
                      "Virtanen, who met Summer at the gala.", reference_time=at("2024-03-18"))
    result = await Ingestor(store, embedder, FunctionModel(script)).add_episode(episode)
    assert sorted(e.name for e in await store.list_entities("g")) == ["Auralis Energy", "Katja Virtanen", "Summer"]
    assert [f.fact for f in await store.list_facts("g")] == ["Auralis Energy appointed Katja Virtanen."]
    assert any("'March 18, 2024' is a date" in w for w in result.warnings)


async def test_the_quote_is_stored_as_the_facts_evidence_span(store, embedder):
    script = Script()
    script.episodes["joined Globex"] = (["Alice", "Globex"],
                                        [fact("Alice", "Globex", "Alice works at Globex", "i joined globex")])
    episode = message("Yesterday I joined Globex, finally.")
    await Ingestor(store, embedder, FunctionModel(script)).add_episode(episode)
    (stored,) = await store.list_facts("g")
    (span,) = stored.evidence
    assert span.episode_id == episode.id and episode.text[span.start:span.end] == "I joined Globex"


async def test_a_restatement_adds_its_quote_to_the_evidence(store, embedder):
    script = Script()
    works = fact("Alice", "Globex", "Alice works at Globex", None, "WORKS_AT")
    script.episodes["at Globex now"] = (["Alice", "Globex"], [{**works, "quote": "I am at Globex now"}])
    script.episodes["still at Globex"] = (["Alice", "Globex"], [{**works, "quote": "still at Globex"}])
    ingestor = Ingestor(store, embedder, FunctionModel(script))
    first, second = message("I am at Globex now."), message("Yes, still at Globex.", "2024-05-16")
    await ingestor.add_episode(first)
    await ingestor.add_episode(second)
    (stored,) = await store.list_facts("g")
    assert [s.episode_id for s in stored.evidence] == [first.id, second.id]


async def test_an_undated_fact_is_dated_by_its_quote(store, embedder):
    script = Script()
    script.episodes["next Monday"] = (["Alice", "Globex"], [fact("Alice", "Globex", "Alice starts at Globex",
                                                                 "I start at Globex next Monday", "STARTS_AT")])
    await Ingestor(store, embedder, FunctionModel(script)).add_episode(message("I start at Globex next Monday!"))
    (stored,) = await store.list_facts("g")
    assert stored.valid_at == at("2024-05-20")  # 2024-05-15 is a Wednesday


ONLY_JUNK = [fact("Alice", "Globex", "'}, {'", "I joined Globex")]
JUNK_AND_GOOD = [*ONLY_JUNK, fact("Alice", "Globex", "Alice works at Globex", "I joined Globex")]


class JunkOnce:
    """Answers fact extraction with ``first``, then (after the correction) with ``second``."""

    def __init__(self, second: list[dict[str, Any]], first: list[dict[str, Any]] = ONLY_JUNK) -> None:
        self.first, self.second, self.corrections = first, second, []  # type: ignore[var-annotated]
        self.asked = 0

    def __call__(self, prompt: Any, context: Any) -> Any:
        entities = [{"name": "Alice"}, {"name": "Globex"}]
        if prompt.name == "extract_entities":
            return {"entities": entities}
        self.asked += 1
        if self.asked > 1:
            self.corrections.append(context.instructions)
        facts = self.first if self.asked == 1 else self.second
        return {"facts": facts} if prompt.name == "extract_facts" else {"entities": entities, "facts": facts}


async def test_an_answer_of_junk_gets_one_corrective_retry_and_a_corrected_answer_is_kept(store, embedder):
    answers = JunkOnce([fact("Alice", "Globex", "Alice joined Globex", "I joined Globex")])
    model = FunctionModel(answers)
    result = await Ingestor(store, embedder, model).add_episode(message("I joined Globex."))
    assert model.prompt_names == ["extract_entities", "extract_facts", "extract_facts"]
    assert "'}, {'" in answers.corrections[0]
    assert [f.fact for f in await store.list_facts("g")] == ["Alice joined Globex"] and result.facts_rejected == 0


async def test_a_junk_fact_beside_good_ones_is_dropped_and_counted_without_a_retry(store, embedder):
    # a retry would cost a call, and a small model's second answer may lose the good facts
    model = FunctionModel(JunkOnce([], first=JUNK_AND_GOOD))
    result = await Ingestor(store, embedder, model).add_episode(message("I joined Globex."))
    assert model.prompt_names == ["extract_entities", "extract_facts"]
    assert [f.fact for f in await store.list_facts("g")] == ["Alice works at Globex"] and result.facts_rejected == 1


async def test_junk_still_there_after_the_retry_is_dropped_and_counted(store, embedder):
    model = FunctionModel(JunkOnce(JUNK_AND_GOOD))
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(extraction="combined"))
    result = await ingestor.add_episode(message("I joined Globex."))
    assert model.prompt_names == ["extract_graph", "extract_graph"]  # one retry, never a second
    assert [f.fact for f in await store.list_facts("g")] == ["Alice works at Globex"]
    assert result.facts_rejected == 1 and result.episode.status.value == "done"


async def test_a_statement_of_identity_alone_is_dropped_without_a_retry(store, embedder):
    script = Script()
    script.episodes["keep that in mind"] = (["Assistant", "Chen Wei"], [
        fact("Assistant", "Chen Wei", "Assistant is Chen Wei's assistant.", None)])
    model = FunctionModel(script)
    result = await Ingestor(store, embedder, model).add_episode(
        message("Thanks, Chen Wei. I'll keep that in mind.", speaker="Assistant"))
    assert await store.list_facts("g") == [] and result.facts_rejected == 1
    assert model.prompt_names == ["extract_entities", "extract_facts"]


def test_the_evidence_is_shown_by_the_context_block_on_request_and_returned_by_the_api():
    from chronomem.domain import EvidenceSpan, Fact
    from chronomem.mcp_server import _fact
    from chronomem.search.context import build_context, evidence_quotes
    from chronomem.service.schemas import FactOut

    episode = message("I joined Globex.")
    stated = Fact(group_id="g", source_id="a", target_id="b", fact="Alice works at Globex",
                  evidence=(EvidenceSpan(episode_id=episode.id, start=7, end=22),))
    quotes = evidence_quotes([stated], [episode])
    assert quotes == {stated.id: "I joined Globex"}
    assert '[source: "I joined Globex"]' in build_context([stated], [], quotes=quotes)
    assert "source:" not in build_context([stated], [])
    assert FactOut.from_domain(stated).model_dump()["evidence"] == [{"episode_uuid": episode.id, "start": 7, "end": 22}]
    assert _fact(stated)["evidence"] == [{"episode_uuid": episode.id, "start": 7, "end": 22}]


async def test_the_facades_context_quotes_the_episode_that_states_each_fact(tmp_path):
    from chronomem import Chronomem, Settings

    script = Script()
    script.episodes["joined Globex"] = (["Alice", "Globex"],
                                        [fact("Alice", "Globex", "Alice works at Globex", "I joined Globex")])
    settings = Settings(data_dir=tmp_path)
    async with await Chronomem.open(settings, embedder=HashingEmbedder(), llm=FunctionModel(script)) as memory:
        await memory.add_episode("g", "Last week I joined Globex as a designer.", speaker="Alice",
                                 reference_time=at("2024-05-15"))
        plain = await memory.context("g", "Where does Alice work?")
        quoted = await memory.context("g", "Where does Alice work?", include_evidence=True)
    assert "Alice works at Globex" in plain and "source:" not in plain
    assert '- Alice works at Globex' in quoted and '[source: "I joined Globex"]' in quoted


@pytest.mark.parametrize(("fact", "names", "stated"), [
    ("Bolt is Maya Patel's adopted dog.", ["Maya Patel", "Bolt"], True),  # the model's own words
    ("Maya Patel owns a dog named Bolt.", ["Maya Patel", "Bolt"], True),
    ("Ana lives in Lisbon.", ["Ana", "Lisbon"], True),
    ("Ana is Maya Patel's sister.", ["Ana", "Maya Patel"], True),
    ("Ana hates Lisbon.", ["Ana", "Lisbon"], False),  # named entities, an invented statement
    ("Bolt bit Ana.", ["Ana", "Bolt"], False),  # no sentence names both
    ("Maya Patel, Bolt", ["Maya Patel", "Bolt"], False),  # says nothing but names
])
def test_a_paraphrase_is_grounded_by_the_sentence_that_names_its_entities_and_says_it(fact, names, stated):
    text = "Maya Patel: I adopted a dog named Bolt. My sister Ana lives in Lisbon."
    span = stating_sentence(fact, names, text, "Maya Patel")
    assert (span is not None) == stated
    if span is not None:
        assert text[span[0]:span[1]] in ("Maya Patel: I adopted a dog named Bolt.", "My sister Ana lives in Lisbon.")


def test_a_full_stop_after_a_title_or_an_initial_ends_no_sentence():
    said = "The metformin was upsetting my stomach, so Dr. Okafor switched me to Jardiance. I left St. Agnes."
    assert sentences(said) == ["The metformin was upsetting my stomach, so Dr. Okafor switched me to Jardiance.",
                               "I left St. Agnes."]
    assert sentence_around(said, 4, 13) == sentences(said)[0]
    assert sentences("J. Smith and Mrs. Hill met. Then they left!") == [
        "J. Smith and Mrs. Hill met.", "Then they left!"]
    assert sentences("Oh. I see. No. We left.") == ["Oh.", "I see.", "No.", "We left."]  # short words end them
    # a quote with its full stop is its sentence alone: the next one's "any more" had read as an end
    said = "I'm in awe of your courage. Have you made any more art lately?"
    assert sentence_around(said, 0, said.index(".") + 1) == "I'm in awe of your courage."


@pytest.mark.parametrize(("fact", "names", "stated"), [
    ("Ana had a baby named Inês.", ["Ana", "Inês"], True),  # "They" names Ana, whom the sentence before named
    ("Rui had a baby named Inês.", ["Rui", "Inês"], True),
    ("Ana had a baby named Inês.", ["Ana", "Inês"], False),  # no pronoun: nothing refers back
    ("Ana adopted a cat named Inês.", ["Ana", "Inês"], False),  # what it says, the sentence does not
])
def test_a_sentence_with_a_pronoun_names_what_the_sentence_before_named(fact, names, stated):
    text = "My sister Ana lives in Lisbon with Rui. They just had a baby, a girl named Inês."
    if not stated and "adopted" not in fact:
        text = text.replace("They", "We")
    assert (stating_sentence(fact, names, text, "Lucas") is not None) == stated


async def test_a_fact_hung_on_the_wrong_pair_goes_to_the_entity_its_sentence_names(store, embedder):
    script = Script()
    script.episodes["adopted"] = (["Maya", "Ana", "Bolt"], [
        fact("Maya", "Ana", "Maya adopted a dog named Bolt", "I adopted a dog named Bolt")])
    await Ingestor(store, embedder, FunctionModel(script)).add_episode(
        Episode(group_id="g", speaker="Maya", content="Ana says hi. I adopted a dog named Bolt.",
                reference_time=at("2024-05-15")))
    names = {e.id: e.name for e in await store.list_entities("g")}
    (stored,) = await store.list_facts("g")
    assert (names[stored.source_id], names[stored.target_id]) == ("Maya", "Bolt")


async def test_a_fact_of_two_joint_subjects_is_of_the_first_and_the_entity_the_predicate_names(store, embedder):
    script = Script()
    script.episodes["moved"] = (["Ayesha", "Imran", "Sofia", "Bristol"], [
        fact("Imran", "Sofia", "Imran and Sofia moved to Bristol in August.", "Imran and Sofia moved to Bristol")])
    await Ingestor(store, embedder, FunctionModel(script)).add_episode(
        message("Imran and Sofia moved to Bristol in August.", speaker="Ayesha"))
    names = {e.id: e.name for e in await store.list_entities("g")}
    facts = {f.fact: f for f in await store.list_facts("g")}
    stored = facts["Imran and Sofia moved to Bristol in August."]
    assert (names[stored.source_id], names[stored.target_id]) == ("Imran", "Bristol")
    assert [names[i] for i in stored.other_entity_ids] == ["Sofia"]
    # and the move, a home of each, is Sofia's own fact too (endings.new_values_said)
    assert set(facts) == {"Imran and Sofia moved to Bristol in August.", "Sofia moved to Bristol."}


async def test_a_fact_of_two_joint_subjects_naming_several_places_is_of_the_one_they_go_to(store, embedder):
    moved = "Ana and Rui moved from Lisbon to Porto last month for Rui's new job at Marés Logistics."
    script = Script()
    script.episodes["moved"] = (["Lucas", "Ana", "Rui", "Lisbon", "Porto", "Marés Logistics"], [
        fact("Ana", "Rui", moved, moved[:-1])])
    await Ingestor(store, embedder, FunctionModel(script)).add_episode(message(moved, speaker="Lucas"))
    names = {e.id: e.name for e in await store.list_entities("g")}
    facts = {f.fact: (names[f.source_id], names[f.target_id]) for f in await store.list_facts("g")}
    assert facts == {moved: ("Ana", "Porto"),
                     # what the sentence says of each, in its set forms (endings.new_values_said)
                     "Rui moved to Porto.": ("Rui", "Porto"),
                     "Rui works at Marés Logistics.": ("Rui", "Marés Logistics")}


async def test_a_name_a_fact_gives_as_its_end_and_the_entity_answer_left_out_is_resolved_as_an_entity(
    store, embedder
):
    script = Script()
    script.episodes["husband Mike"] = (["Lauren", "Summit Bank"], [
        fact("Mike", "Summit Bank", "Mike got a job at Summit Bank.", "her husband Mike got a job at Summit Bank"),
        fact("Lauren", "Denver", "Lauren moved to Denver.", "Lauren just moved to Denver"),
        fact("Lauren", "stomach", "Lauren has an upset stomach.", None),  # a common noun: no name
        fact("She", "Summit Bank", "She likes Summit Bank.", None),  # a pronoun: no name
        fact("CFO", "Summit Bank", "CFO is at Summit Bank.", None),  # a title: no name of its own
    ])
    script.episodes["Mike and Lauren"] = (["Lauren"], [
        fact("Mike", "Lauren", "Mike is Lauren's husband.", "Mike and Lauren"),
    ])
    model = FunctionModel(script)
    ingestor = Ingestor(store, embedder, model)
    result = await ingestor.add_episode(message(
        "Lauren just moved to Denver because her husband Mike got a job at Summit Bank as CFO. She has an upset "
        "stomach."))
    entities = sorted(e.name for e in await store.list_entities("g"))
    assert entities == ["Alice", "Denver", "Lauren", "Mike", "Summit Bank"]
    facts = sorted(f.fact for f in await store.list_facts("g"))
    assert facts == ["Lauren moved to Denver.", "Mike got a job at Summit Bank."]
    assert model.prompt_names == ["extract_entities", "extract_facts"]  # no call for the names left out
    assert any("'Mike', an end of a fact the entity answer left out, made an entity" in w for w in result.warnings)

    await ingestor.add_episode(message("Mike and Lauren say hi.", when="2024-05-16"))
    assert sorted(e.name for e in await store.list_entities("g")).count("Mike") == 1  # the same Mike, found again


async def test_the_holder_of_a_role_in_apposition_the_entity_answer_left_out_is_resolved_as_an_entity(
    store, embedder
):
    script = Script()
    script.episodes["husband Mike"] = (["Lauren Hayes", "Summit Bank"], [
        fact("Lauren Hayes", "Summit Bank", "Lauren Hayes' husband Mike got a job at Summit Bank.",
             "her husband Mike got a job at Summit Bank")])
    await Ingestor(store, embedder, FunctionModel(script)).add_episode(message(
        "Lauren Hayes moved to Denver because her husband Mike got a job at Summit Bank."))
    names = {e.id: e.name for e in await store.list_entities("g")}
    stored = {f.fact: (names[f.source_id], names[f.target_id]) for f in await store.list_facts("g")}
    assert stored == {"Mike is Lauren Hayes's husband.": ("Mike", "Lauren Hayes"),
                      "Mike got a job at Summit Bank.": ("Mike", "Summit Bank"),
                      "Lauren Hayes moved to Denver.": ("Lauren Hayes", "Denver")}  # the move: a fact of its own


async def test_a_code_the_model_did_not_extract_is_an_entity_and_the_fact_stated_of_it_is_kept(store, embedder):
    # the 1.5B left "DY1307" out of its entities; the fact it then wrote of it had no end
    script = Script()
    script.episodes["now on"] = (["Nadia", "Norwegian flight DY1303"], [
        fact("Nadia", "DY1307", "Nadia is now on DY1307.", "I'm now on DY1307")])
    result = await Ingestor(store, embedder, FunctionModel(script)).add_episode(
        message("Norwegian flight DY1303 is cancelled, so I'm now on DY1307.", speaker="Nadia"))
    assert sorted(e.name for e in await store.list_entities("g")) == ["DY1307", "Nadia", "Norwegian flight DY1303"]
    assert [f.fact for f in await store.list_facts("g")] == ["Nadia is now on DY1307."]
    assert any("code 'DY1307' made an entity" in w for w in result.warnings)


@pytest.mark.parametrize(("said", "model_date", "expected"), [
    ("I started at Globex last Monday.", "2024-05-15T09:00:00Z", "2024-05-13"),  # defaulted to the day said
    ("I started at Globex last Monday.", None, "2024-05-13"),
    ("I started at Globex last Monday.", "2024-05-06T00:00:00Z", "2024-05-06"),  # the model's own day stands
    ("I start at Globex on June 3.", "2024-05-15T09:00:00Z", "2024-06-03"),
    # two dates: the one of the clause naming the fact's entities, and the model's call when both clauses name them
    ("I joined Globex in 2019 and moved to Oslo last year.", "2024-05-15T09:00:00Z", "2019-01-01"),
    ("I joined Globex in 2019 and left Globex last year.", "2024-05-15T09:00:00Z", "2024-05-15"),
    ("I work at Globex.", "2024-05-15T09:00:00Z", "2024-05-15"),
])
async def test_a_start_left_at_the_day_it_was_said_takes_the_one_day_its_sentence_names(
    store, embedder, said: str, model_date: str | None, expected: str
):
    script = Script()
    script.episodes["Globex"] = (["Alice", "Globex"], [
        {**fact("Alice", "Globex", "Alice works at Globex", said.rstrip(".")), "valid_at": model_date}])
    await Ingestor(store, embedder, FunctionModel(script)).add_episode(message(said))
    (stored,) = await store.list_facts("g")
    assert stored.valid_at is not None and stored.valid_at.date().isoformat() == expected


async def test_a_quote_over_two_sentences_is_dated_by_the_one_that_states_the_fact(store, embedder):
    release = ("Heliox Energy said its CEO, Margaret Osei, will step down on March 31, 2023. The board has "
               "appointed Victor Lang as CEO effective April 1, 2023.")
    appointed = "The board has appointed Victor Lang as CEO effective April 1, 2023."
    script = Script()
    script.episodes["appointed"] = (["Heliox Energy", "Victor Lang"], [
        {**fact("Heliox Energy", "Victor Lang", appointed, release[:-1]), "valid_at": "2023-02-01T13:00:00Z"}])
    episode = Episode(group_id="g", kind="text", content=release, reference_time=at("2023-02-01"))
    await Ingestor(store, embedder, FunctionModel(script)).add_episode(episode)
    (stored,) = await store.list_facts("g")
    assert stored.valid_at is not None and stored.valid_at.date().isoformat() == "2023-04-01"


async def test_a_fact_the_entity_notes_state_and_the_fact_call_left_out_is_kept(store, embedder):
    script = Script()
    script.episodes["sister"] = (
        ["Maya", {"name": "Ana", "summary": "Ana, Maya's sister, lives in Lisbon."},
         {"name": "Lisbon", "summary": "Ana lives in Lisbon."}, {"name": "Porto", "summary": "Ana hates Porto."}],
        [fact("Ana", "Maya", "Ana is Maya's sister", "My sister Ana")],
    )
    await Ingestor(store, embedder, FunctionModel(script)).add_episode(
        message("My sister Ana lives in Lisbon, not in Porto.", speaker="Maya"))
    names = {e.id: e.name for e in await store.list_entities("g")}
    pairs = {frozenset((names[f.source_id], names[f.target_id])): f.fact for f in await store.list_facts("g")}
    assert pairs[frozenset(("Ana", "Lisbon"))] == "Ana lives in Lisbon."  # the note on Lisbon
    assert frozenset(("Ana", "Porto")) not in pairs  # a note the message does not state is not a fact
    assert len(pairs) == 2


def test_an_entity_is_named_by_its_whole_name_or_a_capitalized_word_only_it_has() -> None:
    spellings = {"anna": ["Anna Kowalski"], "movewell": ["MoveWell Clinic"], "kings": ["Kingsbridge Clinic"],
                 "agnes": ["St. Agnes Hospital"], "daniel": ["Daniel Okafor"], "chidi": ["Chidi Okafor"],
                 "beatles": ["The Beatles"]}
    assert named_entities(spellings, "Anna signed me off, so physio at MoveWell is done.") == {"anna", "movewell"}
    assert named_entities(spellings, "I left St. Agnes on January 12") == {"agnes"}
    assert named_entities(spellings, "The Okafors moved; the clinic closed.") == set()  # shared or lower case
    assert named_entities(spellings, "The kids love it.") == set()  # "The" is no name's word
    assert named_entities(spellings, "We saw the Beatles and Chidi Okafor.") == {"beatles", "chidi"}


async def test_a_text_repeated_on_pairs_it_does_not_name_is_kept_only_where_it_names_both(store, embedder):
    flying = "Yusuf Demirci is flying to Tallinn on flight BT317."
    script = Script()
    script.episodes["Tallinn"] = (["Yusuf Demirci", "Tallinn", "BT317", "Tammik Freight", "Wiebke Sommer"], [
        fact("Yusuf Demirci", "Tallinn", flying, "I'm flying to Tallinn on flight BT317"),
        fact("Yusuf Demirci", "Tammik Freight", flying, "I'm flying to Tallinn on flight BT317"),
        fact("Yusuf Demirci", "Wiebke Sommer", flying, "I'm flying to Tallinn on flight BT317"),
        fact("Wiebke Sommer", "Yusuf Demirci", "Wiebke Sommer is Yusuf Demirci's manager.", "my manager Wiebke Sommer"),
    ])
    result = await Ingestor(store, embedder, FunctionModel(script)).add_episode(message(
        "I'm flying to Tallinn on flight BT317 to meet Tammik Freight, and my manager Wiebke Sommer is coming.",
        speaker="Yusuf Demirci"))
    names = {e.id: e.name for e in await store.list_entities("g")}
    stored = sorted((f.fact, names[f.source_id], names[f.target_id]) for f in await store.list_facts("g"))
    assert stored == [("Wiebke Sommer is Yusuf Demirci's manager.", "Wiebke Sommer", "Yusuf Demirci"),
                      (flying, "Yusuf Demirci", "Tallinn")]
    assert sum("the same text is on a pair it names" in w for w in result.warnings) == 2


async def test_a_quote_of_another_sentence_gives_way_to_the_sentence_that_states_the_fact(store, embedder):
    # the 1.5B gave three facts of a memo the quote of its last sentence, and "6 October" dated them all
    memo = ("Tobias Arkwright retires as chief operating officer of Pellworth Instruments on 31 August. "
            "Our head office will relocate from Southampton to Eastleigh on 6 October.")
    script = Script()
    script.episodes["Arkwright"] = (["Tobias Arkwright", "Pellworth Instruments", "Eastleigh"], [
        {**fact("Pellworth Instruments", "Tobias Arkwright",
                "Tobias Arkwright retires as chief operating officer of Pellworth Instruments on 31 August.",
                "Our head office will relocate from Southampton to Eastleigh on 6 October"),
         "valid_at": "2025-08-31T00:00:00Z"}])
    episode = Episode(group_id="g", content=memo, kind="text", reference_time=at("2025-07-01"))
    await Ingestor(store, embedder, FunctionModel(script)).add_episode(episode)
    retires = next(f for f in await store.list_facts("g") if "retires" in f.fact)
    (span,) = retires.evidence
    assert memo[span.start:span.end].startswith("Tobias Arkwright retires")
    assert retires.valid_at == at("2025-08-31")
