"""The answer path every model shares: ask → tolerant parse → validate → one corrective retry.

An adapter (or test double) only supplies ``ask``: a coroutine that sends chat messages and returns
the raw :class:`Reply`. :func:`answer_prompt` does the rest the same way for everyone, so a test
double's answer meets exactly the checks a real provider's answer meets:

- the answer is held to the schema it was sent (tightened for the context, see
  :mod:`chronomem.llm.budget`): surplus list items are dropped and counted (``Usage.items_dropped``);
- a reply cut off at the output-token limit raises ``ModelTruncatedError`` (never parsed: a
  truncated JSON that happens to parse would be a silent loss), unless the prompt's items stand
  alone (``Prompt.keeps_complete_items``): then the answer keeps its complete items
  (:func:`~chronomem.llm.parsing.complete_items`), counted in ``Usage.answers_cut_off``;
- an answer that does not parse or validate is shown back to the model with the problem, once;
  if the second answer fails too, :class:`~chronomem.llm.parsing.InvalidAnswerError` (a
  ``ModelOutputError``) is raised;
- the usage of all attempts is summed, recorded (see :mod:`chronomem.llm.accounting`) and returned;
- each call is one ``model_call`` span and one row of the model metrics (:mod:`chronomem.telemetry`:
  calls, tokens by kind, estimated cost, latency, errors by type), labelled by provider, model and
  prompt.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from chronomem.errors import ModelTruncatedError
from chronomem.llm.accounting import record_usage
from chronomem.llm.base import Completion, Message, Prompt, Usage
from chronomem.llm.budget import answer_schema_for, output_cap
from chronomem.llm.parsing import InvalidAnswerError, complete_items, parse_within_bounds, validate_within_bounds
from chronomem.telemetry import estimate_cost, metrics, span

__all__ = ["Ask", "Reply", "answer_prompt", "correction_message"]


@dataclass(frozen=True, slots=True)
class Reply:
    """One raw answer from a model: its text, token counts, and whether it hit the token limit.

    ``input_tokens`` counts the whole prompt; ``cached_input_tokens`` the part of it the provider
    served from its prompt cache (adapters translate each provider's way of reporting it).
    """

    text: str
    input_tokens: int
    output_tokens: int
    truncated: bool = False
    model: str | None = None
    cached_input_tokens: int = 0


Ask = Callable[[list[Message]], Awaitable[Reply]]


def correction_message(error: InvalidAnswerError) -> Message:
    """The user turn that shows the model why its previous answer was refused."""
    return Message(
        role="user",
        content=(
            f"Your previous answer could not be used: {error.problem}\n"
            "Answer again with only the corrected JSON, matching the required schema exactly."
        ),
    )


def _truncation(prompt: Prompt[Any, Any], context: Any) -> ModelTruncatedError:
    return ModelTruncatedError(
        f"prompt {prompt.name!r}: the answer was cut off at its output-token limit "
        f"(max_output_tokens={output_cap(prompt, context)}); raise the prompt's limit or ask for less"
    )


async def answer_prompt(
    prompt: Prompt[Any, Any],
    context: Any,
    ask: Ask,
    *,
    model: str,
    corrective_retries: int = 1,
    provider: str = "other",
) -> Completion[Any]:
    """Answer ``prompt`` through ``ask``, validating the answer; see the module docstring.
    ``provider`` names the adapter in metrics and spans: ``openai``, ``anthropic``, or ``function`` (a
    Python function answers: the test doubles, the heuristic stand-in)."""
    usage = Usage(model=model)
    started = time.perf_counter()
    error: str | None = None
    try:
        with span("model_call", prompt=prompt.name, model=model, provider=provider):
            return await _answer(prompt, context, ask, usage, corrective_retries)
    except Exception as exc:
        error = type(exc).__name__
        raise
    finally:
        usage.latency_s = time.perf_counter() - started
        if usage.calls:
            record_usage(usage)
        metrics.record_model_call(
            provider=provider,
            model=model,
            prompt=prompt.name,
            calls=usage.calls,
            input_tokens=usage.input_tokens,
            cached_input_tokens=usage.cached_input_tokens,
            output_tokens=usage.output_tokens,
            seconds=usage.latency_s,
            error=error,
            cost_usd=estimate_cost(model, usage.input_tokens, usage.cached_input_tokens, usage.output_tokens),
        )


async def _answer(
    prompt: Prompt[Any, Any], context: Any, ask: Ask, usage: Usage, corrective_retries: int
) -> Completion[Any]:
    messages = prompt.messages(context)
    schema = answer_schema_for(prompt, context)
    for attempt in range(corrective_retries + 1):
        reply = await ask(messages)
        usage.calls += 1
        usage.input_tokens += reply.input_tokens
        usage.cached_input_tokens += reply.cached_input_tokens
        usage.output_tokens += reply.output_tokens
        usage.by_prompt[prompt.name] = usage.by_prompt.get(prompt.name, 0) + 1
        if reply.truncated:
            return _complete_items_of(prompt, context, reply, schema, usage)
        try:
            output, dropped = parse_within_bounds(reply.text, prompt.answer, schema)
        except InvalidAnswerError as error:
            if attempt == corrective_retries:
                raise InvalidAnswerError(
                    f"prompt {prompt.name!r}: {error.problem} (after {corrective_retries} corrective retry)",
                    error.raw_text,
                ) from error
            usage.retries += 1
            messages = [*messages, Message("assistant", reply.text), correction_message(error)]
            continue
        usage.items_dropped += dropped
        return Completion(output=output, usage=usage)
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover


def _complete_items_of(
    prompt: Prompt[Any, Any], context: Any, reply: Reply, schema: Any, usage: Usage
) -> Completion[Any]:
    """The complete items of an answer cut off at its limit, for a prompt whose items stand alone;
    ``ModelTruncatedError`` for any other prompt, or when nothing complete was written."""
    error = _truncation(prompt, context)
    if not prompt.keeps_complete_items:
        raise error
    try:
        output, dropped = validate_within_bounds(complete_items(reply.text), reply.text, prompt.answer, schema)
    except (ValueError, InvalidAnswerError) as invalid:
        raise error from invalid
    usage.answers_cut_off += 1
    usage.items_dropped += dropped
    return Completion(output=output, usage=usage)
