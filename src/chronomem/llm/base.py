"""The LLM port: one async call from a typed prompt to a validated pydantic object (docs/design.md §5).

A :class:`Prompt` is a function from a typed context to chat messages, declared next to the
pydantic model of its answer. A :class:`LanguageModel` answers it with a :class:`Completion`
holding the validated answer and the :class:`Usage` of the call(s) it took.

Adapters (OpenAI-compatible, Anthropic) speak a provider's wire format; wrappers (retry, rate limit,
cache, accounting) wrap any model; test doubles answer prompts from Python callbacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

__all__ = [
    "Completion",
    "LanguageModel",
    "Message",
    "ModelRole",
    "Prompt",
    "Usage",
    "writes_prose",
]

ModelRole = Literal["extraction", "resolution", "summary", "rerank", "default"]

Ctx = TypeVar("Ctx")
Ans = TypeVar("Ans", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class Prompt(Generic[Ctx, Ans]):
    """A named prompt: builds messages from a typed context; its answer is an ``answer`` object.

    ``max_output_tokens`` bounds the answer (sized to what the prompt expects), lowered to what the
    answer schema allows when it bounds its lists and strings (:mod:`chronomem.llm.budget`); a longer
    answer is an error, never silently truncated, unless ``keeps_complete_items``: the answer is a
    list of items that each stand alone (entities, facts), so one cut off keeps its complete items
    (:mod:`chronomem.llm.answering`). ``limits`` tightens the schema for a context (the
    most items a list may hold, the longest a string may be, by ``"Model.field"``): the answer is sent,
    trimmed and capped by that tighter schema. ``role`` picks which configured model answers it.
    """

    name: str
    answer: type[Ans]
    build: Callable[[Ctx], list[Message]]
    max_output_tokens: int = 1024
    role: ModelRole = "default"
    limits: Callable[[Ctx], Mapping[str, int]] | None = None
    keeps_complete_items: bool = False

    def messages(self, context: Ctx) -> list[Message]:
        return self.build(context)


@dataclass(slots=True)
class Usage:
    """What a call (or many, once added up) cost."""

    calls: int = 0
    input_tokens: int = 0  # every prompt token, read from the provider's prompt cache or not
    cached_input_tokens: int = 0  # of input_tokens, those the provider served from its prompt cache
    output_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    cache_hits: int = 0
    items_dropped: int = 0  # list items and map keys past the answer schema's bounds (see parsing)
    answers_cut_off: int = 0  # answers cut off at the output-token limit, kept to their complete items
    by_prompt: dict[str, int] = field(default_factory=dict)
    model: str | None = None

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.cached_input_tokens += other.cached_input_tokens
        self.output_tokens += other.output_tokens
        self.latency_s += other.latency_s
        self.retries += other.retries
        self.cache_hits += other.cache_hits
        self.items_dropped += other.items_dropped
        self.answers_cut_off += other.answers_cut_off
        for name, count in other.by_prompt.items():
            self.by_prompt[name] = self.by_prompt.get(name, 0) + count
        self.model = self.model or other.model

    def as_dict(self) -> dict[str, object]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "output_tokens": self.output_tokens,
            "latency_s": round(self.latency_s, 4),
            "retries": self.retries,
            "cache_hits": self.cache_hits,
            "items_dropped": self.items_dropped,
            "answers_cut_off": self.answers_cut_off,
            "by_prompt": dict(self.by_prompt),
            "model": self.model,
        }


@dataclass(frozen=True, slots=True)
class Completion(Generic[Ans]):
    output: Ans
    usage: Usage


@runtime_checkable
class LanguageModel(Protocol):
    """Anything that answers typed prompts."""

    async def complete(self, prompt: Prompt[Ctx, Ans], context: Ctx) -> Completion[Ans]:
        """Answer ``prompt`` for ``context`` with a validated ``prompt.answer`` object.

        Raises ``ModelUnavailableError`` (transport, rate limits after retries), ``ModelOutputError``
        (unparseable or invalid after one corrective retry) or ``ModelTruncatedError``.
        """


def writes_prose(model: LanguageModel) -> bool:
    """Whether ``model``'s text is a language model's own prose. A rule-based stand-in says
    ``writes_prose = False``: the entity summaries it produces are the messages' sentences, and the
    graph labels them as its own text rather than a model's. Models that do not say are models."""
    return bool(getattr(model, "writes_prose", True))
