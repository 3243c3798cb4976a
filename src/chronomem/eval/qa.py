"""End-to-end question answering on LoCoMo and LongMemEval: chronomem's context against the full
conversation, answered by one model and graded by the benchmarks' rules.

Called by ``chronomem eval --qa`` and ``bench/eval_qa.py``::

    report = await run_qa(reader, locomo="locomo10.json", longmemeval="longmemeval_s_dev.json.gz",
                          options=QaOptions(sample=50, seed=1))
    for line in report.lines():
        print(line)  # "name: value"

For each selected question:

1. **memory**: chronomem's context block for the question, asked at the benchmark's date — by
   default the benchmark's own search config (:data:`~chronomem.eval.configs.EVAL_CONFIG`,
   :data:`~chronomem.eval.configs.LME_CONFIG`) over the conversation's episodes, ingested without a
   model as the retrieval harness does (same store, same vector cache), within the default token
   budget; with ``ingest_model`` the conversation is extracted into a graph first and the block is
   the ``context`` recipe's (facts, entities, communities, then episodes); ``recipe`` or
   ``template`` name another. The reader model answers from it (:data:`~chronomem.eval.qa_prompts.READER`).
2. **full context**: the same model answers from the whole conversation, when the prompt fits the
   model's window (``context_window``); the questions where it does not are counted, not answered.
3. **grading**: a judge model (default: the reader) by LongMemEval's type-specific rules or
   LoCoMo's LLM-judge rule; LoCoMo answers also get the benchmark's token F1 (no model).

Figures, overall and per benchmark and type: ``qa_accuracy`` and its ``_full_context`` twin (and
the memory's accuracy on the questions the full context fits, the fair comparison), ``locomo_f1``,
``context_tokens_mean`` / ``full_context_tokens_mean``, latency percentiles (retrieval, answer,
total), tokens per question, cost when prices are given, and ``qa_answer_in_context`` (see
:mod:`chronomem.eval.answers`).

Every answer and verdict is cached on disk under ``cache_dir`` by (question, mode, model, config
fingerprint, prompt version): a re-run with the same settings makes no model call and no search.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import sqlite3
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from chronomem.datasets.locomo import CATEGORY_NAMES, LocomoSample, load_locomo, locomo_episodes, locomo_group
from chronomem.datasets.longmemeval import LmeQuestion, lme_episodes, lme_group, load_longmemeval
from chronomem.domain import Episode, EpisodeStatus
from chronomem.embed.base import Embedder
from chronomem.errors import InvalidInputError, ModelError
from chronomem.eval.answers import answer_in_context, locomo_f1
from chronomem.eval.configs import EVAL_CONFIG, LME_CONFIG
from chronomem.eval.harness import DEFAULT_CACHE_DIR, EvalReport, open_memory
from chronomem.eval.ingest import IndexedEpisode, ingest
from chronomem.eval.qa_prompts import (
    JUDGE_VERSION,
    LME_JUDGE,
    LOCOMO_JUDGE,
    READER,
    READER_VERSION,
    JudgeContext,
    ReaderContext,
    lme_rule,
)
from chronomem.llm.accounting import estimate_message_tokens
from chronomem.llm.base import LanguageModel
from chronomem.memory import Chronomem
from chronomem.providers.tokens import estimate_tokens
from chronomem.search.config import SearchConfig, recipe
from chronomem.search.context import DEFAULT_TOKEN_BUDGET
from chronomem.search.templates import Template

__all__ = ["QaOptions", "QaQuestion", "ResultCache", "full_conversation", "run_qa", "select_questions"]

MEMORY, FULL = "memory", "full_context"
DEFAULT_WINDOW = 128_000  # the window of the hosted models the paper measured (gpt-4o, gpt-4o-mini)
LOCOMO_DEFAULT_CATEGORIES = (1, 2, 3, 4)  # the usual reported set; "adversarial" in types adds 5

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True, slots=True)
class QaOptions:
    """What ``run_qa`` answers and how. ``types``: LoCoMo category names (``single_hop``,
    ``adversarial`` …), LongMemEval question types (``temporal-reasoning`` or ``temporal_reasoning``)
    or ``abstention``; empty: all but LoCoMo's adversarial category. ``sample`` draws N of the
    selected questions with ``seed``; ``limit`` keeps the first N after that. ``max_conversation_tokens``
    keeps questions whose whole conversation is at most that long (the shorter LoCoMo conversations).
    ``lme_oracle``: each LongMemEval haystack cut to its evidence sessions (the benchmark's oracle
    setting). ``prices``: USD per million input and output tokens."""

    types: frozenset[str] = frozenset()
    limit: int | None = None
    sample: int | None = None
    seed: int = 0
    max_conversation_tokens: int | None = None
    lme_oracle: bool = False
    token_budget: int = DEFAULT_TOKEN_BUDGET
    recipe: str | None = None
    template: str | None = None
    full_context: bool = True
    context_window: int = DEFAULT_WINDOW
    prices: tuple[float, float] | None = None
    concurrency: int = 1


# -- the questions ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QaQuestion:
    benchmark: str  # "locomo" or "lme"
    question_id: str
    kind: str  # LoCoMo category name or LongMemEval question type, underscores
    question: str
    gold: str
    asked_at: datetime
    group: str  # its conversation's group in the raw store (the extracted one adds a prefix)
    category: int | None = None  # LoCoMo's category
    abstention: bool = False
    conversation: LocomoSample | LmeQuestion | None = field(default=None, compare=False, repr=False)

    @property
    def judged_by_rule(self) -> str:
        return lme_rule(self.kind.replace("_", "-"), self.abstention) if self.benchmark == "lme" else "locomo"

    @property
    def factual(self) -> bool:
        """Whether the gold answer is a fact to look for (not a rubric or an explanation)."""
        return self.judged_by_rule not in ("preference", "abstention")


def _kind_name(text: str) -> str:
    return text.strip().replace("-", "_")


def _locomo_questions(samples: Sequence[LocomoSample], categories: set[int]) -> list[QaQuestion]:
    questions = []
    for sample in samples:
        for index, q in enumerate(sample.questions):
            if q.category in categories:
                questions.append(
                    QaQuestion(
                        "locomo",
                        f"{sample.sample_id}:{index}",
                        CATEGORY_NAMES[q.category],
                        q.question,
                        q.answer,
                        sample.last_date,
                        locomo_group(sample),
                        category=q.category,
                        conversation=sample,
                    )
                )
    return questions


def _oracle(question: LmeQuestion) -> LmeQuestion:
    evidence = set(question.answer_session_ids)
    return replace(question, sessions=tuple(s for s in question.sessions if s.session_id in evidence))


def _lme_questions(questions: Sequence[LmeQuestion], oracle: bool) -> list[QaQuestion]:
    prefix = "lme-oracle-qa-" if oracle else "lme-qa-"  # assistant turns included: not the retrieval groups
    chosen = []
    for q in questions:
        haystack = _oracle(q) if oracle else q
        chosen.append(
            QaQuestion(
                "lme",
                q.question_id,
                _kind_name(q.question_type),
                q.question,
                q.answer,
                q.question_date,
                lme_group(q, prefix),
                abstention=q.is_abstention,
                conversation=haystack,
            )
        )
    return chosen


def _wanted(question: QaQuestion, types: frozenset[str]) -> bool:
    if not types:
        return question.category != 5
    return question.kind in types or (question.abstention and "abstention" in types)


def select_questions(locomo: str | Path | None, longmemeval: str | Path | None, options: QaOptions) -> list[QaQuestion]:
    """The questions ``options`` select, in file order (a sample keeps file order too)."""
    types = frozenset(_kind_name(t) for t in options.types)
    known = set(CATEGORY_NAMES.values()) | {
        "abstention",
        "single_session_user",
        "single_session_assistant",
        "single_session_preference",
        "multi_session",
        "temporal_reasoning",
        "knowledge_update",
    }
    if unknown := types - known:
        raise InvalidInputError(f"unknown question types {sorted(unknown)}; known: {', '.join(sorted(known))}")
    questions: list[QaQuestion] = []
    if locomo is not None:
        categories = set(CATEGORY_NAMES) if "adversarial" in types else set(LOCOMO_DEFAULT_CATEGORIES)
        questions += _locomo_questions(load_locomo(locomo), categories)
    if longmemeval is not None:
        questions += _lme_questions(load_longmemeval(longmemeval), options.lme_oracle)
    questions = [q for q in questions if _wanted(q, types)]
    if options.max_conversation_tokens is not None:
        questions = _short_enough(questions, options.max_conversation_tokens)
    if options.sample is not None and options.sample < len(questions):
        picked = set(random.Random(options.seed).sample(range(len(questions)), options.sample))
        questions = [q for i, q in enumerate(questions) if i in picked]
    return questions[: options.limit]


# -- the conversation, whole ------------------------------------------------------------------------


def _locomo_text(sample: LocomoSample) -> str:
    lines: list[str] = []
    session = None
    for turn in sample.turns:
        if turn.session != session:
            session = turn.session
            lines.append(f"\nSession {session} ({turn.date:%d %B %Y, %H:%M}):")
        lines.append(f"{turn.speaker}: {turn.text}" + (f" [shares a photo of {turn.caption}]" if turn.caption else ""))
    return "\n".join(lines).strip()


def _lme_text(question: LmeQuestion) -> str:
    lines: list[str] = []
    for number, session in enumerate(question.sessions, start=1):
        lines.append(f"\nSession {number} ({session.date:%Y/%m/%d (%a) %H:%M}):")
        lines += [f"{turn.role}: {turn.content}" for turn in session.turns if turn.content.strip()]
    return "\n".join(lines).strip()


def full_conversation(question: QaQuestion) -> str:
    """The whole conversation as the full-context baseline reads it: sessions in order, each with its date."""
    conversation = question.conversation
    if isinstance(conversation, LocomoSample):
        return _locomo_text(conversation)
    if isinstance(conversation, LmeQuestion):
        return _lme_text(conversation)
    raise InvalidInputError(f"question {question.question_id} carries no conversation")


def _short_enough(questions: Sequence[QaQuestion], most: int) -> list[QaQuestion]:
    """The questions whose whole conversation is at most ``most`` tokens (each conversation measured once)."""
    sizes: dict[str, int] = {}
    for q in questions:
        if q.group not in sizes:
            sizes[q.group] = estimate_tokens(full_conversation(q))
    return [q for q in questions if sizes[q.group] <= most]


def _asked_at(question: QaQuestion) -> str:
    return (
        f"{question.asked_at:%d %B %Y, %H:%M}"
        if question.benchmark == "locomo"
        else f"{question.asked_at:%Y/%m/%d (%a) %H:%M}"
    )


def _episodes(question: QaQuestion, group: str, *, documents: bool) -> list[Episode]:
    """The conversation's episodes in ``group`` (turns; with ``documents``, session documents too)."""
    conversation = question.conversation
    if isinstance(conversation, LocomoSample):
        episodes = locomo_episodes(conversation, session_documents=documents)
    elif isinstance(conversation, LmeQuestion):
        episodes = lme_episodes(conversation, prefix="", session_documents=documents, assistant_turns=True)
    else:
        raise InvalidInputError(f"question {question.question_id} carries no conversation")
    base = episodes[0].group_id if episodes else ""

    def moved(episode_id: str) -> str:
        return group + episode_id[len(base) :]

    return [
        e.model_copy(
            update={
                "group_id": group,
                "id": moved(e.id),
                "metadata": {
                    k: moved(v) if k == "reply_to" and isinstance(v, str) else v for k, v in e.metadata.items()
                },
            }
        )
        for e in episodes
    ]


