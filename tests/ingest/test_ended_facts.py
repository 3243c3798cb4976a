"""Stage 6b: the stored facts a message ends, asked in one call (chronomem.ingest.stages.ended).

A change seldom reads like the fact it ends ("My new lead is Aisha Bello" ends "Chen Wei reports to
Marcus Hill"): resolution by closeness never offers the pair, so the episode is asked directly.
"""

from __future__ import annotations

from typing import Any

import pytest
from ingest_doubles import Script, at

from chronomem.domain import Episode
from chronomem.embed.testing import HashingEmbedder
from chronomem.ingest import IngestConfig, Ingestor
from chronomem.ingest.invalidation import ENDED_BY, SUPERSEDED_BY, end
from chronomem.llm.testing import FunctionModel
from chronomem.store.base import Store

FIRST = "I'm on the Payments team and I report to Marcus Hill."
LATER = "I moved over to the Platform team. My new lead is Aisha Bello."


def message(text: str, when: str, speaker: str = "Chen Wei") -> Episode:
    return Episode(group_id="g", speaker=speaker, content=text, reference_time=at(when))


def fact(source: str, relation: str, target: str, text: str, **more: Any) -> dict[str, Any]:
    return {"source": source, "relation_type": relation, "target": target, "fact": text, **more}


@pytest.fixture
def chen(script: Script) -> Script:
    script.episodes["Payments"] = (["Chen Wei", "Payments team", "Marcus Hill"], [
        fact("Chen Wei", "MEMBER_OF", "Payments team", "Chen Wei is on the Payments team."),
        fact("Chen Wei", "REPORTS_TO", "Marcus Hill", "Chen Wei reports to Marcus Hill."),
    ])
    script.episodes["Platform"] = (["Chen Wei", "Platform team", "Aisha Bello"], [
        fact("Chen Wei", "MEMBER_OF", "Platform team", "Chen Wei is on the Platform team."),
        fact("Aisha Bello", "LEADS", "Chen Wei", "Aisha Bello is Chen Wei's lead."),
    ])
    return script


def ending(context: Any, text: str, quote: str, ended_at: str | None = None) -> dict[str, Any]:
    (number,) = [c.index for c in context.known if c.fact == text]
    return {"number": number, "ended_at": ended_at, "quote": quote}


async def current(store: Store) -> dict[str, Any]:
    return {f.fact: f for f in await store.list_facts("g")}


async def test_a_change_that_reads_nothing_like_the_fact_it_ends_closes_it(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, chen: Script
) -> None:
    chen.endings = lambda ctx: [ending(ctx, "Chen Wei reports to Marcus Hill.", "My new lead is Aisha Bello")]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message(FIRST, "2022-04-04"))
    result = await ingestor.add_episode(message(LATER, "2022-11-15"))

    (review,) = chen.questions["review_endings"]  # asked once, after the facts; shown the current ones
    assert {c.fact for c in review.known} == {"Chen Wei is on the Payments team.", "Chen Wei reports to Marcus Hill."}
    assert review.episode.current.endswith(LATER)
    (closed,) = result.facts_invalidated
    assert closed.fact == "Chen Wei reports to Marcus Hill."
    assert closed.invalid_at == at("2022-11-15") and closed.expired_at is not None  # ended when said, on both timelines
    # replaced by one of the episode's new facts about Chen Wei: removing either reopens it
    assert closed.attributes[ENDED_BY] == result.episode.id
    assert closed.attributes[SUPERSEDED_BY] in {f.id for f in result.facts_created}
    facts = await current(store)
    assert facts["Chen Wei is on the Payments team."].invalid_at is None  # the model did not end it: it stays
    assert len(await store.fact_history("g", closed.id)) == 2  # the open version is kept


