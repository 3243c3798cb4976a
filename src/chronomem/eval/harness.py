"""The retrieval evaluation harness: LoCoMo and LongMemEval, LLM-free, with a BM25 baseline beside.

Called by ``chronomem eval`` and ``bench/eval_retrieval.py``::

    report = await run_eval(locomo="locomo10.json", longmemeval="longmemeval_s_dev.json.gz", folds=5)
    for line in report.lines():
        print(line)  # "name: value"

For each benchmark group (a LoCoMo conversation, a LongMemEval question's haystack) the episodes are
written straight through the store with their real timestamps and vectors (no LLM, no extraction;
the benchmark's one mapping to episodes, :mod:`chronomem.datasets`, the one ``chronomem import``
uses, plus session documents; see :mod:`chronomem.eval.ingest`). Each question is then searched through the facade
(:meth:`chronomem.Chronomem.search`) over the episodes scope, with the question's date as "now".
Hits map back to units (LoCoMo turns, LongMemEval sessions) through provenance — an episode's own
unit, a fact's source episodes — and k counts distinct units in rank order, as the official
LongMemEval code does.

Metrics (the official LLM-free ones):

- LoCoMo: recall of the evidence dia_ids at k = 5, 10, 25, 50, categories 1–4, overall and per
  category (``locomo_recall_at_10_single_hop`` …), in percent.
- LongMemEval: session-level ``recall_all@5/10``, ``recall_any@5/10``, ``ndcg_any@10``, overall and
  per question type, ``_abs`` questions skipped.

Beside them, LLM-free, what a reader model would get: ``<benchmark>_answer_in_context``, the share
of questions whose gold answer (normalised, numbers and dates in their written forms; see
:mod:`chronomem.eval.answers`) is in the context block the default config's hits make at the
default token budget (:func:`context_block`), and ``<benchmark>_context_tokens_mean``; each with a
``_bm25`` twin, BM25's best turns in a block of the same budget. LongMemEval's preference questions
(a rubric, not an answer) are not counted.

Every metric has a ``_bm25`` twin: plain Okapi BM25 over single turns ("speaker: text") for LoCoMo
and over whole sessions' user text for LongMemEval, the baselines the benchmarks' papers report.

With ``folds=K`` every candidate of the benchmark's grid (:data:`~chronomem.eval.configs.LOCOMO_CANDIDATES`,
:data:`~chronomem.eval.configs.CANDIDATES` for LongMemEval) is run as well, and
each metric gets an ``_oof`` twin (each fold scored with the candidate chosen on the other folds,
see :mod:`chronomem.eval.folds`) and an ``_in_sample`` twin (the best candidate on all questions).
"""

from __future__ import annotations

import contextlib
import re
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path

from chronomem.config.settings import Settings
from chronomem.datasets.locomo import CATEGORY_NAMES, LocomoSample, load_locomo, locomo_group
from chronomem.datasets.longmemeval import LmeQuestion, lme_group, load_longmemeval
from chronomem.domain import Episode
from chronomem.embed.base import Embedder
from chronomem.embed.cache import CachedEmbedder
from chronomem.errors import InvalidInputError
from chronomem.eval.answers import answer_in_context
from chronomem.eval.bm25 import BM25
from chronomem.eval.configs import CANDIDATES, DEPTH, EVAL_CONFIG, LME_CONFIG, LOCOMO_CANDIDATES
from chronomem.eval.folds import QuestionScores, assign_folds, best_candidate, cross_validate
from chronomem.eval.ingest import indexed_lme, indexed_locomo, ingest
from chronomem.eval.metrics import distinct, evidence_recall, ndcg_any, recall_all, recall_any
from chronomem.llm.base import LanguageModel
from chronomem.memory import Chronomem
from chronomem.providers.tokens import estimate_tokens
from chronomem.search.config import SearchConfig
from chronomem.search.context import DEFAULT_TOKEN_BUDGET, build_context
from chronomem.search.rerank import rrf
from chronomem.search.searcher import SearchResults

__all__ = [
    "DEFAULT_CACHE_DIR", "EVAL_CONFIG", "LME_CONFIG", "ContextCheck", "EvalReport", "context_block", "open_memory",
    "ranked_units", "run_eval", "units_of",
]

DEFAULT_CACHE_DIR = Path("bench/out/eval-cache")
LOCOMO_KS = (5, 10, 25, 50)
LME_KS = (5, 10)
DEFAULT = "default"  # the candidate name of the benchmark's own config
LOCOMO_OBJECTIVE = "recall_at_10"  # what --folds maximizes on the training folds
LME_OBJECTIVE = "recall_all_at_5"