def _indexed(question: QaQuestion, group: str) -> list[IndexedEpisode]:
    """As the retrieval harness indexes them: a LoCoMo turn embedded as "speaker: text" (no caption)."""
    episodes = _episodes(question, group, documents=True)
    unextracted = [e.model_copy(update={"status": EpisodeStatus.UNEXTRACTED}) for e in episodes]
    if isinstance(question.conversation, LocomoSample):
        texts = [f"{t.speaker}: {t.text}" for t in question.conversation.turns]
        texts += [e.content for e in episodes[len(texts) :]]
        return [IndexedEpisode(e, text) for e, text in zip(unextracted, texts, strict=True)]
    return [IndexedEpisode(e, e.content) for e in unextracted]


# -- the result cache -------------------------------------------------------------------------------


class ResultCache:
    """Answers and verdicts on disk, one JSON value per key (``path`` None: kept in memory only)."""

    def __init__(self, path: Path | None) -> None:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path) if path is not None else ":memory:")
        self._db.execute("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self.hits = 0

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT value FROM results WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        self.hits += 1
        return dict(json.loads(row[0]))

    def put(self, key: str, value: dict[str, Any]) -> None:
        self._db.execute("INSERT OR REPLACE INTO results (key, value) VALUES (?, ?)", (key, json.dumps(value)))
        self._db.commit()  # an interrupted run keeps what it answered

    def close(self) -> None:
        self._db.close()


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def model_label(model: LanguageModel) -> str:
    """The model's name, part of every cached answer's key (a routed model: its default model's)."""
    name = getattr(model, "model_name", None)
    if name is None and (default := getattr(model, "default", None)) is not None:
        return model_label(default)
    return str(name or type(model).__name__)


# -- one question -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    """One question answered one way (from memory or from the full conversation)."""

    question: QaQuestion
    mode: str
    answer: str = ""
    correct: bool = False
    f1: float | None = None
    context_tokens: int = 0
    retrieval_ms: float = 0.0
    answer_ms: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    answer_in_context: bool | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "context_tokens": self.context_tokens,
            "retrieval_ms": self.retrieval_ms,
            "answer_ms": self.answer_ms,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "answer_in_context": self.answer_in_context,
            "error": self.error,
        }