async def test_the_day_the_message_gives_is_when_the_fact_ended(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, chen: Script
) -> None:
    chen.episodes["Platform"] = (["Chen Wei", "Platform team", "Aisha Bello"], [
        fact("Chen Wei", "MEMBER_OF", "Platform team", "Chen Wei is on the Platform team.")])
    chen.endings = lambda ctx: [ending(ctx, "Chen Wei is on the Payments team.", "moved over to the Platform team",
                                       ended_at="2022-11-01T00:00:00Z")]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message(FIRST, "2022-04-04"))
    result = await ingestor.add_episode(message(LATER, "2022-11-15"))

    (closed,) = result.facts_invalidated
    assert closed.fact == "Chen Wei is on the Payments team." and closed.invalid_at == at("2022-11-01")


async def test_an_end_the_message_does_not_say_or_a_fact_not_shown_closes_nothing(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, chen: Script
) -> None:
    chen.endings = lambda ctx: [ending(ctx, "Chen Wei reports to Marcus Hill.", "Marcus Hill retired"),
                                {"number": 99, "quote": "My new lead is Aisha Bello"}]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message(FIRST, "2022-04-04"))
    result = await ingestor.add_episode(message(LATER, "2022-11-15"))

    assert result.facts_invalidated == ()
    assert any("not in the message" in w for w in result.warnings)
    assert any("not shown" in w for w in result.warnings)
    assert all(f.invalid_at is None for f in (await current(store)).values())


async def test_one_text_on_two_pairs_is_shown_once_and_ends_on_both(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script
) -> None:
    booked = "Tom Becker is booked at the Alderney Inn in Edinburgh."
    # stored before a fact's text made every entity it names a participant (or by add_fact): two facts
    ingestor = Ingestor(store, embedder, model)
    for target in ("Alderney Inn", "Edinburgh"):
        await ingestor.add_fact("g", "Tom Becker", "BOOKED_AT", target, booked, valid_at=at("2024-06-03"))
    script.episodes["cancelled"] = (["Tom Becker", "Alderney Inn"], [])
    script.endings = lambda ctx: [ending(ctx, booked, "cancelled my room at the Alderney Inn")]
    result = await ingestor.add_episode(
        message("I cancelled my room at the Alderney Inn.", "2024-06-05", "Tom Becker"))

    (review,) = script.questions["review_endings"]
    assert [c.fact for c in review.known] == [booked]  # once: two numbers for one statement split the answer
    closed = result.facts_invalidated
    assert len(closed) == 2 and {f.target_id for f in closed} == {f.target_id for f in await store.list_facts("g")}
    assert all(f.invalid_at == at("2024-06-05") for f in closed)


async def test_one_text_the_model_puts_on_two_pairs_is_one_fact_of_all_it_names(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script
) -> None:
    booked = "Tom Becker is booked at the Alderney Inn in Edinburgh."
    script.episodes["booked at"] = (["Tom Becker", "Alderney Inn", "Edinburgh"], [
        fact("Tom Becker", "BOOKED_AT", "Alderney Inn", booked), fact("Tom Becker", "STAYS_IN", "Edinburgh", booked),
    ])
    await Ingestor(store, embedder, model).add_episode(
        message("I'm booked at the Alderney Inn in Edinburgh.", "2024-06-03", "Tom Becker"))
    # beside it, where the inn is: a fact of its own (places.where_said), with the gazetteer
    (stored,) = [f for f in await store.list_facts("g") if f.fact == booked]
    names = {e.id: e.name for e in await store.list_entities("g")}
    assert {names[i] for i in stored.entity_ids} == {"Tom Becker", "Alderney Inn", "Edinburgh"}


async def test_no_call_when_the_message_names_no_entity_with_facts(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, chen: Script
) -> None:
    joined = fact("Dana", "MEMBER_OF", "chess club", "Dana joined the chess club.")
    chen.episodes["chess"] = (["Dana", "chess club"], [joined])
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message(FIRST, "2022-04-04"))  # a group's first episode: nothing to end
    # of new entities only
    await ingestor.add_episode(message("Dana joined the chess club.", "2022-05-01", speaker="Dana"))
    assert "review_endings" not in model.prompt_names