Progress = Callable[[str], None]
Scores = dict[str, float]


@dataclass
class EvalReport:
    """Named metrics in a stable order; ``lines()`` renders them as ``name: value``."""

    metrics: dict[str, float | int | str] = field(default_factory=dict)

    def add(self, name: str, value: float | int | str) -> None:
        self.metrics[name] = value

    def lines(self) -> Iterator[str]:
        for name, value in self.metrics.items():
            yield f"{name}: {value:.4f}" if isinstance(value, float) else f"{name}: {value}"


async def ranked_units(
    memory: Chronomem, group: str, question: str, now: datetime, config: SearchConfig
) -> list[str]:
    """Units of the hits in rank order. An episode counts for its own unit, a fact for the units of
    the episodes it came from; with both scopes searched, the two unit rankings are fused by RRF."""
    return await units_of(memory, group, await memory.search(group, question, config=config, now=now))


async def units_of(memory: Chronomem, group: str, results: SearchResults) -> list[str]:
    """:func:`ranked_units` of search results already in hand."""
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


async def _score_candidates(
    memory: Chronomem, group: str, question: str, now: datetime, configs: Mapping[str, SearchConfig],
    score: Callable[[list[str]], Scores],
) -> tuple[dict[str, Scores], str]:
    """Each config's scores, and the context block the default config's hits make."""
    scores, context = {}, ""
    for name, c in configs.items():
        results = await memory.search(group, question, config=c, now=now)
        scores[name] = score(await units_of(memory, group, results))
        if name == DEFAULT:
            context = context_block(results, now)
    return scores, context


def context_block(results: SearchResults, now: datetime, token_budget: int = DEFAULT_TOKEN_BUDGET) -> str:
    """The context block of search results at the default token budget: what
    :meth:`~chronomem.Chronomem.context` returns for the same search with episodes included."""
    return build_context(
        [f for f, _ in results.facts], [e for e, _ in results.entities], [c for c, _ in results.communities],
        [e for e, _ in results.episodes], token_budget=token_budget, now=now,
    )


@dataclass(frozen=True, slots=True)
class ContextCheck:
    """Whether a question's gold answer is in chronomem's context block, and in BM25's of the same budget."""

    kind: str
    ours: bool
    bm25: bool
    ours_tokens: int
    bm25_tokens: int


def _bm25_context(bm25: BM25, episodes: Sequence[Episode], question: str, now: datetime) -> str:
    """The context block of BM25's best episodes (as many as the default budget holds)."""
    ranked = [episodes[i] for i in bm25.rank(question, DEPTH * 2)]
    return build_context([], [], episodes=ranked, token_budget=DEFAULT_TOKEN_BUDGET, now=now)


def _check(kind: str, gold: str, ours: str, theirs: str) -> ContextCheck:
    return ContextCheck(kind, answer_in_context(gold, ours), answer_in_context(gold, theirs),
                        estimate_tokens(ours), estimate_tokens(theirs))


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name)


# -- LoCoMo -----------------------------------------------------------------------------------------


def _locomo_scores(ranked: list[str], evidence: tuple[str, ...]) -> Scores:
    return {f"recall_at_{k}": evidence_recall(ranked, evidence, k) for k in LOCOMO_KS}


async def _eval_locomo(
    samples: list[LocomoSample], memory: Chronomem, configs: Mapping[str, SearchConfig], log: Progress,
    checks: list[ContextCheck] | None = None,
) -> list[QuestionScores]:
    """Every question's scores; ``checks`` (when given) collects each question's :class:`ContextCheck`."""
    scored = []
    for sample in samples:
        group = locomo_group(sample)
        indexed = indexed_locomo(sample)
        await ingest(memory.store, memory.embedder, group, indexed)
        questions = [q for q in sample.questions if q.category in (1, 2, 3, 4) and q.evidence]
        await memory.embedder.embed([q.question for q in questions])  # one batch; the searcher then hits the cache
        dia_ids = [t.dia_id for t in sample.turns]
        bm25 = BM25([f"{t.speaker}: {t.text}" for t in sample.turns])
        turns = [i.episode for i in indexed[: len(sample.turns)]]
        for q in questions:
            ours, context = await _score_candidates(
                memory, group, q.question, sample.last_date, configs,
                partial(_locomo_scores, evidence=q.evidence),
            )
            baseline = [dia_ids[i] for i in bm25.rank(q.question, DEPTH)]
            scored.append(QuestionScores(sample.sample_id, CATEGORY_NAMES[q.category], ours,
                                         _locomo_scores(baseline, q.evidence)))
            if checks is not None:
                checks.append(_check(CATEGORY_NAMES[q.category], q.answer, context,
                                     _bm25_context(bm25, turns, q.question, sample.last_date)))
        log(f"locomo {sample.sample_id}: {len(questions)} questions")
    return scored