@dataclass
class _Run:
    """What every question of one run shares."""

    reader: LanguageModel
    judge: LanguageModel
    options: QaOptions
    cache: ResultCache
    memory: Chronomem
    config_of: Callable[[QaQuestion], SearchConfig]
    template: Template | None
    extracted: str | None  # the ingestion model's label when the conversations are extracted
    fingerprint: Callable[[QaQuestion], str]
    groups_ready: set[str] = field(default_factory=set)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def group(self, question: QaQuestion) -> str:
        return f"qa-x-{_slug(self.extracted)}-{question.group}" if self.extracted else question.group

    async def ensure_ingested(self, question: QaQuestion) -> None:
        group = self.group(question)
        async with self.lock:  # one conversation is ingested once, even with concurrent questions
            if group in self.groups_ready:
                return
            if self.extracted:
                await self.memory.add_episodes(_episodes(question, group, documents=False))
            else:
                await ingest(self.memory.store, self.memory.embedder, group, _indexed(question, group))
            self.groups_ready.add(group)

    async def context(self, question: QaQuestion) -> str:
        group = self.group(question)
        if self.template is not None:
            from chronomem.app.templates import templated_context

            return await templated_context(self.memory, [group], question.question, self.template)
        return await self.memory.context(
            group,
            question.question,
            config=self.config_of(question),
            now=question.asked_at,
            token_budget=self.options.token_budget,
            include_episodes=True,
        )


