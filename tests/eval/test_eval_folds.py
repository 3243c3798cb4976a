"""K-fold selection: each fold is scored with the candidate chosen on the other folds."""

from __future__ import annotations

import pytest

from chronomem.errors import InvalidInputError
from chronomem.eval.folds import QuestionScores, assign_folds, best_candidate, cross_validate


def _question(key: str, kind: str, **scores: float) -> QuestionScores:
    return QuestionScores(key, kind, {name: {"r": value} for name, value in scores.items()}, {"r": 0.0})


def test_folds_are_balanced_per_kind_and_keep_a_key_together():
    keys = ["c1", "c1", "c2", "c3", "c4", "c5", "c6"]
    kinds = ["a", "a", "a", "a", "b", "b", "b"]
    folds = assign_folds(keys, kinds, 3)
    assert set(folds) == {"c1", "c2", "c3", "c4", "c5", "c6"}  # one fold per key: c1's questions stay together
    assert sorted(folds[k] for k in ("c1", "c2", "c3")) == [0, 1, 2]  # kind a spread over every fold
    assert sorted(folds.values()) == [0, 0, 1, 1, 2, 2]


def test_folds_need_two_to_the_number_of_keys():
    with pytest.raises(InvalidInputError):
        assign_folds(["a", "b"], ["x", "x"], 3)
    with pytest.raises(InvalidInputError):
        assign_folds(["a", "b"], ["x", "x"], 1)


def test_best_candidate_prefers_the_earlier_on_ties():
    questions = [_question("q1", "a", first=1.0, second=1.0), _question("q2", "a", first=0.0, second=0.0)]
    assert best_candidate(questions, ["first", "second"], "r") == ("first", 0.5)
    assert best_candidate(questions, ["second", "first"], "r")[0] == "second"


def test_a_candidate_that_wins_only_in_one_fold_is_not_credited_there():
    # "lucky" is perfect on q1 only and poor elsewhere; "steady" is good everywhere. In-sample the
    # best is steady; out of fold, q1's fold is scored with the choice made on q2 and q3 (steady), so
    # lucky's one win never reaches the out-of-fold figure.
    questions = [
        _question("q1", "a", lucky=1.0, steady=0.6),
        _question("q2", "a", lucky=0.0, steady=0.7),
        _question("q3", "a", lucky=0.1, steady=0.8),
    ]
    held_out, choices = cross_validate(questions, ["lucky", "steady"], "r", 3)
    assert [chosen for _, chosen in held_out] == ["steady", "steady", "steady"]
    assert [c.questions for c in choices] == [1, 1, 1]
    assert choices[0].train_score == pytest.approx(0.75)  # steady on q2 and q3


def test_overfitting_shows_as_a_lower_out_of_fold_figure():
    # Each question favours a different candidate: in-sample picks the best on average, out of fold
    # each question is scored by a choice its own score did not influence.
    questions = [
        _question("q1", "a", x=1.0, y=0.0, z=0.5),
        _question("q2", "a", x=0.0, y=1.0, z=0.5),
        _question("q3", "a", x=1.0, y=0.0, z=0.5),
        _question("q4", "a", x=0.0, y=1.0, z=0.5),
    ]
    held_out, _ = cross_validate(questions, ["x", "y", "z"], "r", 4)
    out_of_fold = sum(q.by_candidate[c]["r"] for q, c in held_out) / len(held_out)
    _, in_sample = best_candidate(questions, ["x", "y", "z"], "r")
    assert in_sample == pytest.approx(0.5)
    assert out_of_fold == pytest.approx(0.0)  # leaving a question out tips the choice against it
