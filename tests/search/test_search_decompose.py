"""The events a question names, one sub-query each (rules, no model)."""

from __future__ import annotations

import pytest

from chronomem.search.decompose import event_queries


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
    ],
)
def test_a_question_naming_one_event_is_searched_whole(question):
    assert event_queries(question) == []
