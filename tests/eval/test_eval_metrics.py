"""The benchmarks' retrieval metrics on hand-made rankings."""

from __future__ import annotations

import math

import pytest

from chronomem.eval.bm25 import BM25
from chronomem.eval.metrics import distinct, evidence_recall, ndcg_any, recall_all, recall_any


def test_k_counts_distinct_units_so_repeats_cannot_inflate_recall():
    ranked = ["D1:1", "D1:1", "D1:1", "D2:5", "D3:3"]
    assert distinct(ranked) == ["D1:1", "D2:5", "D3:3"]
    assert evidence_recall(ranked, ["D3:3"], k=3) == 1.0  # the third *distinct* turn
    assert evidence_recall(ranked, ["D3:3"], k=2) == 0.0


def test_evidence_recall_is_the_found_fraction():
    assert evidence_recall(["a", "b", "c"], ["a", "z"], k=3) == 0.5
    assert evidence_recall(["a", "b", "c"], ["c"], k=2) == 0.0
    with pytest.raises(ValueError):
        evidence_recall(["a"], [], k=1)


def test_recall_all_needs_every_gold_unit_recall_any_one():
    ranked = ["s1", "s9", "s2", "s3"]
    assert recall_all(ranked, ["s1", "s2"], k=3) == 1.0
    assert recall_all(ranked, ["s1", "s3"], k=3) == 0.0
    assert recall_any(ranked, ["s1", "s3"], k=3) == 1.0
    assert recall_any(ranked, ["s7"], k=4) == 0.0


def test_ndcg_matches_longmemeval_formula():
    assert ndcg_any(["g"], ["g"], k=10) == 1.0
    assert ndcg_any(["x", "g"], ["g"], k=10) == 1.0  # LongMemEval's dcg weighs ranks 1 and 2 alike
    assert ndcg_any(["x", "y", "g"], ["g"], k=10) == pytest.approx(1 / math.log2(3))
    two_gold = ndcg_any(["g1", "x", "g2"], ["g1", "g2"], k=10)
    assert two_gold == pytest.approx((1 + 1 / math.log2(3)) / 2)
    assert ndcg_any(["x", "g"], ["g"], k=1) == 0.0
    assert ndcg_any(["x"], ["g"], k=10, corpus_size=0) == 0.0


def test_bm25_prefers_rare_matching_words_and_shorter_documents():
    docs = ["the cat sat on the mat", "the dog", "a cat and a cat and a cat in a very long hat story today"]
    bm25 = BM25(docs)
    assert bm25.rank("dog")[0] == 1
    assert bm25.rank("cat mat")[0] == 0
    assert bm25.scores("unicorn") == [0.0, 0.0, 0.0]