def _slug(text: str | None) -> str:
    return re.sub(r"[^\w.-]+", "_", text or "")


async def _read(run: _Run, outcome: Outcome, context: str) -> None:
    """The reader's answer to the question from ``context`` (a failed answer is recorded, not raised)."""
    q = outcome.question
    started = time.perf_counter()
    try:
        completion = await run.reader.complete(
            READER, ReaderContext(q.question, _asked_at(q), context, full_conversation=outcome.mode == FULL)
        )
    except ModelError as error:  # recorded, not cached: a re-run asks again
        outcome.error = f"{type(error).__name__}: {error}"
        outcome.answer_ms = 1000 * (time.perf_counter() - started)
        return
    outcome.answer_ms = 1000 * (time.perf_counter() - started)
    outcome.answer = completion.output.answer
    outcome.input_tokens = completion.usage.input_tokens
    outcome.output_tokens = completion.usage.output_tokens


def _fits(run: _Run, question: QaQuestion) -> bool:
    """Whether the whole conversation, in the reader's prompt, leaves room for the answer in the
    window (tokens estimated at four characters each; not cached: it is cheap, and a window changes)."""
    prompt = READER.messages(
        ReaderContext(question.question, _asked_at(question), full_conversation(question), full_conversation=True)
    )
    return estimate_message_tokens(prompt) + READER.max_output_tokens <= run.options.context_window