def _locomo_metrics(rows: Sequence[tuple[str, Mapping[str, float]]], suffix: str) -> dict[str, float | int]:
    """Percent recall at each k over all questions, and at 10 per category. ``rows``: (category, scores)."""
    metrics: dict[str, float | int] = {}
    for k in LOCOMO_KS:
        metrics[f"locomo_recall_at_{k}{suffix}"] = 100 * _mean([s[f"recall_at_{k}"] for _, s in rows])
    for name in CATEGORY_NAMES.values():
        in_category = [s["recall_at_10"] for kind, s in rows if kind == name]
        if in_category:
            metrics[f"locomo_recall_at_10_{name}{suffix}"] = 100 * _mean(in_category)
    return metrics


# -- LongMemEval ------------------------------------------------------------------------------------


def _lme_scores(ranked: list[str], gold: tuple[str, ...], corpus_size: int) -> Scores:
    scores = {}
    for k in LME_KS:
        scores[f"recall_all_at_{k}"] = recall_all(ranked, gold, k)
        scores[f"recall_any_at_{k}"] = recall_any(ranked, gold, k)
    scores["ndcg_any_at_10"] = ndcg_any(ranked, gold, 10, corpus_size=corpus_size)
    return scores


async def _eval_longmemeval(
    questions: list[LmeQuestion], memory: Chronomem, configs: Mapping[str, SearchConfig], log: Progress,
    checks: list[ContextCheck] | None = None,
) -> list[QuestionScores]:
    """Every answerable question's scores; ``checks`` as :func:`_eval_locomo`'s (preference
    questions, whose gold answer is a rubric, have none)."""
    scored = []
    for number, q in enumerate(questions, start=1):
        if q.is_abstention:
            continue
        group = lme_group(q)
        indexed = indexed_lme(q)
        await ingest(memory.store, memory.embedder, group, indexed)
        session_ids = [s.session_id for s in q.sessions]
        ours, context = await _score_candidates(
            memory, group, q.question, q.question_date, configs,
            partial(_lme_scores, gold=q.answer_session_ids, corpus_size=len(session_ids)),
        )
        bm25 = BM25([s.user_text for s in q.sessions])
        baseline = [session_ids[i] for i in bm25.rank(q.question, DEPTH)]
        scored.append(QuestionScores(q.question_id, q.question_type, ours,
                                     _lme_scores(baseline, q.answer_session_ids, len(session_ids))))
        if checks is not None and q.question_type != "single-session-preference":
            pieces = [i.episode for i in indexed if not i.episode.metadata.get("session_document")]
            turn_bm25 = BM25([e.content for e in pieces])
            checks.append(_check(q.question_type.replace("-", "_"), q.answer, context,
                                 _bm25_context(turn_bm25, pieces, q.question, q.question_date)))
        if number % 10 == 0:
            log(f"longmemeval: {number}/{len(questions)} questions")
    return scored


_LME_METRICS = ("recall_all_at_5", "recall_all_at_10", "recall_any_at_5", "recall_any_at_10", "ndcg_any_at_10")


def _lme_metrics(rows: Sequence[tuple[str, Mapping[str, float]]], suffix: str) -> dict[str, float | int]:
    """Every metric over all questions, and recall_all@5/10 per question type. ``rows``: (type, scores)."""
    metrics: dict[str, float | int] = {}
    for name in _LME_METRICS:
        metrics[f"lme_{name}{suffix}"] = _mean([s[name] for _, s in rows])
    for name in ("recall_all_at_5", "recall_all_at_10"):
        for qtype in sorted({kind for kind, _ in rows}):
            of_type = [s[name] for kind, s in rows if kind == qtype]
            metrics[f"lme_{name}_{qtype.replace('-', '_')}{suffix}"] = _mean(of_type)
    return metrics


# -- the report -------------------------------------------------------------------------------------

_Metrics = Callable[[Sequence[tuple[str, Mapping[str, float]]], str], dict[str, float | int]]