async def test_the_review_can_be_turned_off(store: Store, embedder: HashingEmbedder, model: FunctionModel,
                                            chen: Script) -> None:
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(end_review=False))
    await ingestor.add_episode(message(FIRST, "2022-04-04"))
    await ingestor.add_episode(message(LATER, "2022-11-15"))
    assert "review_endings" not in model.prompt_names


async def test_removing_the_episode_that_ended_a_fact_opens_it_again(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, chen: Script
) -> None:
    chen.episodes["Platform"] = (["Chen Wei", "Platform team"], [
        fact("Chen Wei", "MEMBER_OF", "Platform team", "Chen Wei is on the Platform team.")])
    chen.endings = lambda ctx: [ending(ctx, "Chen Wei reports to Marcus Hill.", "My new lead is Aisha Bello")]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message(FIRST, "2022-04-04"))
    later = await ingestor.add_episode(message(LATER, "2022-11-15"))
    assert (await current(store))["Chen Wei reports to Marcus Hill."].invalid_at is not None

    await ingestor.remove_episode("g", later.episode.id)
    reopened = (await current(store))["Chen Wei reports to Marcus Hill."]
    assert reopened.invalid_at is None and reopened.expired_at is None and ENDED_BY not in reopened.attributes


def test_an_end_before_the_fact_began_closes_it_where_it_began() -> None:
    # a plan cancelled ahead of its day never held: "booked on BA283 on November 20", cancelled on the 15th
    from chronomem.domain import Fact

    booked = Fact(group_id="g", source_id="a", target_id="b", relation_type="BOOKED_ON",
                  fact="Sarah is booked on BA283 on November 20.", valid_at=at("2023-11-20"))
    closed = end(booked, at=at("2023-11-15"), said_at=at("2023-11-15T09:00"), now=at("2023-11-15T10:00"),
                 episode_id="e")
    assert closed.invalid_at == closed.valid_at == at("2023-11-20")
    assert closed.expired_at == at("2023-11-15T10:00") and closed.attributes == {ENDED_BY: "e"}


def test_an_end_still_to_come_is_learnt_not_a_supersession() -> None:
    # "Margaret Osei will step down on March 31": true until then, so current in our records
    from chronomem.domain import Fact

    ceo = Fact(group_id="g", source_id="a", target_id="b", relation_type="CEO_OF", fact="Margaret Osei is the CEO.")
    closed = end(ceo, at=at("2023-03-31"), said_at=at("2023-02-01"), now=at("2026-12-07"), episode_id="e")
    assert closed.invalid_at == at("2023-03-31") and closed.expired_at is None


async def test_past_end_candidates_the_closest_facts_to_the_message_are_shown(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, chen: Script
) -> None:
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(end_candidates=1))
    await ingestor.add_episode(message(FIRST, "2022-04-04"))
    await ingestor.add_episode(message(LATER, "2022-11-15"))
    (review,) = chen.questions["review_endings"]
    # ranked by the stored vectors: the team the message moves from reads most like its new team
    assert [c.fact for c in review.known] == ["Chen Wei is on the Payments team."]


# -- an end's quote must end the fact it is given for ------------------------------------------------

NURSE = "I've been a nurse at St. Agnes Hospital since 2019, and I teach first aid at the Red Cross on weekends."
MOVED_ON = "I left St. Agnes on January 12 and start at Kingsbridge Clinic next month. Still teaching at the Red Cross."
# not read as a job (endings.holds_state), so that the new job at Kingsbridge closes nothing before
# stage 6b, which these tests are of: "Priya Raman is a nurse at St. Agnes Hospital" would be closed
# by the new job, at its start
AT_ST_AGNES = "Priya Raman nurses on the wards of St. Agnes Hospital."
AT_RED_CROSS = "Priya Raman teaches first aid at the Red Cross."


@pytest.fixture
def priya(script: Script) -> Script:
    script.episodes["nurse"] = (["Priya Raman", "St. Agnes Hospital", "Red Cross"], [
        fact("Priya Raman", "WORKS_AT", "St. Agnes Hospital", AT_ST_AGNES),
        fact("Priya Raman", "TEACHES_AT", "Red Cross", AT_RED_CROSS),
    ])
    script.episodes["Kingsbridge"] = (["Priya Raman", "Kingsbridge Clinic"], [
        fact("Priya Raman", "WORKS_AT", "Kingsbridge Clinic", "Priya Raman starts at Kingsbridge Clinic next month."),
    ])
    return script


