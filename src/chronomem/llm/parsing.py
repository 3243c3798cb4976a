"""Tolerant extraction of a JSON answer from model text, then validation against the answer model.

Models wrap JSON in many ways even when asked not to: ```json fences, a sentence of prose before
it, a ``<think>…</think>`` block (reasoning models), trailing remarks. :func:`extract_json` strips
those and returns the first JSON value it can decode. Raw control characters inside strings (a
literal newline or tab, which JSON forbids but grammar-constrained local models emit) are accepted
as the characters they are, rather than costing a corrective retry; :func:`parse_answer` validates it and raises
:class:`InvalidAnswerError` carrying the raw text and a short description of the problem, which the
corrective retry shows back to the model.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chronomem.errors import ModelOutputError

__all__ = ["InvalidAnswerError", "extract_json", "parse_answer"]

Ans = TypeVar("Ans", bound=BaseModel)

_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
# strict=False: control characters inside strings are taken literally (the repair described above).
_DECODER = json.JSONDecoder(strict=False)
_MAX_SCAN_STARTS = 64  # bounds the work on long prose full of stray braces
_MAX_PROBLEM_CHARS = 1500


class InvalidAnswerError(ModelOutputError):
    """The answer text held no decodable JSON, or JSON that does not fit the answer model."""

    def __init__(self, problem: str, raw_text: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.raw_text = raw_text


def _strip_reasoning(text: str) -> str:
    text = _THINK_BLOCK.sub("", text)
    # Some servers strip the opening tag but keep the closing one: the answer follows the last close.
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    return text.strip()


def _scan_for_json(text: str) -> Any:
    starts = [i for i, ch in enumerate(text) if ch in "{["][:_MAX_SCAN_STARTS]
    for start in starts:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        return value
    raise ValueError("no JSON object found in the answer")


def extract_json(text: str) -> Any:
    """The JSON value in ``text``, tolerating reasoning blocks, code fences and surrounding prose.

    Raises ``ValueError`` when nothing decodes.
    """
    body = _strip_reasoning(text)
    try:
        return _DECODER.decode(body)
    except json.JSONDecodeError:
        pass
    for fenced in _FENCE.findall(body):
        try:
            return _DECODER.decode(fenced.strip())
        except json.JSONDecodeError:
            continue
    return _scan_for_json(body)


def _describe(error: ValidationError) -> str:
    lines = []
    for item in error.errors(include_url=False):
        location = ".".join(str(part) for part in item["loc"]) or "(root)"
        lines.append(f"- {location}: {item['msg']}")
    return "\n".join(lines)[:_MAX_PROBLEM_CHARS]


def _single_field(answer: type[BaseModel]) -> str | None:
    fields = list(answer.model_fields)
    return fields[0] if len(fields) == 1 else None


def parse_answer(text: str, answer: type[Ans]) -> Ans:
    """Extract the JSON in ``text`` and validate it as ``answer``; raises :class:`InvalidAnswerError`."""
    try:
        data = extract_json(text)
    except ValueError as exc:
        raise InvalidAnswerError(f"the answer is not valid JSON ({exc})", text) from exc
    # A bare list for a one-field model (``{"items": [...]}``) is a common and unambiguous shortcut.
    field = _single_field(answer)
    if isinstance(data, list) and field is not None:
        data = {field: data}
    try:
        return answer.model_validate(data)
    except ValidationError as exc:
        raise InvalidAnswerError(
            f"the JSON does not match the {answer.__name__} schema:\n{_describe(exc)}", text
        ) from exc
