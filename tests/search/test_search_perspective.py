"""A question about one speaker rewritten in that speaker's own voice (rules, no model)."""

from __future__ import annotations

import pytest

from chronomem.search.perspective import Perspective, named_speakers, perspective_query

SPEAKERS = {"Caroline", "Melanie"}
OTHERS = {"Jon", "Gina", "Maria", "Evan", "Jolene", "Audrey", "Dave", "Calvin", "Tim", "John", "Nate"}


@pytest.mark.parametrize(
    ("question", "rewrite"),
    [
        # an auxiliary before the name folds into "I"
        ("What activities does Melanie partake in?", "activities I partake in"),
        ("What did Caroline research?", "I researched"),  # did + verb: its past form
        ("Where did Caroline move from 4 years ago?", "I moved from"),  # the time expression goes
        ("Where has Melanie camped?", "I have camped"),
        ("What books has Melanie read?", "books I have read"),
        ("What career path has Caroline decided to persue?", "career path I have decided to persue"),
        ("In what ways is Caroline participating in the LGBTQ community?",
         "I am participating in the LGBTQ community"),
        ("How many times has Melanie gone to the beach in 2023?", "times I have gone to the beach"),
        ("What kind of art does Caroline make?", "art I make"),
        ("How many children does Melanie have?", "children I have"),
        ("When did Melanie go on a hike after the roadtrip?", "I went on a hike after the roadtrip"),  # irregular
        ("What did Melanie paint recently?", "I painted recently"),
        ("Would Caroline likely pursue writing as a career option?",
         "I would likely pursue writing as a career option"),  # a modal stays
        ("Does Melanie like to swim?", "I like to swim"),
        # the possessive is "my", the leading auxiliary of another subject goes
        ("What is Caroline's identity?", "my identity"),
        ("What do Melanie's kids like?", "my kids like"),
        ("What are Melanie's pets' names?", "my pets' names"),
        ("What is Melanie’s favourite book?", "my favourite book"),  # a typographic apostrophe
        # the name as an object is "me"; a subject without an auxiliary takes a first-person verb
        ("Who supports Caroline when she has a negative experience?", "supports me when I have a negative experience"),
        ("What symbols are important to Caroline?", "symbols are important to me"),
        ("What Melanie thinks about camping?", "I think about camping"),
        # a name followed by a verb reads as the subject: she met someone, and says "I met"
        ("Who did Caroline meet at the support group?", "I met at the support group"),
        # her/his before a noun are "my", elsewhere "me"
        ("What activities has Melanie done with her family?", "activities I have done with my family"),
        ("What do Melanie's family give her?", "my family give me"),
        ("What did Caroline make for her home to remind her of a trip?", "I made for my home to remind me of a trip"),
        ("How long did it take for Melanie to open her studio?", "it take for me to open my studio"),
        ("what did melanie paint?", "I painted"),  # any case
        ("When did Caroline say she would visit?", "I said I would visit"),  # a pronoun takes the verb too
    ],
)
def test_a_question_naming_one_speaker_is_rewritten_in_their_voice(question, rewrite):
    found = perspective_query(question, SPEAKERS)
    assert found is not None
    assert found.query == rewrite


def test_the_speaker_it_is_about_comes_with_the_rewrite():
    assert perspective_query("Where has Melanie camped?", SPEAKERS) == Perspective("Melanie", "I have camped")
    assert perspective_query("Why did Gina decide to start her own store?", OTHERS) == Perspective(
        "Gina", "I decided to start my own store"
    )


@pytest.mark.parametrize(
    "question",
    [
        "What subject have Caroline and Melanie both painted?",  # two speakers named: whose voice?
        "What book did Melanie read from Caroline's suggestion?",
        "What did I buy last week?",  # no speaker named
        "Which city have both Jean and John visited?",  # names that are not this conversation's speakers
        "What did Carolines say?",  # a name is a whole word
        "What did Melanie do?",  # nothing but the pronoun and an auxiliary left
    ],
)
def test_a_question_naming_no_speaker_or_several_is_not_rewritten(question):
    assert perspective_query(question, SPEAKERS) is None


def test_named_speakers_are_whole_words_in_any_case():
    assert named_speakers("what did MELANIE and caroline paint?", SPEAKERS) == ["Caroline", "Melanie"]
    assert named_speakers("What did Melanies paint?", SPEAKERS) == []
    assert named_speakers("Where does Anne Marie work?", {"Anne Marie", "Bob", ""}) == ["Anne Marie"]