async def test_an_end_quoting_a_fact_instead_of_the_message_stands_on_the_one_sentence_that_ends_it(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, priya: Script
) -> None:
    # a small model quotes the fact it ends; the message's sentence naming its two ends and a change
    # stands for the quote. The Red Cross one has no such sentence ("Still teaching ..." names no
    # Priya and says it goes on): kept.
    # its day too is read off the fact (when it began), not the message: the sentence's day is taken
    priya.endings = lambda ctx: [ending(ctx, AT_ST_AGNES, AT_ST_AGNES, "2023-10-02"),
                                 ending(ctx, AT_RED_CROSS, AT_RED_CROSS)]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message(NURSE, "2023-10-02", "Priya Raman"))
    result = await ingestor.add_episode(message(MOVED_ON, "2024-01-15", "Priya Raman"))

    (closed,) = result.facts_invalidated
    assert closed.fact == AT_ST_AGNES and closed.invalid_at == at("2024-01-12")
    assert any("stands for it" in w and AT_ST_AGNES in w for w in result.warnings)
    assert any("kept current: the end's quote is not in the message" in w and AT_RED_CROSS in w
               for w in result.warnings)


@pytest.mark.parametrize(("quote", "why"), [
    ("I left St. Agnes on January 12", "its quote ends 'Priya Raman nurses on the wards"),  # that one it ends
    ("Still teaching at the Red Cross", "says it goes on"),
])
async def test_a_quote_that_ends_another_fact_or_says_this_one_goes_on_ends_nothing(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, priya: Script, quote: str, why: str
) -> None:
    priya.endings = lambda ctx: [ending(ctx, AT_ST_AGNES, "I left St. Agnes on January 12"),
                                 ending(ctx, AT_RED_CROSS, quote)]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message(NURSE, "2023-10-02", "Priya Raman"))
    result = await ingestor.add_episode(message(MOVED_ON, "2024-01-15", "Priya Raman"))

    assert [f.fact for f in result.facts_invalidated] == [AT_ST_AGNES]
    assert any(why in w and AT_RED_CROSS in w for w in result.warnings)
    assert (await current(store))[AT_RED_CROSS].invalid_at is None


async def test_a_sentence_about_other_entities_ends_nothing_of_theirs(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script
) -> None:
    at_school = "Amara started at Lakeside Primary."
    script.episodes["daughter"] = (["Daniel Okafor", "Amara", "Lakeside Primary", "Chidi", "Hillcrest Hawks"], [
        fact("Amara", "ATTENDS", "Lakeside Primary", at_school),
        fact("Chidi", "PLAYS_FOR", "Hillcrest Hawks", "Chidi plays football for the Hillcrest Hawks."),
    ])
    script.episodes["loves it"] = (["Amara", "Chidi", "Hillcrest Hawks"], [])
    script.endings = lambda ctx: [ending(ctx, at_school, "Chidi quit the Hawks in August"),
                                  ending(ctx, at_school, "Chidi quit"),
                                  ending(ctx, "Chidi plays football for the Hillcrest Hawks.", "Chidi quit the Hawks")]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message(
        "My daughter Amara started at Lakeside Primary, and my son Chidi plays football for the Hillcrest Hawks.",
        "2024-02-10", "Daniel Okafor"))
    result = await ingestor.add_episode(message("Amara loves it. Chidi quit the Hawks in August.", "2024-09-03",
                                                "Daniel Okafor"))

    assert [f.fact for f in result.facts_invalidated] == ["Chidi plays football for the Hillcrest Hawks."]
    assert any("its quote ends 'Chidi plays" in w and at_school in w for w in result.warnings)  # the number was wrong
    assert any("names none of its entities" in w and at_school in w for w in result.warnings)


