"""Output caps sized from the answer schema.

A prompt declares ``max_output_tokens`` as its ceiling. When its answer schema bounds every list
(``maxItems``) and string (``maxLength``), no valid answer can be longer than a computable size, and
:func:`output_cap` sends that size instead, so a model that loops inside a grammar (local models do)
is stopped as soon as no valid answer can still come, not at a fixed ceiling far above it.

The bound is deliberately generous (it must never cut a valid answer): every optional property
counted, two characters per token of text (English averages three or more), one token per digit, a
fixed margin for whitespace. A schema with an unbounded list or string, free-form objects or untyped
values has no bound, and the declared ceiling is used as it is.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from chronomem.llm.base import Prompt
from chronomem.llm.cache import answer_schema

__all__ = ["OUTPUT_MARGIN_TOKENS", "output_cap", "schema_token_bound"]

OUTPUT_MARGIN_TOKENS = 16  # whitespace between tokens, a closing token some servers count
_CHARS_PER_TOKEN = 2
_UNBOUNDED_INTEGER_DIGITS = 20  # int64
_NUMBER_TOKENS = 24
_bounds: dict[type[BaseModel], int | None] = {}


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
        if node.get("additionalProperties") not in (None, False):
            return None  # free-form keys
        total = 2
        for key, value in node.get("properties", {}).items():
            value_tokens = self.tokens(value)
            if value_tokens is None:
                return None
            total += _text_tokens(len(key)) + 1 + value_tokens + 1
        return total

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


def _answer_bound(answer: type[BaseModel]) -> int | None:
    if answer not in _bounds:
        bound = schema_token_bound(answer_schema(answer))
        _bounds[answer] = None if bound is None else bound + OUTPUT_MARGIN_TOKENS
    return _bounds[answer]


def output_cap(prompt: Prompt[Any, Any]) -> int:
    """The output-token limit to send: the prompt's ceiling, lowered to what its schema allows."""
    bound = _answer_bound(prompt.answer)
    return prompt.max_output_tokens if bound is None else min(prompt.max_output_tokens, bound)