def _report_benchmark(
    report: EvalReport, prefix: str, scored: Sequence[QuestionScores], metrics: _Metrics,
    objective: str, folds: int | None, scale: float = 1.0,
) -> None:
    """The default config's figures and BM25's; with folds, the out-of-fold and in-sample ones too
    (and each fold's objective, times ``scale``: LoCoMo's figures are percent)."""
    report.add(f"{prefix}_questions", len(scored))
    twins = {"": metrics([(q.kind, q.by_candidate[DEFAULT]) for q in scored], "")}
    if folds is not None and scored:
        names = list(scored[0].by_candidate)
        held_out, choices = cross_validate(scored, names, objective, folds)
        twins["_oof"] = metrics([(q.kind, q.by_candidate[chosen]) for q, chosen in held_out], "_oof")
        best, _ = best_candidate(scored, names, objective)
        twins["_in_sample"] = metrics([(q.kind, q.by_candidate[best]) for q in scored], "_in_sample")
        report.add(f"{prefix}_folds", folds)
        report.add(f"{prefix}_in_sample_config", best)
        for choice in choices:
            report.add(f"{prefix}_fold_{choice.fold + 1}_config", choice.candidate)
        _report_folds(report, prefix, held_out, objective, folds, scale)
    twins["_bm25"] = metrics([(q.kind, q.bm25) for q in scored], "_bm25")
    for name in twins[""]:  # each metric, then its twins
        for suffix, figures in twins.items():
            if f"{name}{suffix}" in figures:
                report.add(f"{name}{suffix}", figures[f"{name}{suffix}"])


def _report_folds(
    report: EvalReport, prefix: str, held_out: Sequence[tuple[QuestionScores, str]], objective: str, folds: int,
    scale: float,
) -> None:
    """Each fold's held-out objective, with BM25's on the same questions, and their spread: a
    mechanism that holds on questions it was not built on scores evenly across the folds."""
    fold_of = assign_folds([q.fold_key for q, _ in held_out], [q.kind for q, _ in held_out], folds)
    ours, baseline = [], []
    for fold in range(folds):
        rows = [(q, chosen) for q, chosen in held_out if fold_of[q.fold_key] == fold]
        ours.append(scale * _mean([q.by_candidate[chosen][objective] for q, chosen in rows]))
        baseline.append(scale * _mean([q.bm25[objective] for q, _ in rows]))
        report.add(f"{prefix}_fold_{fold + 1}_{objective}_oof", ours[-1])
        report.add(f"{prefix}_fold_{fold + 1}_{objective}_bm25", baseline[-1])
    report.add(f"{prefix}_{objective}_fold_stdev_oof", statistics.stdev(ours))
    margins = [o - b for o, b in zip(ours, baseline, strict=True)]
    report.add(f"{prefix}_{objective}_fold_min_margin_over_bm25", min(margins))


def _report_contexts(report: EvalReport, prefix: str, checks: Sequence[ContextCheck]) -> None:
    """``answer_in_context`` (the share of questions whose gold answer is in the context block at
    the default budget) and ``context_tokens_mean``, overall and per type, each with its BM25 twin."""
    if not checks:
        return
    report.add(f"{prefix}_answer_in_context_questions", len(checks))
    report.add(f"{prefix}_answer_in_context", _mean([float(c.ours) for c in checks]))
    report.add(f"{prefix}_answer_in_context_bm25", _mean([float(c.bm25) for c in checks]))
    report.add(f"{prefix}_context_tokens_mean", _mean([c.ours_tokens for c in checks]))
    report.add(f"{prefix}_context_tokens_mean_bm25", _mean([c.bm25_tokens for c in checks]))
    for kind in sorted({c.kind for c in checks}):
        of_kind = [c for c in checks if c.kind == kind]
        report.add(f"{prefix}_answer_in_context_{kind}", _mean([float(c.ours) for c in of_kind]))
        report.add(f"{prefix}_answer_in_context_{kind}_bm25", _mean([float(c.bm25) for c in of_kind]))


# -- entry point ------------------------------------------------------------------------------------


def _default_embedder() -> Embedder:
    from chronomem.embed.local import LocalEmbedder  # lazy: loads torch

    return LocalEmbedder()


def _configs(
    default: SearchConfig, folds: int | None, candidates: Mapping[str, SearchConfig] | None,
    grid: Mapping[str, SearchConfig],
) -> dict[str, SearchConfig]:
    """The benchmark's own config first; with folds, every candidate (default: the benchmark's
    ``grid``) after it."""
    if folds is None:
        return {DEFAULT: default}
    return {DEFAULT: default, **(candidates if candidates is not None else grid)}