@pytest.mark.parametrize("quote", [
    "Dr. Okafor switched me to Jardiance",  # names the doctor and the patient, as the diagnosis does
    "The metformin was upsetting my stomach",  # says no change itself; its sentence does
])
async def test_a_quote_naming_another_facts_entities_ends_the_fact_its_sentence_is_about(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script, quote: str
) -> None:
    diagnosed, on_metformin = "Dr. Okafor diagnosed Rahul Mehta with diabetes.", "Rahul Mehta takes metformin."
    script.episodes["diagnosed"] = (["Rahul Mehta", "Dr. Okafor", "diabetes", "metformin"], [
        fact("Dr. Okafor", "DIAGNOSED", "Rahul Mehta", diagnosed),
        fact("Rahul Mehta", "TAKES", "metformin", on_metformin),
    ])
    script.episodes["switched"] = (["Rahul Mehta", "Dr. Okafor", "metformin"], [])
    script.endings = lambda ctx: [ending(ctx, on_metformin, quote)]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("Dr. Okafor diagnosed me with diabetes and put me on metformin.",
                                       "2024-03-01", "Rahul Mehta"))
    result = await ingestor.add_episode(message(
        "The metformin was upsetting my stomach, so Dr. Okafor switched me to Jardiance.", "2024-04-02",
        "Rahul Mehta"))

    assert [f.fact for f in result.facts_invalidated] == [on_metformin]


@pytest.mark.parametrize(("speaker", "first", "stored", "then", "said", "why"), [
    # "Ana and Rui moved from Lisbon to Porto" ended "Ana just had a baby named Inês" in a 1.5B answer
    ("Lucas", "My sister Ana lives in Lisbon. She just had a baby named Inês.",
     [("Ana", "LIVES_IN", "Lisbon", "Ana lives in Lisbon."),
      ("Ana", "PARENT_OF", "Inês", "Ana had a baby named Inês.")],
     ["Porto"], "Ana moved to Porto last month", "says a new home, and this fact is none"),
    # the 1.5B ended Lena's job with "Lena Ortiz moved out at the end of January"
    ("Aoife Brennan", "My flatmate Lena Ortiz works the ticket desk at Harbourline Ferries.",
     [("Lena Ortiz", "FLATMATE_OF", "Aoife Brennan", "Aoife Brennan is Lena Ortiz's flatmate."),
      ("Lena Ortiz", "WORKS_AT", "Harbourline Ferries", "Lena Ortiz works the ticket desk at Harbourline Ferries.")],
     ["Cork"], "Lena Ortiz moved out at the end of January", "ends a home, and this fact is a job"),
])
async def test_a_change_of_one_state_ends_the_fact_of_that_state_and_no_other(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script, speaker: str, first: str,
    stored: list[tuple[str, str, str, str]], then: list[str], said: str, why: str,
) -> None:
    """The first stored fact is the one the change ends; the model ends the second too."""
    ends, kept = stored[0][3], stored[1][3]
    names = sorted({speaker, *(n for s, _, t, _ in stored for n in (s, t))})
    script.episodes[first[:20]] = (names, [fact(*item) for item in stored])
    script.episodes[said] = ([*names, *then], [])
    # the model ends both (of those still current: a move the sentence says ends the home before 6b)
    script.endings = lambda ctx: [ending(ctx, text, said) for text in (ends, kept)
                                  if any(c.fact == text for c in ctx.known)]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message(first, "2023-05-12", speaker))
    result = await ingestor.add_episode(message(said + ".", "2023-10-02", speaker))

    assert [f.fact for f in result.facts_invalidated] == [ends]
    assert any(why in w and kept in w for w in result.warnings)


