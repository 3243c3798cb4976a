"""The search configs the harness runs: the defaults of each benchmark, and the candidates that
``--folds`` chooses among.

The candidates vary what was tuned by hand on the dev files — the RRF constant, BM25's weight
against the embedding, and the weights of the time and conversation signals (24 in all) — so the
out-of-fold figure measures how much that tuning overfits. Every mechanism (signals, time windows,
query decomposition) is on in each of them.
"""

from __future__ import annotations

from chronomem.search.config import Method, ScopeConfig, SearchConfig, TimeMode

__all__ = [
    "CANDIDATES", "DEPTH", "EVAL_CONFIG", "LME_CONFIG", "LOCOMO_CANDIDATES", "MULTIHOP", "REPORTS", "candidate",
]

DEPTH = 50  # results fetched per question: the largest k

# Episodes only (what exists without an LLM-built graph): cosine + BM25 fused by RRF, plus the
# episode signals. Tuned on locomo10 (recall@10, categories 1–4): rrf_k 60 → 20 +3 points,
# time_boost 1 → 2 +1, conversation_boost 1 → 1.5 +0.5, reply signal +1.9; 200 candidates per method.
_EPISODES_ONLY = SearchConfig(
    facts=None, entities=None, communities=None,
    episodes=ScopeConfig(
        methods=(Method.COSINE, Method.BM25), limit=DEPTH * 2, candidates=DEPTH * 4, rrf_k=20.0
    ),
    time_mode=TimeMode.BOOST,
    time_boost=2.0,
    conversation_boost=1.5,
)

# LoCoMo's multi-hop mechanisms: the hop over names and keywords from the best turns to turns of
# other sessions (chronomem.search.hops), the coverage signal for questions asking for a list
# (chronomem.search.lists) and the other forms of the query's words in full text
# (chronomem.text.wordforms), the messages that only ask put last (chronomem.search.asking) and
# the turns of a speaker the question does not name moved down (signals.unnamed_speakers_down),
# and the question in the voice of the speaker it names searched beside it at weight 3
# (chronomem.search.perspective; bench/eval_hops.py chose 3 among 0, 1, 2 and 3 out of fold in
# four folds of five, 2026-12-01, and chooses again among 0, 1, 2, 3 and 4).
# LoCoMo only: LongMemEval was not measured with them.
MULTIHOP = {
    "hop_boost": 0.25, "list_coverage_boost": 1.0, "word_forms": True, "asking_last": True,
    "unnamed_speaker_offset": 6, "perspective_weight": 3.0,
}

# LoCoMo's default: the episodes-only config with the multi-hop mechanisms.
EVAL_CONFIG = _EPISODES_ONLY.model_copy(update=MULTIHOP)


def candidate(
    rrf_k: float, bm25_weight: float, time_boost: float = 2.0, conversation_boost: float = 1.5,
    *, base: SearchConfig = _EPISODES_ONLY,
) -> SearchConfig:
    """``base`` (default: the episodes-only config, without any benchmark's mechanisms) with other weights."""
    episodes = base.episodes
    assert episodes is not None
    return base.model_copy(
        update={
            "episodes": episodes.model_copy(update={"rrf_k": rrf_k, "method_weights": {Method.BM25: bm25_weight}}),
            "time_boost": time_boost,
            "conversation_boost": conversation_boost,
        }
    )


# LongMemEval's questions ask what the user did ("the three trips I took in the past three
# months"); the sessions that report it ("I just got back from a solo camping trip") are lifted
# above those that plan it (chronomem.search.reports). Weight 2 chosen on the 58 dev questions
# (1: no question changes; 3: a multi-session one is lost); bench/eval_reports.py measures it with
# and without, out of fold.
REPORTS = {"report_boost": 2.0}
_LME_BASE = _EPISODES_ONLY.model_copy(update=REPORTS)

# LongMemEval's user turns are long and chatty: word overlap misleads more often than on LoCoMo's
# short turns, so BM25 counts half (chosen on the 58 dev questions; ``--folds`` says how well that
# choice holds on questions it was not chosen on).
LME_CONFIG = candidate(10.0, 0.5, base=_LME_BASE)

_GRID = [(k, w, t, c) for k in (10.0, 20.0, 60.0) for w in (0.5, 1.0) for t in (1.0, 2.0) for c in (1.0, 1.5)]

CANDIDATES: dict[str, SearchConfig] = {
    f"rrf_k={k:g},bm25={w:g},time={t:g},conversation={c:g}": candidate(k, w, t, c, base=_LME_BASE)
    for k, w, t, c in _GRID
}

# LoCoMo's grid: the same weights, with the multi-hop mechanisms on (their own weights are not
# varied, to keep the grid small; bench/eval_hops.py measures each mechanism with and without).
LOCOMO_CANDIDATES: dict[str, SearchConfig] = {
    f"rrf_k={k:g},bm25={w:g},time={t:g},conversation={c:g}": candidate(k, w, t, c, base=EVAL_CONFIG)
    for k, w, t, c in _GRID
}