async def _answer(run: _Run, question: QaQuestion, mode: str) -> Outcome | None:
    """The question answered from memory or from the full conversation (None: it does not fit)."""
    if mode == FULL and not _fits(run, question):
        return None
    key = _key(
        READER_VERSION,
        question.benchmark,
        question.question_id,
        question.group,  # LongMemEval's oracle haystack is another conversation
        mode,
        model_label(run.reader),
        run.fingerprint(question) if mode == MEMORY else "whole conversation",
    )
    if (cached := run.cache.get(key)) is not None:
        return Outcome(question, mode, **cached)
    outcome = Outcome(question, mode)
    if mode == MEMORY:
        await run.ensure_ingested(question)
        started = time.perf_counter()
        context = await run.context(question)
        outcome.retrieval_ms = 1000 * (time.perf_counter() - started)
        if question.factual:
            outcome.answer_in_context = answer_in_context(question.gold, context)
    else:
        context = full_conversation(question)
    outcome.context_tokens = estimate_tokens(context)
    await _read(run, outcome, context)
    if outcome.error is None:
        run.cache.put(key, outcome.as_dict())
    return outcome


async def _grade(run: _Run, outcome: Outcome) -> None:
    q = outcome.question
    if q.benchmark == "locomo" and q.category is not None:
        outcome.f1 = locomo_f1(outcome.answer, q.gold, q.category)
    if outcome.error is not None:
        return  # no answer: wrong
    judge = LME_JUDGE if q.benchmark == "lme" else LOCOMO_JUDGE
    key = _key(JUDGE_VERSION, judge.name, model_label(run.judge), q.question, q.gold, q.judged_by_rule, outcome.answer)
    if (cached := run.cache.get(key)) is not None:
        outcome.correct = bool(cached["correct"])
        return
    try:
        completion = await run.judge.complete(judge, JudgeContext(q.question, q.gold, outcome.answer, q.judged_by_rule))
    except ModelError as error:
        outcome.error = f"judge: {type(error).__name__}: {error}"
        return
    outcome.correct = completion.output.correct
    run.cache.put(key, {"correct": outcome.correct})


async def _question(run: _Run, question: QaQuestion) -> list[Outcome]:
    outcomes = []
    for mode in (MEMORY, FULL) if run.options.full_context else (MEMORY,):
        outcome = await _answer(run, question, mode)
        if outcome is not None:
            await _grade(run, outcome)
            outcomes.append(outcome)
    return outcomes


# -- the report -------------------------------------------------------------------------------------


def _percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (``share`` in 0–1)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))]


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def _accuracy(outcomes: Sequence[Outcome]) -> float:
    return _mean([float(o.correct) for o in outcomes])


