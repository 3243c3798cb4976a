"""The events a question names, one sub-query each (rules, no model)."""

from __future__ import annotations

import pytest

from chronomem.search.decompose import event_queries, focus_query, is_aggregate


@pytest.mark.parametrize(
    ("question", "events"),
    [
        ("Which book did I finish reading first, 'The Hate U Give' or 'The Nightingale'?",
         ["The Hate U Give", "The Nightingale"]),
        ("How many days passed between the day I fixed my mountain bike and the day I upgraded my pedals?",
         ["I fixed my mountain bike", "I upgraded my pedals"]),
        ("How much more did I spend per night in Hawaii compared to Tokyo?",
         ["How much more did I spend per night in Hawaii", "Tokyo"]),
        ("Which device did I set up first, the smart thermostat or the new router?",
         ["Which device did I set up first, the smart thermostat", "Which device did I set up first, the new router"]),
        ("What is the total cost of the new food bowl, measuring cup, and flea collar I got for Max?",
         ["What is the total cost of the new food bowl I got for Max",
          "What is the total cost of the new measuring cup I got for Max",
          "What is the total cost of the new flea collar I got for Max"]),  # the first item sets the width
        ("How long had I been bird watching when I attended the bird watching workshop?",
         ["How long had I been bird watching", "I attended the bird watching workshop"]),
        # a measure from one event to the other: the anchor ends where the question's own clause
        # begins ("did I", "did Rachel"), not at an auxiliary inside the anchor ("I was preparing")
        ("How many days before the team meeting I was preparing for did I attend the workshop?",
         ["the team meeting I was preparing for", "I attend the workshop"]),
        ("How many months before my anniversary did Rachel get engaged?", ["my anniversary", "Rachel get engaged"]),
        ("How long after moving to Denver did I adopt the cat?", ["moving to Denver", "I adopt the cat"]),
    ],
)
def test_each_named_event_becomes_a_sub_query(question, events):
    assert event_queries(question) == events


@pytest.mark.parametrize(
    "question",
    [
        "Where does Alice work?",
        "How many doctor's appointments did I go to in March?",
        "How many charity events did I do before the 'Run for the Cure' event?",  # one event named
        "What's my dog's name, I've forgotten?",  # apostrophes inside words are not quotes
        "How many days ago did I harvest my first batch of herbs?",  # an amount of time, one event
        "How many weeks before the trip?",  # no clause of its own after the anchor
    ],
)
def test_a_question_naming_one_event_is_searched_whole(question):
    assert event_queries(question) == []


@pytest.mark.parametrize(
    ("question", "focus"),
    [
        # the frame, the auxiliary and the time expression go; what each session mentions stays
        ("How many doctor's appointments did I go to in March?", "doctor's appointments I go to"),
        ("What is the order of the three trips I took in the past three months, from earliest to latest?",
         "trips I took"),  # the count is what the answer needs, not what the evidence says
        ("What is the total amount I spent on luxury items in the past few months?", "I spent on luxury items"),
        ("How many hours of jogging and yoga did I do last week?", "jogging and yoga I do"),
        ("How many days ago did I harvest my first batch of herbs?", "I harvest my first batch of herbs"),
        ("How many rare items do I have in total?", "rare items I have"),
        ("What is the total number of online courses I've completed?", "online courses I've completed"),
        ("I redeemed $12 cashback, how many times in total?", "I redeemed $12 cashback, how many times"),
        # other frames: "in what order", the imperative, and a count after "my"
        ("In what order did I go on my three trips over the last three months?", "I go on my trips"),
        ("Count the doctor visits I had in March.", "doctor visits I had"),
        ("List all the concerts I went to this year.", "concerts I went to"),
    ],
)
def test_the_focus_of_a_counting_or_ordering_question_is_what_its_evidence_mentions(question, focus):
    assert is_aggregate(question)
    assert focus_query(question) == focus


@pytest.mark.parametrize(
    "question",
    ["What breed is my dog?", "Where did I go hiking last weekend?", "Which device did I set up first?", "How many?",
     "Countries I visited with my two sisters?"],
)
def test_a_question_that_neither_counts_nor_orders_has_no_focus(question):
    assert focus_query(question) == ""
