"""Which sentences say a state between two parties ended."""

from __future__ import annotations

import pytest

from chronomem.ingest.endings import (
    changed_states,
    couple_stage,
    ended_states_said,
    ends_the_thing,
    goes_on,
    new_states_said,
    new_values_said,
    says_a_change,
    states_an_end,
    states_held,
)


@pytest.mark.parametrize("sentence", [
    "I quit Globex today.",
    "I handed in my notice; my last day at Globex is May 31.",
    "Tom and I broke up last month.",
    "Dr. Okafor took me off metformin, so I stopped taking it.",
    "I no longer work at Initech.",
    "I don't work at Initech anymore.",
    "Margaret Osei will step down as CEO of Heliox Energy on March 31.",
    "She retired from the bank in 2019.",
    "I left my job at Acme.",
    "The trip to Rome was cancelled.",
    "I graduated from MIT in June.",
    "He was laid off from Initech.",
    "We moved out of the Lisbon flat.",
    "I gave up being vegan.",
    "Not well, so I withdrew from Tallbridge Polytechnic last Friday.",
])
def test_a_stated_end(sentence: str) -> None:
    assert states_an_end(sentence)


@pytest.mark.parametrize("sentence", [
    "I started a new job at Globex.",
    "I left the office early and stopped by Ana's.",
    "I sold my car to Ana.",
    "I withdrew money from the bank.",
    "I didn't quit Globex after all.",
    "I'm not going to resign.",
    "I will never leave my job at Acme.",
    "My sister Ana lives in Lisbon.",
    "I moved to Berlin.",
    "The stopwatch is broken.",
])
def test_no_end(sentence: str) -> None:
    assert not states_an_end(sentence)


@pytest.mark.parametrize(("words", "change"), [
    ("My new lead is Aisha Bello", True), ("I'm now on DY1307", True), ("Dr. Morales switched me to amlodipine", True),
    ("the appointment moved to next Tuesday", True), ("I left St. Agnes on January 12", True),
    ("Anna signed me off on August 16", True), ("physio at MoveWell is done", True), ("BA cancelled BA283", True),
    ("I worked there until May", True), ("Carla and Ben split up", True),
    ("Nordhavn Shipping opened an office in Rotterdam", False), ("Amara loves it", False),
    ("I teach first aid at the Red Cross", False),
])
def test_a_quote_that_ends_something_says_a_change(words: str, change: bool) -> None:
    assert says_a_change(words) is change


@pytest.mark.parametrize(("sentence", "going_on"), [
    ("Still teaching at the Red Cross though.", True), ("Osei will remain chair of the board.", True),
    ("Dr. Lee kept me on Ventolin.", True), ("I still quit in May.", False), ("I teach at the Red Cross.", False),
    ("The tutoring at Brookfield carries on.", True),
])
def test_a_sentence_that_says_a_state_goes_on(sentence: str, going_on: bool) -> None:
    assert goes_on(sentence) is going_on


@pytest.mark.parametrize(("sentence", "fact", "state"), [
    ("We moved to Porto last month.", "Ana moved to Porto.", "home"),
    ("Ana and Rui moved from Lisbon to Porto last month.", "Ana and Rui moved from Lisbon to Porto.", "home"),
    ("I moved back to Lisbon.", "Ana moved back to Lisbon.", "home"),
    ("I moved the meeting from Monday to Friday.", "Ana moved the meeting to Friday.", None),
    ("She's working at the Denver Health pharmacy now.", "Lauren is working at the Denver Health pharmacy.", "job"),
    ("I live in Porto now.", "Ana lives in Porto.", "home"),
    ("I've lived in Porto for ten years now.", "Ana lives in Porto.", None),  # it went on: no new home
    ("Up to now I worked at Globex.", "Ana worked at Globex.", None),
    ("I'm now on DY1307.", "Ana is on DY1307.", None),  # "now", but no job or home
])
def test_a_move_from_one_home_to_another_is_a_new_home(sentence: str, fact: str, state: str | None) -> None:
    assert changed_states(sentence, fact) == ([state] if state else [])


@pytest.mark.parametrize(("target", "states"), [
    ("Porto", ["home"]),  # a new home of Ana's, not a new job: the job is Rui's, at another entity
    ("Marés Logistics", ["job"]),
    ("Lisbon", []),  # where they moved from is no new value
])
def test_a_new_state_is_the_one_the_fact_gives_its_target(target: str, states: list[str]) -> None:
    moved = "Ana and Rui moved from Lisbon to Porto last month for Rui's new job at Marés Logistics."
    assert changed_states(moved, moved, [target]) == states


