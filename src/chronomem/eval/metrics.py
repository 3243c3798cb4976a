"""The benchmarks' LLM-free retrieval metrics, over ranked unit ids (turns or sessions).

Rankings are first collapsed to distinct units in rank order (:func:`distinct`): a hit that maps to
several units, or several hits mapping to one unit, never let k count more than k distinct units.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["distinct", "evidence_recall", "ndcg_any", "recall_all", "recall_any"]


def distinct(ranked_units: Iterable[str]) -> list[str]:
    """Units in order of first appearance."""
    return list(dict.fromkeys(ranked_units))


def evidence_recall(ranked_units: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """LoCoMo's recall accuracy: |evidence ∩ top-k distinct units| / |evidence|."""
    gold = set(evidence)
    if not gold:
        raise ValueError("evidence_recall needs at least one evidence id")
    return len(gold & set(distinct(ranked_units)[:k])) / len(gold)


def recall_any(ranked_units: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1 if any gold unit is in the top k distinct units (LongMemEval)."""
    top = set(distinct(ranked_units)[:k])
    return float(any(g in top for g in gold))


def recall_all(ranked_units: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1 if every gold unit is in the top k distinct units (LongMemEval's Recall@k)."""
    top = set(distinct(ranked_units)[:k])
    return float(all(g in top for g in gold))


def _dcg(relevances: Sequence[float]) -> float:
    # As LongMemEval's eval_utils.dcg: the first hit at full weight, the i-th (i ≥ 2) over log2(i).
    if not relevances:
        return 0.0
    return relevances[0] + sum(r / math.log2(i) for i, r in enumerate(relevances[1:], start=2))


def ndcg_any(ranked_units: Sequence[str], gold: Iterable[str], k: int, *, corpus_size: int | None = None) -> float:
    """LongMemEval's NDCG@k with binary relevance (its ``ndcg_any``); the ideal ranking puts every
    gold unit first (capped by ``corpus_size`` when the corpus holds fewer)."""
    gold_set = set(gold)
    actual = [1.0 if u in gold_set else 0.0 for u in distinct(ranked_units)[:k]]
    ideal_count = len(gold_set) if corpus_size is None else min(len(gold_set), corpus_size)
    ideal = _dcg([1.0] * min(ideal_count, k))
    return _dcg(actual) / ideal if ideal > 0 else 0.0
