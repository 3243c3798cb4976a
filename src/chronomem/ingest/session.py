"""The working state of one ingestion (one episode, or one ``add_fact``): what every stage shares.

A session meters the model calls it makes (their usage is the episode's usage), embeds each distinct
string once, remembers which stage is running (so a failure names it) and collects warnings —
dropped facts, refused attributes, model answers that pointed nowhere — so nothing fails silently.

A *deterministic* session never asks the model: the stages decide by their rules alone. That is how
every session runs without a model, and how declared structure runs with one (a JSON episode under a
mapping, ``add_fact``): what the caller declared is not second-guessed by a model.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np
from pydantic import BaseModel

from chronomem.domain import Episode
from chronomem.embed.base import Embedder
from chronomem.ingest.config import IngestConfig
from chronomem.ingest.ontology import Ontology
from chronomem.llm.base import LanguageModel, Prompt, Usage
from chronomem.store.base import Scope, Store
from chronomem.telemetry import metrics, span

__all__ = ["EmbeddingCache", "Session", "stage"]

P = ParamSpec("P")
R = TypeVar("R")
Ans = TypeVar("Ans", bound=BaseModel)


class EmbeddingCache:
    """Embeds each distinct text once; every call embeds all the missing texts in one batch.

    Concurrent stages may ask for the same text: a text already being embedded is awaited, not
    embedded again.
    """

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._vectors: dict[str, np.ndarray] = {}
        self._in_flight: dict[str, asyncio.Future[None]] = {}
        self.batches = 0

    async def embed(self, texts: Iterable[str]) -> None:
        wanted = list(dict.fromkeys(texts))
        missing = [t for t in wanted if t not in self._vectors and t not in self._in_flight]
        if missing:
            await self._embed_batch(missing)
        waiting = {self._in_flight[t] for t in wanted if t in self._in_flight}
        if waiting:
            await asyncio.gather(*waiting)

    async def _embed_batch(self, missing: list[str]) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._in_flight.update(dict.fromkeys(missing, done))
        self.batches += 1
        try:
            matrix = await self._embedder.embed(missing)
            for text, vector in zip(missing, matrix, strict=True):
                self._vectors[text] = np.asarray(vector, dtype=np.float32)
            done.set_result(None)
        except BaseException as exc:
            done.set_exception(exc)
            done.exception()  # retrieved here; the waiters re-raise it
            raise
        finally:
            for text in missing:
                self._in_flight.pop(text, None)

    def __getitem__(self, text: str) -> np.ndarray:
        return self._vectors[text]

    def get(self, text: str) -> np.ndarray | None:
        return self._vectors.get(text)


@dataclass
class Session:
    """What the stages of one ingestion share (see the module docstring)."""

    store: Store
    embedder: Embedder
    llm: LanguageModel | None
    config: IngestConfig
    ontology: Ontology
    group_id: str
    reference_time: datetime
    now: datetime
    episode: Episode | None = None  # None for add_fact
    usage: Usage = field(default_factory=Usage)
    warnings: list[str] = field(default_factory=list)
    current_stage: str = "start"
    entities_extracted: int = 0  # distinct entities the episode named
    facts_extracted: int = 0  # valid facts it stated (before resolution)
    entities_rejected: int = 0  # extracted entities named nowhere in the messages
    facts_rejected: int = 0  # extracted facts dropped: junk text, or a quote the episode does not contain
    summary_notes_added: int = 0  # notes appended to entity summaries (see chronomem.ingest.summaries)
    summary_notes_skipped: int = 0  # notes skipped: no word the summary lacked
    summary_skips_with_new_fact: int = 0  # of those, the entity got a new fact in the same episode
    summary_facts_for_skips: int = 0  # new facts' sentences appended for those skips: what the note missed
    started: float = field(default_factory=time.perf_counter)
    vectors: EmbeddingCache = field(init=False)
    # (group, scope) pairs known to hold vectors, shared by the Ingestor's sessions (see has_vectors)
    populated: set[tuple[str, str]] = field(default_factory=set)
    # decide by the rules alone, never asking the model (always so when there is none)
    deterministic: bool = False

    def __post_init__(self) -> None:
        self.vectors = EmbeddingCache(self.embedder)
        if self.llm is None:
            self.deterministic = True

    @property
    def provenance(self) -> tuple[str, ...]:
        return (self.episode.id,) if self.episode else ()

    async def ask(self, prompt: Prompt[Any, Ans], context: Any) -> Ans:
        """One model call; its usage counts towards this session."""
        assert self.llm is not None and not self.deterministic, "a deterministic session asks no model"
        completion = await self.llm.complete(prompt, context)
        self.usage.add(completion.usage)
        if completion.usage.answers_cut_off:
            self.warn(f"{prompt.name}: the answer ran to its output-token limit; its complete items are kept")
        if completion.usage.items_dropped:
            self.warn(f"{prompt.name}: the answer listed more than its bounds allow; "
                      f"{completion.usage.items_dropped} items past them dropped")
        if not completion.usage.by_prompt:
            self.usage.by_prompt[prompt.name] = self.usage.by_prompt.get(prompt.name, 0) + 1
        return completion.output

    async def has_vectors(self, scope: Scope) -> bool:
        """Whether the group holds anything to vector-search in ``scope`` (entities or facts).

        Searching an empty scope is pointless (a group's first episodes), so we look first; once a
        group is known to hold vectors, it is not asked again.
        """
        key = (self.group_id, scope.value)
        if key in self.populated:
            return True
        if scope is Scope.ENTITIES:
            found = bool(await self.store.list_entities(self.group_id, limit=1))
        else:
            found = bool(await self.store.list_facts(self.group_id, limit=1))
        if found:
            self.populated.add(key)
        return found

    def reject(self, kind: str, message: str) -> None:
        """Count an extracted item dropped by validation (``kind``: "entity" or "fact"), and say why."""
        if kind == "entity":
            self.entities_rejected += 1
        else:
            self.facts_rejected += 1
        self.warn(f"{kind} rejected: {message}")

    def warn(self, message: str) -> None:
        self.warnings.append(f"{self.current_stage}: {message}")

    def usage_record(self) -> dict[str, Any]:
        """What is stored on the episode: the model usage plus time spent outside the model."""
        record = self.usage.as_dict()
        elapsed = time.perf_counter() - self.started
        record["elapsed_s"] = round(elapsed, 4)
        record["pipeline_s"] = round(max(0.0, elapsed - self.usage.latency_s), 4)
        record["embedding_batches"] = self.vectors.batches
        record["entities_extracted"] = self.entities_extracted
        record["facts_extracted"] = self.facts_extracted
        record["entities_rejected"] = self.entities_rejected
        record["facts_rejected"] = self.facts_rejected
        record["summary_notes"] = {"added": self.summary_notes_added, "skipped": self.summary_notes_skipped,
                                   "skipped_with_new_fact": self.summary_skips_with_new_fact,
                                   "facts_for_skipped": self.summary_facts_for_skips}
        record["warnings"] = list(self.warnings)
        return record


StageFn = Callable[Concatenate[Session, P], Awaitable[R]]


def stage(name: str) -> Callable[[StageFn[P, R]], StageFn[P, R]]:
    """Mark an async function as a named pipeline stage: a failure inside it is reported with ``name``,
    and its time is a ``stage`` span and a row of ``chronomem_stage_duration_seconds``."""

    def decorate(fn: StageFn[P, R]) -> StageFn[P, R]:
        async def run(session: Session, /, *args: P.args, **kwargs: P.kwargs) -> R:
            session.current_stage = name
            started, outcome = time.perf_counter(), "error"
            try:
                with span(f"stage {name}", stage=name):
                    result = await fn(session, *args, **kwargs)
                outcome = "ok"
                return result
            finally:
                metrics.record_stage(name, outcome, time.perf_counter() - started)

        functools.update_wrapper(run, fn)  # not @wraps: its typed result would hide the signature
        return run

    return decorate