@pytest.mark.parametrize(("sentence", "states"), [
    ("Ana and Rui moved from Lisbon to Porto last month for Rui's new job.", {"home", "job"}),
    ("We moved to Porto last month.", {"home"}),
    ("I start at Kingsbridge Clinic next month.", {"job"}),
    ("I quit Globex and moved to Porto.", set()),  # an end as well: it may end more than a home
    ("Dr. Okafor switched me to Jardiance.", set()),
])
def test_a_sentence_that_says_only_a_new_job_or_home(sentence: str, states: set[str]) -> None:
    assert new_states_said(sentence) == states


@pytest.mark.parametrize(("sentence", "states"), [
    ("Lena Ortiz moved out at the end of January and went back to Cork.", {"home"}),
    ("Osei will step down on March 31.", {"job"}),
    ("I quit Globex and moved out of Lisbon.", {"home", "job"}),
    ("I didn't quit, I moved out.", {"home"}),  # the negated end is no end
    ("She no longer works there and moved out.", set()),  # an end of any kind: it may end anything
    ("We broke up.", set()),
])
def test_the_states_a_sentence_ends(sentence: str, states: set[str]) -> None:
    assert ended_states_said(sentence) == states


@pytest.mark.parametrize(("fact", "states"), [
    ("Lena Ortiz works the ticket desk at Harbourline Ferries.", {"job"}),
    ("Grace works as a nurse at St. Agnes.", {"job"}),
    ("Ana lives in Lisbon.", {"home"}),
    ("Maya works out at the gym.", set()),
    ("Aoife Brennan is Lena Ortiz's flatmate.", set()),
    ("Devika has been a data engineer at Quillfeather Analytics since 2021.", {"job"}),
    ("Lauren Hayes is a pharmacist at CareRx Pharmacy.", {"job"}),
    ("Emily is a patient at Bayview Medical Center.", set()),
    ("Ishaan is a student at Tallbridge Polytechnic.", set()),
])
def test_the_states_a_fact_holds(fact: str, states: set[str]) -> None:
    assert states_held(fact) == states


@pytest.mark.parametrize(("sentence", "thing", "ended"), [
    ("He sold Rågkorn in July, and the two of them are moving.", "Rågkorn", True),
    ("Nils sold the bakery Rågkorn last month.", "Rågkorn", True),
    ("We closed down the Elm Street shop.", "Elm Street shop", True),
    ("I sold my car to Ana.", "Ana", False),  # the buyer is not the thing sold
    ("Heliox sold its Lyon plant to Vitro SA.", "Vitro SA", False),
    ("I didn't sell Rågkorn.", "Rågkorn", False),
])
def test_selling_or_closing_a_thing_ends_it(sentence: str, thing: str, ended: bool) -> None:
    assert ends_the_thing(sentence, [thing]) is ended


@pytest.mark.parametrize(("fact", "stage"), [
    ("Tom is dating Ana.", 0), ("Ana is Tom's girlfriend.", 0), ("Nils is engaged to Maja Berg.", 1),
    ("Nils married Maja Berg, his fiancée.", 2), ("Rui is Ana's husband.", 2),
    ("Nils isn't married to Maja.", None), ("Ana lives in Lisbon.", None),
])
def test_the_stage_of_a_couple_a_fact_says(fact: str, stage: int | None) -> None:
    assert couple_stage(fact) == stage


@pytest.mark.parametrize(("text", "said"), [
    ("Ana and Rui moved from Lisbon to Porto last month for Rui's new job at Marés Logistics.",
     [("home", ("Ana", "Rui"), "Porto", "Ana and Rui moved from Lisbon to Porto"),
      ("job", ("Rui",), "Marés Logistics", "Rui's new job at Marés Logistics")]),
    ("I've just moved back to Lisbon.", [("home", ("I",), "Lisbon", "I've just moved back to Lisbon")]),
    ("Lucas's sister Ana moved to the Hague in May.", [("home", ("Ana",), "the Hague", "Ana moved to the Hague")]),
    ("Ana, Rui and Inês moved to Porto. I stayed.",
     [("home", ("Ana", "Rui", "Inês"), "Porto", "Ana, Rui and Inês moved to Porto")]),
    ("Dr. Okafor moved to St. Louis.", [("home", ("Dr. Okafor",), "St. Louis", "Dr. Okafor moved to St. Louis")]),
    ("I start my new role with Halden on Monday.", [("job", ("my",), "Halden", "my new role with Halden")]),
    ("Nils is moving to Gothenburg next month.", []),  # a plan, not a home yet
    ("I didn't move to Porto.", []),
    ("I helped Ana move to Porto.", []),
    ("I moved the meeting to Friday.", []),
])
def test_a_new_home_or_job_said_in_a_set_form(text: str, said: list[tuple[str, tuple[str, ...], str, str]]) -> None:
    assert [(v.state, v.holders, v.value, text[v.start:v.end]) for v in new_values_said(text)] == said
