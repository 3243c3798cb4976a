"""Tolerant extraction of a JSON answer from model text, then validation against the answer model.

Models wrap JSON in many ways even when asked not to: ```json fences, a sentence of prose before
it, a ``<think>…</think>`` block (reasoning models), trailing remarks. :func:`extract_json` strips
those and returns the first JSON value it can decode. Raw control characters inside strings (a
literal newline or tab, which JSON forbids but grammar-constrained local models emit) are accepted
as the characters they are, rather than costing a corrective retry; :func:`parse_answer` validates it and raises
:class:`InvalidAnswerError` carrying the raw text and a short description of the problem, which the
corrective retry shows back to the model.

Before validation an answer is held to the bounds of the schema it was sent
(:func:`parse_within_bounds`, see :mod:`chronomem.llm.budget`). A list longer than its ``maxItems``
(or a map with more keys than its ``maxProperties``) keeps its first items and the rest is dropped
and counted: the items a model lists first are the ones it was surest of, and a second call would
cost a whole answer to lose the same tail. A string longer than its ``maxLength`` is refused (the
corrective retry), since cutting a sentence would change what it says.

An answer cut off at the output-token limit is refused, except for prompts whose answer is a list of
items that stand alone (extracted entities, facts): :func:`complete_items` keeps such an answer as
far as its complete items go. A model that runs to the limit has mostly begun repeating itself by
then, and what it wrote first is what it knew.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import from_json

from chronomem.errors import ModelOutputError
from chronomem.llm.cache import answer_schema

__all__ = [
    "InvalidAnswerError",
    "complete_items",
    "extract_json",
    "parse_answer",
    "parse_within_bounds",
    "trim_to_schema",
    "validate_within_bounds",
]

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


def complete_items(text: str) -> Any:
    """What an answer cut off mid-way said for sure: its JSON as far as it got, without the item of
    its outermost list that was being written when the cut came (that item may lack a field it was
    about to get, and a fact without its end date says something else). Raises ``ValueError`` when
    no JSON value was begun.

    The outermost list is the top-level list the answer was writing: the answer's last key's value
    (``{"facts": [...]``) or the answer itself when it is a list. An item that happens to be
    complete at the cut is dropped too: a loss of one item, never a wrong one.
    """
    body = _strip_reasoning(text)
    fenced = re.match(r"```[ \t]*(?:json|JSON)?[ \t]*\n?", body)
    body = body[fenced.end() :] if fenced else body
    start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ValueError("no JSON value was begun before the cut")
    data = from_json(body[start:], allow_partial="trailing-strings")  # a cut string shows where the cut is
    if isinstance(data, list):
        if len(data) < 2:
            raise ValueError("no item was complete before the cut")
        return data[:-1]
    if not isinstance(data, dict) or not data:
        raise ValueError("the cut came before any item")
    last = next(reversed(data))
    if not isinstance(data[last], list):  # the cut came after the lists, in a key of its own
        return {key: value for key, value in data.items() if key != last}
    if len(data[last]) < 2 and len(data) == 1:
        raise ValueError("no item was complete before the cut")
    return {**data, last: data[last][:-1]}


def _describe(error: ValidationError) -> str:
    lines = []
    for item in error.errors(include_url=False):
        location = ".".join(str(part) for part in item["loc"]) or "(root)"
        lines.append(f"- {location}: {item['msg']}")
    return "\n".join(lines)[:_MAX_PROBLEM_CHARS]


def _single_field(answer: type[BaseModel]) -> str | None:
    fields = list(answer.model_fields)
    return fields[0] if len(fields) == 1 else None


_JSON_TYPES: dict[type, str] = {dict: "object", list: "array", str: "string"}


class _Trimmer:
    """Walks a JSON value beside its schema: cuts lists and maps to their bounds, notes long strings."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._defs: Mapping[str, Any] = schema.get("$defs", {})
        self._resolved: dict[tuple[int, str], Mapping[str, Any] | None] = {}  # a list's items share one node
        self.dropped = 0
        self.too_long: list[str] = []

    def _resolve(self, node: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
        key = (id(node), kind)  # the schema outlives the walk: ids stay unique
        if key not in self._resolved:
            self._resolved[key] = self._find(node, kind)
        return self._resolved[key]

    def _find(self, node: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
        """The (sub)schema that describes a value of JSON type ``kind``, following refs and unions."""
        seen = 0
        while "$ref" in node and seen < 32:  # refs to refs are rare; the bound guards a cycle
            node = self._defs.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
            seen += 1
        for union in ("anyOf", "oneOf"):
            for branch in node.get(union, ()):
                found = self._find(branch, kind)
                if found is not None:
                    return found
        return node if node.get("type") == kind else None

    def trim(self, value: Any, node: Mapping[str, Any], where: str) -> Any:
        kind = _JSON_TYPES.get(type(value))
        schema = self._resolve(node, kind) if kind else None
        if schema is None:
            return value
        if kind == "string":
            if len(value) > int(schema.get("maxLength", len(value))):
                self.too_long.append(f"- {where or '(root)'}: {len(value)} characters, at most {schema['maxLength']}")
            return value
        if kind == "array":
            limit = int(schema.get("maxItems", len(value)))
            self.dropped += max(0, len(value) - limit)
            items = schema.get("items", {})
            return [self.trim(item, items, f"{where}.{i}".lstrip(".")) for i, item in enumerate(value[:limit])]
        return self._object(value, schema, where)

    def _object(self, value: dict[str, Any], schema: Mapping[str, Any], where: str) -> dict[str, Any]:
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        result: dict[str, Any] = {}
        others = 0
        limit = int(schema.get("maxProperties", len(value)))
        for key, item in value.items():
            if key not in properties and extra is False:  # a key the schema leaves out (see limit_schema)
                self.dropped += item not in (None, "", [], {})  # written empty, nothing is lost
                continue
            if key not in properties and "maxProperties" in schema:
                others += 1
                if others > limit:
                    self.dropped += 1
                    continue
            sub = properties.get(key, extra if isinstance(extra, dict) else {})
            result[key] = self.trim(item, sub, f"{where}.{key}".lstrip("."))
        return result


def trim_to_schema(data: Any, schema: Mapping[str, Any]) -> tuple[Any, int, list[str]]:
    """``data`` held to ``schema``'s bounds: lists and maps cut to ``maxItems``/``maxProperties``.

    Returns the trimmed copy, how many items were dropped, and one line per string longer than its
    ``maxLength`` (left as it is: the caller refuses the answer).
    """
    trimmer = _Trimmer(schema)
    trimmed = trimmer.trim(data, schema, "")
    return trimmed, trimmer.dropped, trimmer.too_long


def parse_within_bounds(text: str, answer: type[Ans], schema: Mapping[str, Any] | None = None) -> tuple[Ans, int]:
    """Extract the JSON in ``text``, hold it to ``schema`` (default: ``answer``'s own) and validate
    it as ``answer``; returns the answer and how many list items were dropped to fit.

    Raises :class:`InvalidAnswerError` (no JSON, a string over its bound, or a mismatch).
    """
    try:
        data = extract_json(text)
    except ValueError as exc:
        raise InvalidAnswerError(f"the answer is not valid JSON ({exc})", text) from exc
    return validate_within_bounds(data, text, answer, schema)


def validate_within_bounds(
    data: Any, text: str, answer: type[Ans], schema: Mapping[str, Any] | None = None
) -> tuple[Ans, int]:
    """:func:`parse_within_bounds` for JSON already decoded from ``text`` (kept for the error)."""
    # A bare list for a one-field model (``{"items": [...]}``) is a common and unambiguous shortcut.
    field = _single_field(answer)
    if isinstance(data, list) and field is not None:
        data = {field: data}
    data, dropped, too_long = trim_to_schema(data, answer_schema(answer) if schema is None else schema)
    if too_long:
        lines = "\n".join(too_long)[:_MAX_PROBLEM_CHARS]
        problem = f"the JSON has strings longer than the {answer.__name__} schema allows:\n{lines}"
        raise InvalidAnswerError(problem, text)
    try:
        return answer.model_validate(data), dropped
    except ValidationError as exc:
        raise InvalidAnswerError(
            f"the JSON does not match the {answer.__name__} schema:\n{_describe(exc)}", text
        ) from exc


def parse_answer(text: str, answer: type[Ans]) -> Ans:
    """Extract the JSON in ``text`` and validate it as ``answer`` (held to its schema's bounds, see
    :func:`parse_within_bounds`); raises :class:`InvalidAnswerError`."""
    return parse_within_bounds(text, answer)[0]