def _report_mode(report: EvalReport, outcomes: Sequence[Outcome], suffix: str, options: QaOptions) -> None:
    report.add(f"qa_accuracy{suffix}", _accuracy(outcomes))
    for benchmark in ("locomo", "lme"):
        of_benchmark = [o for o in outcomes if o.question.benchmark == benchmark]
        if not of_benchmark:
            continue
        report.add(f"qa_accuracy_{benchmark}{suffix}", _accuracy(of_benchmark))
        kinds = sorted({o.question.kind for o in of_benchmark})
        for kind in kinds:
            report.add(
                f"qa_accuracy_{benchmark}_{kind}{suffix}",
                _accuracy([o for o in of_benchmark if o.question.kind == kind]),
            )
        if benchmark == "lme" and any(o.question.abstention for o in of_benchmark):
            report.add(
                f"qa_accuracy_lme_abstention{suffix}", _accuracy([o for o in of_benchmark if o.question.abstention])
            )
        if benchmark == "locomo":
            report.add(f"locomo_f1{suffix}", _mean([o.f1 for o in of_benchmark if o.f1 is not None]))
            for kind in kinds:
                report.add(
                    f"locomo_f1_{kind}{suffix}",
                    _mean([o.f1 for o in of_benchmark if o.question.kind == kind and o.f1 is not None]),
                )
    name = "context_tokens_mean" if suffix == "" else "full_context_tokens_mean"
    report.add(name, _mean([o.context_tokens for o in outcomes]))
    for stage, values in (
        ("retrieval", [o.retrieval_ms for o in outcomes]),
        ("answer", [o.answer_ms for o in outcomes]),
        ("total", [o.retrieval_ms + o.answer_ms for o in outcomes]),
    ):
        if suffix and stage != "answer":
            continue  # the full context has no retrieval: its total is its answer
        report.add(f"latency_{stage}_ms_p50{suffix}", _percentile(values, 0.5))
        report.add(f"latency_{stage}_ms_p95{suffix}", _percentile(values, 0.95))
    report.add(f"qa_input_tokens_mean{suffix}", _mean([o.input_tokens for o in outcomes]))
    report.add(f"qa_output_tokens_mean{suffix}", _mean([o.output_tokens for o in outcomes]))
    if options.prices is not None:
        per_input, per_output = options.prices
        cost = sum(o.input_tokens * per_input + o.output_tokens * per_output for o in outcomes) / 1e6
        report.add(f"qa_cost_usd{suffix}", cost)
    report.add(f"qa_errors{suffix}", sum(o.error is not None for o in outcomes))


def qa_report(outcomes: Sequence[Outcome], options: QaOptions, questions: int) -> EvalReport:
    report = EvalReport()
    memory = [o for o in outcomes if o.mode == MEMORY]
    full = [o for o in outcomes if o.mode == FULL]
    report.add("qa_questions", questions)
    if memory:
        _report_mode(report, memory, "", options)
        looked_for = [o for o in memory if o.answer_in_context is not None]
        if looked_for:
            report.add("qa_answer_in_context", _mean([float(bool(o.answer_in_context)) for o in looked_for]))
            report.add("qa_answer_in_context_questions", len(looked_for))
    if options.full_context:
        report.add("qa_full_context_questions", len(full))
        report.add("qa_full_context_skipped", questions - len(full))  # their prompt exceeds the window
        report.add("qa_context_window", options.context_window)
        if full:
            fitting = {(o.question.benchmark, o.question.question_id) for o in full}
            report.add(
                "qa_accuracy_where_full_context_fits",
                _accuracy([o for o in memory if (o.question.benchmark, o.question.question_id) in fitting]),
            )
            _report_mode(report, full, "_full_context", options)
    return report


# -- entry point ------------------------------------------------------------------------------------


def _fingerprint(
    options: QaOptions, config_of: Callable[[QaQuestion], SearchConfig], extracted: str | None, embedder: str
) -> Callable[[QaQuestion], str]:
    """What decides a question's memory context, as one string (changing any of it re-answers)."""

    def fingerprint(question: QaQuestion) -> str:
        what = options.template if options.template is not None else config_of(question).model_dump_json()
        return _key(what, options.token_budget, extracted, embedder, options.lme_oracle)

    return fingerprint