def _check_folds(folds: int | None, keys: int, what: str) -> None:
    """Before any work: each fold needs at least one conversation or question of its own."""
    if folds is not None and not 2 <= folds <= keys:
        raise InvalidInputError(f"--folds must be between 2 and the number of {what} ({keys}), got {folds}")


async def run_eval(
    locomo: str | Path | None = None,
    longmemeval: str | Path | None = None,
    *,
    limit: int | None = None,
    store_url: str | None = None,
    embedder: Embedder | None = None,
    cache_dir: str | Path | None = DEFAULT_CACHE_DIR,
    config: SearchConfig | None = None,
    folds: int | None = None,
    candidates: Mapping[str, SearchConfig] | None = None,
    progress: Progress | None = None,
) -> EvalReport:
    """Evaluate retrieval on a LoCoMo file and/or a LongMemEval file (plain or gzipped JSON).

    ``limit`` keeps the first N LoCoMo conversations and the first N LongMemEval questions.
    ``store_url`` (e.g. ``sqlite:///bench/out/eval.db``) keeps the ingested groups for re-runs; by
    default a temporary SQLite file is used and removed. ``embedder`` defaults to the local MiniLM
    model; its vectors are cached under ``cache_dir`` (``None``: a temporary directory). ``config``
    replaces both benchmarks' search configs (default: :data:`EVAL_CONFIG` for LoCoMo,
    :data:`LME_CONFIG` for LongMemEval). ``folds`` adds the out-of-fold and in-sample figures of a
    choice among ``candidates`` (default: the benchmark's grid, :data:`~chronomem.eval.configs.LOCOMO_CANDIDATES`
    or :data:`~chronomem.eval.configs.CANDIDATES`) and the default.
    """
    log = progress or (lambda _message: None)
    started = time.perf_counter()
    report = EvalReport()
    async with open_memory(store_url=store_url, embedder=embedder, cache_dir=cache_dir) as memory:
        if locomo is not None:
            configs = _configs(config or EVAL_CONFIG, folds, candidates, LOCOMO_CANDIDATES)
            samples = load_locomo(locomo)[:limit]
            _check_folds(folds, len(samples), "LoCoMo conversations")
            checks: list[ContextCheck] = []
            scored = await _eval_locomo(samples, memory, configs, log, checks)
            _report_benchmark(report, "locomo", scored, _locomo_metrics, LOCOMO_OBJECTIVE, folds, scale=100.0)
            _report_contexts(report, "locomo", checks)
        if longmemeval is not None:
            configs = _configs(config or LME_CONFIG, folds, candidates, CANDIDATES)
            questions = load_longmemeval(longmemeval)[:limit]
            _check_folds(folds, sum(not q.is_abstention for q in questions), "LongMemEval questions")
            lme_checks: list[ContextCheck] = []
            lme = await _eval_longmemeval(questions, memory, configs, log, lme_checks)
            _report_benchmark(report, "lme", lme, _lme_metrics, LME_OBJECTIVE, folds)
            _report_contexts(report, "lme", lme_checks)
    report.add("eval_seconds", time.perf_counter() - started)
    return report


@contextlib.asynccontextmanager
async def open_memory(
    *, store_url: str | None = None, embedder: Embedder | None = None, cache_dir: str | Path | None = DEFAULT_CACHE_DIR,
    llm: LanguageModel | None = None,
) -> AsyncIterator[Chronomem]:
    """The memory the harness searches: ``store_url`` (default a temporary SQLite file) and
    ``embedder`` (default MiniLM) with its vectors cached under ``cache_dir``; ``llm`` extracts
    what is ingested through the memory (the QA harness's graph mode), none by default."""
    with tempfile.TemporaryDirectory(prefix="chronomem-eval-") as scratch:
        inner = embedder or _default_embedder()
        cache_file = Path(cache_dir if cache_dir is not None else scratch) / f"vectors-{_safe(inner.model_name)}.db"
        # every vector is written to the cache file as it is made: a re-run embeds nothing again
        cached = CachedEmbedder(inner, path=cache_file, max_entries=500_000)
        settings = Settings(store_url=store_url or f"sqlite:///{Path(scratch) / 'eval.db'}")
        try:
            async with await Chronomem.open(settings, embedder=cached, llm=llm) as memory:
                yield memory
        finally:
            await cached.aclose()