async def test_a_sentence_that_says_a_fact_goes_on_keeps_it_with_no_new_fact_of_it(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script
) -> None:
    # the new degree has the relation the 1.5B gave the tutoring; neither stage 6b nor resolution
    # may end the tutoring: "The tutoring at Brookfield carries on" (the speaker, unnamed, is its tutor)
    study, tutoring = "Ishaan Mehta studies at Tallbridge Polytechnic.", "Ishaan Mehta tutors maths at Brookfield."
    degree = "Ishaan Mehta begins an architecture degree at Harlow Institute."
    script.episodes["I study at"] = (["Ishaan Mehta", "Tallbridge Polytechnic", "Brookfield"], [
        fact("Ishaan Mehta", "STUDIES_AT", "Tallbridge Polytechnic", study),
        fact("Ishaan Mehta", "STUDIES_AT", "Brookfield", tutoring)])
    script.episodes["withdrew"] = (["Ishaan Mehta", "Tallbridge Polytechnic", "Harlow Institute", "Brookfield"], [
        fact("Ishaan Mehta", "STUDIES_AT", "Harlow Institute", degree,
             quote="On January 27 I begin an architecture degree at Harlow Institute")])
    script.fact_verdict = lambda q: {"index": q.index, "contradicts": [c.index for c in q.candidates]}
    withdrew = "I withdrew from Tallbridge Polytechnic last Friday"
    script.endings = lambda ctx: [ending(ctx, c.fact, withdrew if c.fact == study else "I begin an architecture degree")
                                  for c in ctx.known]
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0))
    await ingestor.add_episode(message("I study at Tallbridge Polytechnic and tutor maths at Brookfield.",
                                       "2024-10-07", "Ishaan Mehta"))
    result = await ingestor.add_episode(message(
        f"Not well, so {withdrew}. On January 27 I begin an architecture degree at Harlow Institute. "
        "The tutoring at Brookfield carries on.", "2025-01-13", "Ishaan Mehta"))

    facts = await current(store)
    assert facts[study].invalid_at is not None
    assert facts[tutoring].invalid_at is None
    assert any("goes on" in w and tutoring in w for w in result.warnings)


async def test_a_quote_about_another_fact_still_ends_the_one_it_gives_a_new_value(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, chen: Script
) -> None:
    chen.episodes["mentor"] = (["Chen Wei", "Marcus Hill", "Ines Costa"], [
        fact("Chen Wei", "REPORTS_TO", "Marcus Hill", "Chen Wei reports to Marcus Hill."),
        fact("Chen Wei", "MENTORS", "Ines Costa", "Chen Wei mentors Ines Costa."),
    ])
    chen.episodes["both report"] = (["Chen Wei", "Ines Costa", "Aisha Bello"], [
        fact("Chen Wei", "REPORTS_TO", "Aisha Bello", "Chen Wei reports to Aisha Bello."),
        fact("Ines Costa", "REPORTS_TO", "Aisha Bello", "Ines Costa reports to Aisha Bello."),
    ])
    said = "Ines Costa and I now both report to Aisha Bello"  # names Chen and Ines, whose fact goes on
    chen.endings = lambda ctx: [ending(ctx, "Chen Wei reports to Marcus Hill.", said)]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("I report to Marcus Hill and I mentor Ines Costa.", "2022-04-04"))
    result = await ingestor.add_episode(message(said + ".", "2022-11-15"))

    assert [f.fact for f in result.facts_invalidated] == ["Chen Wei reports to Marcus Hill."]


async def test_a_fact_the_message_says_goes_on_is_ended_by_no_other_statement(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, priya: Script
) -> None:
    still = "Priya Raman still teaches at the Red Cross."
    priya.episodes["Kingsbridge"] = (["Priya Raman", "Kingsbridge Clinic", "Red Cross"], [
        fact("Priya Raman", "WORKS_AT", "Kingsbridge Clinic", "Priya Raman starts at Kingsbridge Clinic next month.",
             quote="start at Kingsbridge Clinic next month"),
        fact("Priya Raman", "TEACHES_AT", "Red Cross", still, quote="Still teaching at the Red Cross"),
    ])
    # resolution's call says the new job contradicts every fact of Priya's; stage 6b ends the classes too
    priya.fact_verdict = lambda q: {"index": q.index, "contradicts": [c.index for c in q.candidates]
                                    if q.fact.startswith("Priya Raman starts") else []}
    priya.endings = lambda ctx: [ending(ctx, AT_RED_CROSS, "start at Kingsbridge Clinic next month")]
    every_fact_a_candidate = IngestConfig(facts_shown=0, contradiction_similarity=-1.0, same_relation_similarity=-1.0)
    ingestor = Ingestor(store, embedder, model, config=every_fact_a_candidate)
    await ingestor.add_episode(message(NURSE, "2023-10-02", "Priya Raman"))
    result = await ingestor.add_episode(message(MOVED_ON, "2024-01-15", "Priya Raman"))

    facts = await current(store)
    assert facts[AT_RED_CROSS].invalid_at is None and facts[still].invalid_at is None
    assert facts[AT_ST_AGNES].invalid_at is not None  # the job the new one replaces still ends
    assert any("does not end" in w and AT_RED_CROSS in w for w in result.warnings)  # resolution's verdict
    assert any("kept current: the message says it goes on" in w for w in result.warnings)  # stage 6b's


