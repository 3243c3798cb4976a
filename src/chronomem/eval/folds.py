"""K-fold selection of a search config: the out-of-fold figure is what a config chosen elsewhere scores.

A config (weights, thresholds) chosen on the very questions it is reported on overstates what it
will do on new ones. The honest protocol: split the questions into K folds — by conversation for
LoCoMo (questions of one conversation share its turns, so they must fall in the same fold), by
question for LongMemEval (each question has its own haystack) — and, for each fold, choose the
candidate that scores best on the *other* folds; the fold's questions are then scored with that
choice. Pooling the held-out scores gives the out-of-fold figure, reported beside the in-sample one
(the best candidate on all questions, chosen and scored on the same data).

Pure functions over per-question scores: the harness computes every candidate's scores once.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chronomem.errors import InvalidInputError

__all__ = ["FoldChoice", "QuestionScores", "assign_folds", "best_candidate", "cross_validate"]


@dataclass(frozen=True, slots=True)
class QuestionScores:
    """One question's metrics under each candidate config, and under the BM25 baseline."""

    fold_key: str  # what keeps questions together in a fold: a conversation, or the question itself
    kind: str  # its category or question type, for the per-kind tables
    by_candidate: Mapping[str, Mapping[str, float]]  # candidate name -> metric name -> value
    bm25: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class FoldChoice:
    fold: int
    candidate: str  # chosen on the other folds
    train_score: float  # its mean objective on the other folds
    questions: int  # held-out questions scored with it


def assign_folds(keys: Sequence[str], kinds: Sequence[str], folds: int) -> dict[str, int]:
    """Fold number (0…folds-1) of each distinct key, deterministic and balanced per kind: keys are
    dealt round-robin in sorted order within each kind, the deal continuing from kind to kind, so
    every fold gets its share of each question type. A key's kind is that of its first question."""
    distinct = list(dict.fromkeys(keys))
    if not 2 <= folds <= len(distinct):
        raise InvalidInputError(f"folds must be between 2 and the number of fold keys ({len(distinct)}), got {folds}")
    kind_of: dict[str, str] = {}
    for key, kind in zip(keys, kinds, strict=True):
        kind_of.setdefault(key, kind)
    by_kind: dict[str, list[str]] = defaultdict(list)
    for key in distinct:
        by_kind[kind_of[key]].append(key)
    assignment: dict[str, int] = {}
    dealt = 0
    for kind in sorted(by_kind):
        for key in sorted(by_kind[kind]):
            assignment[key] = dealt % folds
            dealt += 1
    return assignment


def _mean_objective(questions: Sequence[QuestionScores], candidate: str, objective: str) -> float:
    return statistics.fmean(q.by_candidate[candidate][objective] for q in questions)


def best_candidate(questions: Sequence[QuestionScores], candidates: Sequence[str], objective: str) -> tuple[str, float]:
    """The candidate with the best mean ``objective`` over ``questions`` (ties: the earlier one)."""
    if not questions or not candidates:
        raise InvalidInputError("choosing a candidate needs questions and candidates")
    scored = [(_mean_objective(questions, c, objective), -n, c) for n, c in enumerate(candidates)]
    score, _, name = max(scored)
    return name, score


def cross_validate(
    questions: Sequence[QuestionScores], candidates: Sequence[str], objective: str, folds: int
) -> tuple[list[tuple[QuestionScores, str]], list[FoldChoice]]:
    """Each question paired with the candidate chosen on the folds it is not in, and each fold's choice."""
    fold_of = assign_folds([q.fold_key for q in questions], [q.kind for q in questions], folds)
    held_out: list[tuple[QuestionScores, str]] = []
    choices = []
    for fold in range(folds):
        train = [q for q in questions if fold_of[q.fold_key] != fold]
        test = [q for q in questions if fold_of[q.fold_key] == fold]
        chosen, train_score = best_candidate(train, candidates, objective)
        held_out += [(q, chosen) for q in test]
        choices.append(FoldChoice(fold, chosen, train_score, len(test)))
    return held_out, choices