def _config_chooser(options: QaOptions, extracted: bool, memory: Chronomem) -> Callable[[QaQuestion], SearchConfig]:
    if options.recipe is not None:
        named = recipe(options.recipe)
        return lambda _q: named
    if extracted:
        graph = recipe(memory.settings.search.context_recipe)
        return lambda _q: graph
    return lambda q: EVAL_CONFIG if q.benchmark == "locomo" else LME_CONFIG


async def run_qa(
    reader: LanguageModel,
    locomo: str | Path | None = None,
    longmemeval: str | Path | None = None,
    *,
    options: QaOptions | None = None,
    judge: LanguageModel | None = None,
    ingest_model: LanguageModel | None = None,
    store_url: str | None = None,
    embedder: Embedder | None = None,
    cache_dir: str | Path | None = DEFAULT_CACHE_DIR,
    progress: Progress | None = None,
) -> EvalReport:
    """Answer and grade the selected questions (see the module docstring); ``name: value`` figures.

    ``judge`` defaults to ``reader``. ``ingest_model`` extracts each conversation into a graph
    first (slow: a few model calls per turn); without it the episodes are stored as the retrieval
    harness stores them. ``store_url`` keeps the ingested conversations for later runs (default: a
    temporary store; the vectors are cached under ``cache_dir`` either way, and so are the answers).
    """
    options = options or QaOptions()
    if locomo is None and longmemeval is None:
        raise InvalidInputError("give a LoCoMo file, a LongMemEval file or both")
    if options.recipe is not None and options.template is not None:
        raise InvalidInputError("give a recipe or a template, not both")
    started = time.perf_counter()
    questions = select_questions(locomo, longmemeval, options)
    template = None
    if options.template is not None:
        from chronomem.search.templates import parse_template

        template = parse_template(options.template)
    tell = progress or (lambda _stage, _done, _total: None)
    cache = ResultCache(Path(cache_dir) / "qa-results.db" if cache_dir is not None else None)
    try:
        async with open_memory(store_url=store_url, embedder=embedder, cache_dir=cache_dir, llm=ingest_model) as memory:
            extracted = model_label(ingest_model) if ingest_model is not None else None
            config_of = _config_chooser(options, extracted is not None, memory)
            run = _Run(
                reader,
                judge or reader,
                options,
                cache,
                memory,
                config_of,
                template,
                extracted,
                _fingerprint(options, config_of, extracted, memory.embedder.model_name),
            )
            outcomes = await _answer_all(run, questions, tell)
    finally:
        cache.close()
    report = qa_report(outcomes, options, len(questions))
    report.add("qa_model", model_label(reader))
    report.add("qa_judge_model", model_label(judge or reader))
    report.add("qa_cached_results", cache.hits)
    report.add("qa_seconds", time.perf_counter() - started)
    return report


async def _answer_all(run: _Run, questions: Sequence[QaQuestion], tell: Progress) -> list[Outcome]:
    gate = asyncio.Semaphore(max(1, run.options.concurrency))
    done = 0
    tell("answering", 0, len(questions))

    async def one(question: QaQuestion) -> list[Outcome]:
        nonlocal done
        async with gate:
            outcomes = await _question(run, question)
        done += 1
        tell("answering", done, len(questions))
        return outcomes

    results = await asyncio.gather(*(one(q) for q in questions))
    return [o for outcomes in results for o in outcomes]


@contextmanager
def progress_bars(enabled: bool = True) -> Iterator[Progress]:
    """A rich progress bar (on stderr) fed by ``run_qa``'s progress callback."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.progress import Progress as Bars

    bars = Bars(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not enabled,
    )
    tasks: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = bars.add_task(stage, total=total)
        bars.update(tasks[stage], completed=done, total=total)

    with bars:
        yield update
