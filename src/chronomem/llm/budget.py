"""Output caps sized from the answer schema.

A prompt declares ``max_output_tokens`` as its ceiling. When its answer schema bounds every list
(``maxItems``), string (``maxLength``) and map (``maxProperties`` with bounded keys and values), no
valid answer can be longer than a computable size, and :func:`output_cap` sends that size instead,
so a model that loops inside a grammar (local models do) is stopped as soon as no valid answer can
still come, not at a fixed ceiling far above it.

A prompt may tighten its schema from its context (``Prompt.limits``: "at most one verdict per
question shown"): :func:`answer_schema_for` is that tightened schema. It is the one sent to a
server that compiles it into a grammar (which then enforces it), the one answers are trimmed to
before validation (:func:`chronomem.llm.parsing.parse_within_bounds`) and the one the cap is
computed from, so the cap never cuts an answer the schema it was sent allows. Where the schema is
part of the prompt's tokens instead (OpenAI's ``json_schema``, Anthropic's tool, the schema
instruction), the answer model's own is sent, so that every call of a prompt shares a cacheable
prefix (:mod:`chronomem.llm.openai`, :mod:`chronomem.llm.anthropic`).

The bound is deliberately generous (it must never cut a valid answer): every optional property
counted, two characters per token of text (English averages three or more), one token per digit, a
fixed margin for whitespace. A schema with an unbounded list or string, free-form objects or untyped
values has no bound, and the declared ceiling is used as it is.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, WithJsonSchema

from chronomem.llm.base import Prompt
from chronomem.llm.cache import answer_schema

__all__ = [
    "OUTPUT_MARGIN_TOKENS",
    "answer_schema_for",
    "limit_schema",
    "output_cap",
    "schema_token_bound",
    "text_bound",
]

OUTPUT_MARGIN_TOKENS = 16  # whitespace between tokens, a closing token some servers count
_CHARS_PER_TOKEN = 2
_UNBOUNDED_INTEGER_DIGITS = 20  # int64
_NUMBER_TOKENS = 24


def text_bound(max_chars: int, min_chars: int = 0) -> WithJsonSchema:
    """``Annotated[str, text_bound(n)]``: a string of at most ``n`` characters *in the answer schema*.

    Only the schema says so (and answers are held to it, see :mod:`chronomem.llm.parsing`); code
    that builds the model itself is not bound, as it would be by ``Field(max_length=n)``.
    """
    extra = {"minLength": min_chars} if min_chars else {}
    return WithJsonSchema({"type": "string", "maxLength": max_chars, **extra})


def _text_tokens(characters: int) -> int:
    return -(-characters // _CHARS_PER_TOKEN) + 2  # the quotes


def _integer_tokens(node: dict[str, Any]) -> int:
    limits = [abs(int(node[k])) for k in ("minimum", "maximum") if k in node]
    if len(limits) < 2:
        return _UNBOUNDED_INTEGER_DIGITS + 1
    return max(len(str(limit)) for limit in limits) + 1  # one token per digit, and a sign


class _Bounder:
    def __init__(self, defs: dict[str, Any]) -> None:
        self._defs = defs
        self._resolving: set[str] = set()

    def tokens(self, node: dict[str, Any]) -> int | None:
        if "$ref" in node:
            return self._ref(node["$ref"])
        if "const" in node or "enum" in node:
            values = [node["const"]] if "const" in node else node["enum"]
            return max(_text_tokens(len(json.dumps(value))) for value in values)
        for union in ("anyOf", "oneOf"):
            if union in node:
                return self._largest(node[union])
        kind = node.get("type")
        if isinstance(kind, list):
            return self._largest([{**node, "type": k} for k in kind])
        return self._typed(kind, node)

    def _typed(self, kind: Any, node: dict[str, Any]) -> int | None:
        if kind == "object":
            return self._object(node)
        if kind == "array":
            if "maxItems" not in node or not isinstance(node.get("items"), dict):
                return None
            item = self.tokens(node["items"])
            return None if item is None else 2 + int(node["maxItems"]) * (item + 1)
        if kind == "string":
            return _text_tokens(int(node["maxLength"])) if "maxLength" in node else None
        if kind == "integer":
            return _integer_tokens(node)
        if kind == "number":
            return _NUMBER_TOKENS
        if kind in ("boolean", "null"):
            return 2
        return None  # untyped: anything goes

    def _object(self, node: dict[str, Any]) -> int | None:
        total = 2
        extra = node.get("additionalProperties")
        if extra not in (None, False):
            entries = self._map_entries(node, extra)
            if entries is None:
                return None  # free-form keys or values
            total += entries
        for key, value in node.get("properties", {}).items():
            value_tokens = self.tokens(value)
            if value_tokens is None:
                return None
            total += _text_tokens(len(key)) + 1 + value_tokens + 1
        return total

    def _map_entries(self, node: dict[str, Any], value: Any) -> int | None:
        """A map (``dict[str, V]``) is bounded by its count of keys, their length and its values."""
        keys = node.get("propertyNames", {})
        if not isinstance(value, dict) or "maxProperties" not in node or "maxLength" not in keys:
            return None
        value_tokens = self.tokens(value)
        if value_tokens is None:
            return None
        return int(node["maxProperties"]) * (_text_tokens(int(keys["maxLength"])) + 1 + value_tokens + 1)

    def _largest(self, options: list[Any]) -> int | None:
        sizes = [self.tokens(option) for option in options]
        return None if not sizes or any(size is None for size in sizes) else max(s for s in sizes if s is not None)

    def _ref(self, ref: str) -> int | None:
        name = ref.rsplit("/", 1)[-1]
        if name in self._resolving or name not in self._defs:
            return None  # recursive (a tree of any depth) or not resolvable
        self._resolving.add(name)
        try:
            return self.tokens(self._defs[name])
        finally:
            self._resolving.discard(name)


def schema_token_bound(schema: dict[str, Any]) -> int | None:
    """The most tokens a JSON value valid under ``schema`` can take, or ``None`` if unbounded."""
    return _Bounder(schema.get("$defs", {})).tokens(schema)


_LIMIT_KEYWORDS = {"array": "maxItems", "string": "maxLength", "object": "maxProperties", "integer": "maximum"}


def _tighten(node: dict[str, Any], limit: int) -> bool:
    """Lower the bound of ``node`` (or of the branches of its union) to ``limit``; whether any was."""
    tightened = False
    for branch in (node, *node.get("anyOf", ()), *node.get("oneOf", ())):
        kind = branch.get("type")
        keyword = _LIMIT_KEYWORDS.get(kind) if isinstance(kind, str) else None
        if keyword is not None:
            branch[keyword] = min(int(branch.get(keyword, limit)), max(0, limit))
            if keyword == "maxProperties" and branch[keyword] == 0:
                branch["additionalProperties"] = False  # what grammars enforce: llama.cpp ignores maxProperties
            tightened = True
    return tightened


def limit_schema(schema: Mapping[str, Any], limits: Mapping[str, int]) -> dict[str, Any]:
    """A copy of ``schema`` whose fields named ``"Model.field"`` in ``limits`` are bounded tighter.

    The limit is a list's ``maxItems``, a string's ``maxLength``, a map's ``maxProperties`` or an
    integer's ``maximum`` (``"Model.field[]"``: the items of a list field); a limit never loosens a
    bound the schema already has. An optional field limited to 0 is left out of the schema (and its
    model's other keys forbidden): a field the call cannot use is not offered, so a model held to
    the schema does not spend output tokens writing it empty; the answer model's default fills it.
    An unknown name is a ``ValueError`` (a typo in a prompt would otherwise pass silently).
    """
    tightened = copy.deepcopy(dict(schema))
    defs = tightened.get("$defs", {})
    left_out: set[tuple[str, str]] = set()
    for key, limit in limits.items():
        model, _, field = key.partition(".")
        if (model, field.removesuffix("[]")) in left_out:
            continue  # the bound of a field no longer offered (its items, say) is moot
        owner = defs.get(model) or (tightened if tightened.get("title") == model else None)
        node = (owner or {}).get("properties", {}).get(field.removesuffix("[]"))
        if field.endswith("[]") and isinstance(node, dict):
            node = node.get("items")
        if not isinstance(node, dict) or not _tighten(node, limit):
            kinds = "list, string, map or integer"
            raise ValueError(f"limit {key!r}: no {kinds} field {field!r} on {model!r} in the schema")
        if limit <= 0 and owner is not None and not field.endswith("[]") and field not in owner.get("required", ()):
            del owner["properties"][field]
            owner["additionalProperties"] = False
            left_out.add((model, field))
    return tightened


@lru_cache(maxsize=1024)
def _limited(answer: type[BaseModel], limits: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    return limit_schema(answer_schema(answer), dict(limits))


def answer_schema_for(prompt: Prompt[Any, Any], context: Any = None) -> dict[str, Any]:
    """The answer schema of ``prompt`` for ``context``: the model's own, tightened by ``prompt.limits``.

    Without a context (``None``) the model's own schema is returned: looser, never wrong. The dict
    is shared (built once per answer model and limits): do not change it.
    """
    if prompt.limits is None or context is None:
        return answer_schema(prompt.answer)
    return _limited(prompt.answer, tuple(sorted(prompt.limits(context).items())))  # type: ignore[arg-type]


@lru_cache(maxsize=1024)
def _bound_of(answer: type[BaseModel], limits: tuple[tuple[str, int], ...]) -> int | None:
    schema = _limited(answer, limits) if limits else answer_schema(answer)
    bound = schema_token_bound(schema)
    return None if bound is None else bound + OUTPUT_MARGIN_TOKENS


def output_cap(prompt: Prompt[Any, Any], context: Any = None) -> int:
    """The output-token limit to send: the prompt's ceiling, lowered to what its schema (tightened
    for ``context``, see :func:`answer_schema_for`) allows."""
    limits = () if prompt.limits is None or context is None else tuple(sorted(prompt.limits(context).items()))
    bound = _bound_of(prompt.answer, limits)  # type: ignore[arg-type]  # classes are hashable
    return prompt.max_output_tokens if bound is None else min(prompt.max_output_tokens, bound)