async def test_a_new_fact_ends_another_pairs_fact_only_as_a_new_value_of_the_same_thing(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script
) -> None:
    cfo, team = "Ingrid Solberg is the CFO of Nordhavn Shipping.", "Ingrid Solberg is on the Payments team."
    script.episodes["CFO"] = (["Ingrid Solberg", "Nordhavn Shipping", "Payments team"], [
        fact("Ingrid Solberg", "CFO_OF", "Nordhavn Shipping", cfo),
        fact("Ingrid Solberg", "MEMBER_OF", "Payments team", team),
    ])
    script.episodes["Rotterdam"] = (["Nordhavn Shipping", "Rotterdam", "Ingrid Solberg", "Platform team"], [
        fact("Nordhavn Shipping", "OPENED_OFFICE_IN", "Rotterdam", "Nordhavn Shipping opened an office in Rotterdam."),
        fact("Ingrid Solberg", "MEMBER_OF", "Platform team", "Ingrid Solberg is on the Platform team."),
    ])
    # the model's verdict: each new fact ends every candidate it was shown
    script.fact_verdict = lambda q: {"index": q.index, "contradicts": [c.index for c in q.candidates]}
    every_fact_a_candidate = IngestConfig(facts_shown=0, contradiction_similarity=-1.0, same_relation_similarity=-1.0,
                                          end_review=False)
    ingestor = Ingestor(store, embedder, model, config=every_fact_a_candidate)
    await ingestor.add_episode(message("Ingrid Solberg is our new CFO; she is on the Payments team.", "2024-05-06",
                                       "Nordhavn Shipping"))
    result = await ingestor.add_episode(message(
        "Nordhavn Shipping opened an office in Rotterdam. Ingrid Solberg moved to the Platform team.", "2024-11-12",
        "Nordhavn Shipping"))

    assert [f.fact for f in result.facts_invalidated] == [team]  # the same relation: a new value
    assert (await current(store))[cfo].invalid_at is None  # an office opened ends no appointment
    assert any("another pair, another relation" in w for w in result.warnings)


async def test_a_quote_that_says_nothing_ended_ends_nothing(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script
) -> None:
    cfo = "Ingrid Solberg is the CFO of Nordhavn Shipping."
    script.episodes["CFO"] = (["Ingrid Solberg", "Nordhavn Shipping"], [
        fact("Ingrid Solberg", "CFO_OF", "Nordhavn Shipping", cfo)])
    script.episodes["Rotterdam"] = (["Nordhavn Shipping", "Rotterdam"], [
        fact("Nordhavn Shipping", "OPENED_OFFICE_IN", "Rotterdam", "Nordhavn Shipping opened an office in Rotterdam.")])
    script.endings = lambda ctx: [ending(ctx, cfo, "Nordhavn Shipping opened an office in Rotterdam")]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("Ingrid Solberg is our new CFO.", "2024-05-06", "Nordhavn Shipping"))
    result = await ingestor.add_episode(message("Nordhavn Shipping opened an office in Rotterdam.", "2024-11-12",
                                                "Nordhavn Shipping"))

    assert result.facts_invalidated == ()
    assert any("says nothing ended or changed" in w for w in result.warnings)


