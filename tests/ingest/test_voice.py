"""First-person facts become third-person ones naming the speaker, whatever model wrote them."""

from __future__ import annotations

import pytest

from chronomem.ingest.voice import in_third_person


@pytest.mark.parametrize(("fact", "expected"), [
    ("I just started a new job at Globex.", "Maya Patel just started a new job at Globex."),
    ("I live in Lisbon.", "Maya Patel lives in Lisbon."),
    ("I really like sushi.", "Maya Patel really likes sushi."),
    ("I'm allergic to peanuts.", "Maya Patel is allergic to peanuts."),
    ("I’ve been vegan since 2019.", "Maya Patel has been vegan since 2019."),
    ("I am a nurse at St. Mary's.", "Maya Patel is a nurse at St. Mary's."),
    ("I was born in Porto.", "Maya Patel was born in Porto."),
    ("I have two cats.", "Maya Patel has two cats."),
    ("I don't eat meat anymore.", "Maya Patel doesn't eat meat anymore."),
    ("I watch football.", "Maya Patel watches football."),
    ("I study law at Yale.", "Maya Patel studies law at Yale."),
    ("I go to the gym on Mondays.", "Maya Patel goes to the gym on Mondays."),
    ("I will fly to Tokyo on May 3.", "Maya Patel will fly to Tokyo on May 3."),
    ("I left Initech in March.", "Maya Patel left Initech in March."),
    ("I quit Initech.", "Maya Patel quit Initech."),
    ("I moved to Denver.", "Maya Patel moved to Denver."),
    ("My sister Ana lives in Lisbon.", "Maya Patel's sister Ana lives in Lisbon."),
    ("Dr. Okafor put me on metformin for my diabetes.",
     "Dr. Okafor put Maya Patel on metformin for Maya Patel's diabetes."),
    ("Ana and I met at Oxford.", "Ana and Maya Patel met at Oxford."),
    ("I and my brother own a bakery.", "Maya Patel and Maya Patel's brother own a bakery."),
    ("Kofi and I are taking the Eurostar to Paris.", "Kofi and Maya Patel are taking the Eurostar to Paris."),
    ("My sister and I were in Oslo.", "Maya Patel's sister and Maya Patel were in Oslo."),
])
def test_the_speakers_first_person_words_become_their_name(fact: str, expected: str) -> None:
    assert in_third_person(fact, "Maya Patel") == expected


@pytest.mark.parametrize("fact", [
    "Maya Patel works at Globex.",
    "We moved to Berlin.",  # "we" names people the text may not: left to the model
    "You recommended the book.",
    "World War I ended in 1918." * 0 + "Ana prefers tea.",
])
def test_text_without_the_first_person_singular_is_unchanged(fact: str) -> None:
    assert in_third_person(fact, "Maya Patel") == fact


def test_without_a_speaker_nothing_changes() -> None:
    assert in_third_person("I live in Lisbon.", None) == "I live in Lisbon."


def test_quoted_speech_stays_as_it_was_said() -> None:
    assert in_third_person('Alice said: I went to the Louvre.', "Alice") == "Alice said: I went to the Louvre."
    assert in_third_person('My motto is "I came, I saw".', "Ana") == 'Ana\'s motto is "I came, I saw".'
