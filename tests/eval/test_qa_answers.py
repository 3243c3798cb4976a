"""Gold answers against text without a model: written forms, answer_in_context, LoCoMo's F1, the stemmer."""

from __future__ import annotations

import pytest

from chronomem.eval.answers import answer_forms, answer_in_context, locomo_f1, normalize, number_words, token_f1
from chronomem.eval.porter import stem


def test_normalize_drops_case_punctuation_and_articles():
    assert normalize("The  Sugar-Factory, at Icon Park!") == "sugar factory at icon park"


@pytest.mark.parametrize(
    ("gold", "context"),
    [
        ("7 May 2023", "- (2023-05-07 13:56:00Z) Caroline: I went to the support group"),  # the block's own dates
        ("May 7, 2023", "we met on 7 May 2023"),
        ("7 May 2023", "it was May 7th, 2023"),
        ("May 2023", "- (2023-05-20 10:00:00Z) moved in"),
        ("3", "I have three kids"),
        ("three", "I have 3 kids"),
        ("2nd", "she came second"),
        ("Pottery, camping and painting", "I like painting. Camping is fun; also pottery!"),
        ("The Sugar Factory", "we went to the sugar factory at Icon Park"),
    ],
)
def test_gold_answers_are_found_in_their_written_forms(gold, context):
    assert answer_in_context(gold, context)


@pytest.mark.parametrize(
    ("gold", "context"),
    [
        ("Biscuit", "biscuits for breakfast"),  # whole words only
        ("7 May 2023", "- (2023-05-08 13:56:00Z) the next day"),
        ("3", "I have 13 kids"),
        ("Pottery, camping and painting", "I like painting and camping"),  # every item of a list
    ],
)
def test_near_misses_are_not_found(gold, context):
    assert not answer_in_context(gold, context)


def test_forms_of_a_date_and_a_number():
    assert {"7 may 2023", "may 7 2023", "2023 05 07", "7th may 2023"} <= answer_forms("7 May 2023")
    assert answer_forms("42") == {"42", "forty two"}
    assert number_words(21, ordinal=True) == "twenty first" and number_words(101) is None


def test_porter_stems_as_the_published_examples():
    words = ["caresses", "ponies", "running", "hopping", "relational", "conditional", "generalization"]
    words += ["happy", "filing"]
    assert [stem(w) for w in words] == ["caress", "poni", "run", "hop", "relat", "condit", "gener", "happi", "file"]


def test_token_f1_counts_shared_stemmed_words():
    assert token_f1("He went running", "running") == pytest.approx(0.5)  # "he", "went", "run" against "run"
    assert token_f1("The runs", "run") == 1.0  # articles dropped, stems equal
    assert token_f1("Paris", "Berlin") == 0.0


def test_locomo_f1_by_category():
    assert locomo_f1("Paris, Berlin", "Berlin, Rome", 1) == pytest.approx(0.5)  # each gold item's best match
    assert locomo_f1("a dog", "dog; a puppy", 3) == 1.0  # open-domain: the gold part before ";"
    assert locomo_f1("No information available.", "anything", 5) == 1.0
    assert locomo_f1("Berlin", "anything", 5) == 0.0