async def test_a_fact_said_to_go_on_does_not_replace_the_one_it_restates(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script
) -> None:
    member, still = "Chloé Martin is a member of the Riverside Tennis Club.", "Chloé Martin is still a member there."
    script.episodes["since 2018"] = (["Chloé Martin", "Riverside Tennis Club"], [
        fact("Chloé Martin", "MEMBER_OF", "Riverside Tennis Club", member, valid_at="2018-01-01T00:00:00Z")])
    script.episodes["Still a member"] = (["Chloé Martin", "Riverside Tennis Club"], [
        fact("Chloé Martin", "MEMBER_OF", "Riverside Tennis Club", still)])
    script.fact_verdict = lambda q: {"index": q.index, "contradicts": [c.index for c in q.candidates]}
    ingestor = Ingestor(store, embedder, model, config=IngestConfig(facts_shown=0, contradiction_similarity=-1.0,
                                                                    same_relation_similarity=-1.0))
    await ingestor.add_episode(message("I've been a member of the Riverside Tennis Club since 2018.", "2024-04-05",
                                       "Chloé Martin"))
    result = await ingestor.add_episode(message("Still a member of the Riverside Tennis Club.", "2024-09-22",
                                                "Chloé Martin"))

    assert result.facts_invalidated == ()
    assert (await current(store))[member].invalid_at is None


async def test_a_new_fact_of_the_generic_relation_gives_no_other_fact_a_new_value(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script
) -> None:
    # the 1.5B gives RELATES_TO to nearly every fact; the memo's new fact about Brackwater licensed
    # the model's end of "based in Halifax" as if it were a new value of it
    halifax = "Brackwater Ceramics is a tile maker based in Halifax."
    script.episodes["tile maker"] = (["Ines", "Brackwater Ceramics", "Halifax"], [
        fact("Brackwater Ceramics", "RELATES_TO", "Halifax", halifax, quote="a tile maker based in Halifax")])
    said = "Harriet Quayle will step down as chief executive of Brackwater Ceramics on 31 May"
    script.episodes["step down"] = (["Ines", "Harriet Quayle", "Brackwater Ceramics"], [
        fact("Brackwater Ceramics", "RELATES_TO", "Harriet Quayle", said + ".", quote=said)])
    script.endings = lambda ctx: [ending(ctx, halifax, said)]  # the model ends the wrong fact
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("Brackwater Ceramics, a tile maker based in Halifax, opens in May.",
                                       "2025-03-03", "Ines"))
    result = await ingestor.add_episode(message(said + ".", "2025-04-22", "Ines"))
    assert result.facts_invalidated == ()
    assert any("ends a job, and this fact is a home" in w for w in result.warnings)


async def test_a_sentence_that_ends_a_fact_outweighs_one_that_keeps_something_else_of_the_pair(
    store: Store, embedder: HashingEmbedder, model: FunctionModel, script: Script
) -> None:
    engaged = "Marisol Quintero and Declan Ashworth got engaged."
    script.episodes["got engaged"] = (["Marisol Quintero", "Declan Ashworth"], [
        fact("Marisol Quintero", "ENGAGED_TO", "Declan Ashworth", engaged, quote="Declan Ashworth and I got engaged")])
    script.episodes["called off"] = (["Marisol Quintero", "Declan Ashworth", "Portobello"], [])
    called_off = "Declan and I called off the engagement in July"
    script.endings = lambda ctx: [ending(ctx, engaged, called_off)]
    ingestor = Ingestor(store, embedder, model)
    await ingestor.add_episode(message("Declan Ashworth and I got engaged on Christmas Eve!", "2024-01-13",
                                       "Marisol Quintero"))
    # "keeping" names Declan ("He") and the speaker ("I"), but says the flat goes on, not the engagement
    result = await ingestor.add_episode(message(
        f"No, and we won't: {called_off}. He's keeping the Portobello flat, and I moved to Leith.", "2025-08-20",
        "Marisol Quintero"))
    assert [f.fact for f in result.facts_invalidated] == [engaged]
