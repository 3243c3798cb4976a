"""Test doubles for the LLM port, shipped in the package so every suite can use them.

- :class:`FunctionModel` answers each prompt from a Python callback (dispatch on ``prompt.name``
  and the typed context). The callback's answer is serialized to text and then goes through the
  same tolerant-parse → validate → corrective-retry path as a real provider's answer
  (:mod:`chronomem.llm.answering`), so an invalid answer raises ``ModelOutputError`` exactly where a
  real model's would. Usage is estimated with :func:`~chronomem.providers.tokens.estimate_tokens`
  (``ceil(chars / 4)``) over the rendered prompt messages (input) and the answer text (output).
- :class:`ScriptedModel` answers each prompt name from a list of canned answers, in order.
- :class:`SchemaModel` answers any prompt with minimal schema-valid data: a smoke-test model.
- :func:`forbid_model_requests` / :func:`allow_model_requests`: the switch that makes real adapters
  raise ``ModelCallForbiddenError`` before any I/O. The pytest fixture ``no_model_requests`` lives in
  :mod:`chronomem.llm.pytest_plugin` (it imports pytest) and is re-exported here on first access.

Example::

    def answer(prompt, context):
        if prompt.name == "extract_entities":
            return ExtractedEntities(entities=[ExtractedEntity(name=context.speaker)])
        raise AssertionError(f"unexpected prompt {prompt.name}")

    model = FunctionModel(answer)
    completion = await model.complete(EXTRACT_ENTITIES, context)
    assert model.calls == [("extract_entities", context)]
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import inspect
import json
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from chronomem.errors import InvalidInputError
from chronomem.llm.accounting import estimate_message_tokens
from chronomem.llm.answering import Reply, answer_prompt
from chronomem.llm.base import Completion, Message, Prompt, Usage
from chronomem.llm.budget import output_cap
from chronomem.llm.minimal import minimal_instance_data
from chronomem.providers.guard import allow_model_requests, forbid_model_requests
from chronomem.providers.tokens import estimate_tokens

__all__ = [
    "AnswerFunction",
    "FunctionModel",
    "SchemaModel",
    "ScriptedModel",
    "allow_model_requests",
    "forbid_model_requests",
    "serialize_answer",
]

AnswerValue = BaseModel | dict[str, Any] | list[Any] | str
AnswerFunction = Callable[[Prompt[Any, Any], Any], AnswerValue | Awaitable[AnswerValue]]


def _json_default(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return str(value)


def serialize_answer(value: Any) -> str:
    """The text a model would have sent for ``value`` (strings pass through untouched)."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, dict | list):
        return json.dumps(value, default=_json_default)
    raise InvalidInputError(
        f"a FunctionModel callback returned {type(value).__name__}; return a pydantic model, a dict or a str"
    )


class FunctionModel:
    """A :class:`~chronomem.llm.base.LanguageModel` whose answers come from ``callback(prompt, context)``.

    ``callback`` may be sync or async. On a corrective retry it is called again with the same
    prompt name and context, and ``prompt.messages(context)`` then ends with the model's refused
    answer and the validation problem (so a callback can react to the correction if it wants).

    ``calls`` lists ``(prompt_name, context)`` for every request answered (a corrective retry adds
    one); ``usage`` sums the usage of every completion. ``latency_s`` awaits ``asyncio.sleep`` per
    request to simulate a provider. With ``enforce_output_limit`` an answer whose estimated size
    exceeds the prompt's output cap (:func:`~chronomem.llm.budget.output_cap`) is cut off there, as a
    real provider would cut it (``ModelTruncatedError``, or its complete items for a prompt that
    ``keeps_complete_items``).
    """

    def __init__(
        self,
        callback: AnswerFunction,
        *,
        model_name: str | None = None,
        latency_s: float = 0.0,
        corrective_retries: int = 1,
        enforce_output_limit: bool = True,
        writes_prose: bool = True,
    ) -> None:
        self._callback = callback
        self.writes_prose = writes_prose  # see chronomem.llm.base.writes_prose
        self.model_name = model_name or f"function:{getattr(callback, '__name__', 'callback')}"
        self.latency_s = latency_s
        self.corrective_retries = corrective_retries
        self.enforce_output_limit = enforce_output_limit
        self.calls: list[tuple[str, Any]] = []
        self.usage = Usage(model=self.model_name)

    @property
    def prompt_names(self) -> list[str]:
        return [name for name, _ in self.calls]

    async def _answer(self, prompt: Prompt[Any, Any], context: Any, messages: list[Message]) -> Reply:
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        self.calls.append((prompt.name, context))
        if messages != prompt.messages(context):
            frozen = list(messages)
            prompt = dataclasses.replace(prompt, build=lambda _context: list(frozen))
        value = self._callback(prompt, context)
        if inspect.isawaitable(value):
            value = await value
        text = serialize_answer(value)
        output_tokens = estimate_tokens(text)
        cap = output_cap(prompt, context)
        truncated = self.enforce_output_limit and output_tokens > cap
        if truncated:  # cut where a provider would have stopped writing
            text = text[: len(text) * cap // output_tokens]
        return Reply(
            text=text,
            input_tokens=estimate_message_tokens(messages),
            output_tokens=min(output_tokens, cap) if truncated else output_tokens,
            truncated=truncated,
            model=self.model_name,
        )

    async def complete(self, prompt: Prompt[Any, Any], context: Any) -> Completion[Any]:
        async def ask(messages: list[Message]) -> Reply:
            return await self._answer(prompt, context, messages)

        completion = await answer_prompt(
            prompt, context, ask, model=self.model_name, corrective_retries=self.corrective_retries, provider="function"
        )
        self.usage.add(completion.usage)
        return completion


class ScriptedModel(FunctionModel):
    """Answers each prompt with the next answer scripted for its name (one FIFO per prompt name).

    A corrective retry consumes the next answer too, so ``{"extract": [bad, good]}`` scripts a
    correction. Running out of answers for a name raises ``InvalidInputError`` (a test bug).
    """

    def __init__(self, script: Mapping[str, Sequence[AnswerValue]], *, latency_s: float = 0.0) -> None:
        self._queues = {name: deque(answers) for name, answers in script.items()}
        super().__init__(self._next_answer, model_name="scripted", latency_s=latency_s)

    def _next_answer(self, prompt: Prompt[Any, Any], context: Any) -> AnswerValue:
        queue = self._queues.get(prompt.name)
        if not queue:
            raise InvalidInputError(f"ScriptedModel has no answer left for prompt {prompt.name!r}")
        return queue.popleft()

    @property
    def unused(self) -> dict[str, int]:
        """Answers not consumed yet, per prompt name (a test can assert it is empty)."""
        return {name: len(queue) for name, queue in self._queues.items() if queue}


def _minimal_answer(prompt: Prompt[Any, Any], context: Any) -> dict[str, Any]:
    return minimal_instance_data(prompt.answer)


class SchemaModel(FunctionModel):
    """Answers every prompt with minimal schema-valid data for ``prompt.answer`` (a smoke model)."""

    def __init__(self, *, latency_s: float = 0.0) -> None:
        super().__init__(_minimal_answer, model_name="schema", latency_s=latency_s)


def __getattr__(name: str) -> Any:
    # The fixture needs pytest: it is imported only when a test asks for it (hence not in __all__).
    if name == "no_model_requests":
        from chronomem.llm.pytest_plugin import no_model_requests

        return no_model_requests
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
