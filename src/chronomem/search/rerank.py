"""ρ: rerankers (paper §3.2). Pure functions over ids, scores and vectors; no I/O.

Every reranker returns ``[(id, score), …]`` best first, with a score whose meaning it documents.
Ties keep the order the candidates came in, so a reranker applied after RRF refines the fused order
rather than scrambling it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np

__all__ = [
    "Ranked",
    "cut_below",
    "entity_distances_to_fact_distances",
    "episode_mentions",
    "lead_with_each",
    "mmr",
    "node_distance",
    "order_by_scores",
    "rrf",
]

K = TypeVar("K", bound=Hashable)
Ranked = list[tuple[str, float]]


def rrf(
    rankings: Sequence[Sequence[K]], *, k: float = 60.0, weights: Sequence[float] | None = None
) -> list[tuple[K, float]]:
    """Reciprocal rank fusion: ``score(d) = Σ_i w_i / (k + rank_i(d))``, ranks counted from 1.

    A ranking may repeat an id; only its first (best) position counts. Equal scores keep the order
    of first appearance across the rankings.
    """
    if k <= 0:
        raise ValueError("rrf k must be positive")
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise ValueError("rrf needs one weight per ranking")
    scores: dict[K, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[K] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return order_by_scores(list(scores), scores)


def lead_with_each(fused: Sequence[tuple[K, float]], rankings: Sequence[Sequence[K]]) -> list[tuple[K, float]]:
    """``fused`` with the best of each of ``rankings`` moved up behind the fused first: the fused
    first, then each ranking's first (in the order of ``rankings``, once each), then the rest in
    fused order. Each promoted item keeps its fused score; ids missing from ``fused`` are skipped.

    RRF of a whole question and of each event it names can still leave an event whose words are
    common, or whose evidence is worded apart from the question, outside the top k; a question
    about two events needs both. Promoting each event's own best costs at most one place per event.
    """
    score = dict(fused)
    firsts: list[K] = [fused[0][0]] if fused else []
    firsts += [r[0] for r in rankings if r and r[0] in score]
    leaders = list(dict.fromkeys(firsts))
    taken = set(leaders)
    return [(i, score[i]) for i in leaders] + [(i, s) for i, s in fused if i not in taken]


def order_by_scores(ids: Sequence[K], scores: Mapping[K, float]) -> list[tuple[K, float]]:
    """``ids`` sorted by score, best first; ties (and missing scores, last) keep the given order."""
    position = {item: i for i, item in enumerate(ids)}
    present = [i for i in ids if i in scores]
    missing = [i for i in ids if i not in scores]
    present.sort(key=lambda item: (-scores[item], position[item]))
    return [(i, float(scores[i])) for i in present] + [(i, float("-inf")) for i in missing]


def cut_below(ranked: Sequence[tuple[K, float]], min_score: float | None) -> list[tuple[K, float]]:
    """Drop results scoring below ``min_score`` (``None`` keeps everything)."""
    if min_score is None:
        return list(ranked)
    return [(i, s) for i, s in ranked if s >= min_score]


def mmr(
    query_vector: np.ndarray,
    candidate_ids: Sequence[str],
    vectors: Mapping[str, np.ndarray],
    *,
    lambda_: float = 0.5,
    limit: int | None = None,
) -> Ranked:
    """Maximal marginal relevance, greedy and iterative.

    Each step picks the candidate maximizing ``λ·sim(q, d) − (1 − λ)·max_{s∈selected} sim(d, s)``
    (the redundancy term is 0 for the first pick); the score reported is that value at the time of
    the pick, in [-1, 1]. Candidates without a vector cannot be compared: they follow the others in
    their given order with score -1.
    """
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError("mmr lambda must be within [0, 1]")
    with_vec = [c for c in dict.fromkeys(candidate_ids) if c in vectors]
    without = [c for c in dict.fromkeys(candidate_ids) if c not in vectors]
    limit = len(with_vec) + len(without) if limit is None else limit
    picked: Ranked = []
    if with_vec:
        matrix = np.stack([np.asarray(vectors[c], dtype=np.float32) for c in with_vec])
        relevance = matrix @ np.asarray(query_vector, dtype=np.float32)
        redundancy = np.full(len(with_vec), -np.inf, dtype=np.float32)  # max similarity to the picked
        open_ = np.ones(len(with_vec), dtype=bool)
        for _ in range(min(limit, len(with_vec))):
            penalty = np.where(np.isfinite(redundancy), redundancy, 0.0)
            value = lambda_ * relevance - (1.0 - lambda_) * penalty
            value = np.where(open_, value, -np.inf)
            best = int(np.argmax(value))  # argmax takes the first of equals: the given order wins ties
            picked.append((with_vec[best], float(value[best])))
            open_[best] = False
            redundancy = np.maximum(redundancy, matrix @ matrix[best])
    picked.extend((c, -1.0) for c in without)
    return picked[:limit]


def episode_mentions(ranked_ids: Sequence[str], mention_counts: Mapping[str, int]) -> Ranked:
    """Most cited first: score = how many episodes mention the entity or support the fact.

    Equal counts keep the given (usually fused) order; unknown ids count 0.
    """
    counts = {i: float(mention_counts.get(i, 0)) for i in ranked_ids}
    return order_by_scores(list(dict.fromkeys(ranked_ids)), counts)


def node_distance(ranked_ids: Sequence[str], hops: Mapping[str, int]) -> Ranked:
    """Closest to the centre first: score = 1 / (1 + shortest-path hops).

    Ids missing from ``hops`` were not reached: they follow every reached one, in the given order,
    with score 0.
    """
    scores = {i: 1.0 / (1.0 + hops[i]) if i in hops else 0.0 for i in ranked_ids}
    return order_by_scores(list(dict.fromkeys(ranked_ids)), scores)


def entity_distances_to_fact_distances(
    fact_entities: Mapping[str, Sequence[str]], entity_hops: Mapping[str, int]
) -> dict[str, int]:
    """A fact is as far from the centre as its nearest participant (a fact touching it is at 0)."""
    result: dict[str, int] = {}
    for fact_id, entity_ids in fact_entities.items():
        reached = [entity_hops[e] for e in entity_ids if e in entity_hops]
        if reached:
            result[fact_id] = min(reached)
    return result
