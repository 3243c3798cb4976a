"""Every limit the HTTP API puts on what it accepts, in one place.

- **The body**: larger than ``max_bytes`` (``settings.api.max_request_bytes``) is a 413, before any
  route runs (``BodySizeLimit``, a pure ASGI middleware), whether the client declared its length or
  streamed it; a body with a lone UTF-16 surrogate escape (``"\\ud800"``: not text, and no store
  can encode it) is a 422, also before any route; a body nested deeper than Python's JSON parser
  can follow is FastAPI's 400.
- **Ids** chosen by callers (users, threads, graphs, episodes, messages): ``Identifier``, 1 to 256
  characters, no control characters, no ``/`` (an id is a path segment), not ``.`` or ``..``.
- **Free-form JSON** (metadata, the data of a ``json`` episode): ``JsonObject`` and
  ``JsonDocumentText``: at most ``MAX_JSON_DEPTH`` levels of nesting, ``MAX_JSON_VALUES`` values in
  all, keys of at most ``MAX_JSON_KEY_CHARS`` characters, and finite numbers only (``NaN`` and
  ``Infinity`` are not JSON; Python's parser accepts them, so they are refused here); metadata has
  at most ``MAX_METADATA_KEYS`` top-level keys.
- **Timestamps**: ``chronomem.timeutil.SUPPORTED_RANGE`` (checked by ``UTCDateTime``).

A value over a limit is a 422 that names the field and the limit; nothing is written. The same
types serve every router (``/api/v3`` and the compatibility routers). ``StoredJson`` is the other
side: a response field that serializes stored JSON even if it predates these limits.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    WithJsonSchema,
    WrapSerializer,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chronomem.service.errors import error_body

__all__ = [
    "MAX_ID_CHARS",
    "MAX_JSON_DEPTH",
    "MAX_JSON_KEY_CHARS",
    "MAX_JSON_VALUES",
    "MAX_METADATA_KEYS",
    "BodySizeLimit",
    "Identifier",
    "JsonDocumentText",
    "JsonObject",
    "Refusal",
    "StoredJson",
    "check_json",
    "check_json_document",
    "lone_surrogate_escape",
    "native_refusal",
]

MAX_ID_CHARS = 256
MAX_JSON_DEPTH = 32
MAX_JSON_VALUES = 10_000
MAX_JSON_KEY_CHARS = 256
MAX_METADATA_KEYS = 64


_ID_PATTERN = r"^[^\x00-\x1f\x7f/]+$"
_ID_RULE = f"1 to {MAX_ID_CHARS} characters; no control characters, no '/', not '.' or '..'"


def _check_id(value: str) -> str:
    if not re.fullmatch(_ID_PATTERN, value) or value in (".", ".."):
        raise ValueError(f"not a valid id ({_ID_RULE})")
    return value


Identifier = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_ID_CHARS),
    AfterValidator(_check_id),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS, "pattern": _ID_PATTERN,
                    "not": {"enum": [".", ".."]}, "description": _ID_RULE}),
]
"""An id a caller chooses. ``/`` is refused because ids are path segments: a user ``a/b`` could be
created but never read back at ``/users/a/b``."""


def check_json(value: Any) -> Any:
    """``value`` unchanged if it is within the JSON limits; else ``ValueError`` naming the limit.

    Walks iteratively: a value nested beyond the limit is refused, not followed to a RecursionError.
    """
    pending: list[tuple[Any, int]] = [(value, 1)]
    count = 0
    while pending:
        item, depth = pending.pop()
        count += 1
        if count > MAX_JSON_VALUES:
            raise ValueError(f"more than {MAX_JSON_VALUES} JSON values")
        if isinstance(item, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
            if isinstance(item, dict):
                for key in item:
                    if not isinstance(key, str) or len(key) > MAX_JSON_KEY_CHARS:
                        raise ValueError(f"a key longer than {MAX_JSON_KEY_CHARS} characters")
                    if not _is_text(key):
                        raise ValueError("a key holds a lone UTF-16 surrogate, which is not text")
            children: Iterable[Any] = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
        elif isinstance(item, str) and not _is_text(item):
            raise ValueError("a string holds a lone UTF-16 surrogate, which is not text")
        elif isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"{item} is not a JSON number (only finite numbers)")
        elif not (item is None or isinstance(item, str | int | float | bool)):
            raise ValueError(f"{type(item).__name__} is not a JSON value")
    return value


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_JSON_LIMITS = (
    f"at most {MAX_JSON_DEPTH} levels deep, {MAX_JSON_VALUES} values, keys of at most "
    f"{MAX_JSON_KEY_CHARS} characters, finite numbers only"
)

JsonObject = Annotated[
    dict[str, Any],
    Field(max_length=MAX_METADATA_KEYS,
          description=f"a JSON object of at most {MAX_METADATA_KEYS} keys, {_JSON_LIMITS}"),
    AfterValidator(check_json),
]
"""Caller metadata: free-form JSON within the limits."""


def check_json_document(text: str) -> str:
    """``text`` unchanged if it parses as JSON within the limits; else ``ValueError``."""
    try:
        parsed = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:
        raise ValueError(f"must be JSON: {exc}") from None
    check_json(parsed)
    return text


JsonDocumentText = Annotated[str, AfterValidator(check_json_document)]
"""The text of a JSON document (a ``json`` episode), checked against the JSON limits."""


def _serialize_stored(value: Any, handler: SerializerFunctionWrapHandler) -> Any:
    try:
        check_json(value)
    except ValueError:
        # Stored before the limits existed (it may be too deep to serialize): keep the record readable.
        return {"_unreadable": f"stored JSON beyond the limits ({_JSON_LIMITS}); replace it"}
    return handler(value)


StoredJson = Annotated[dict[str, Any], WrapSerializer(_serialize_stored)]
"""Stored free-form JSON in a response: one record's oversized metadata cannot fail a whole list."""


_SURROGATE_ESCAPE = re.compile(rb"\\+u[dD][89a-fA-F][0-9a-fA-F]{2}")


def lone_surrogate_escape(body: bytes) -> str | None:
    """The first ``\\uD800``-``\\uDFFF`` escape of a JSON text that is not half of a pair, if any.

    A match preceded by an even number of extra backslashes is literal text (``"\\\\ud800"``), not an
    escape. Cheap when the body holds no ``\\u`` at all, which is nearly always.
    """
    if b"\\u" not in body:
        return None
    pending_high: bytes | None = None
    last_end = -1
    for match in _SURROGATE_ESCAPE.finditer(body):
        backslashes = len(match.group()) - 5
        if backslashes % 2 == 0:  # an escaped backslash, then literal "u…"
            continue
        escape = match.group()[-6:]
        is_high = escape[3:4] in b"89abAB"
        adjacent = match.start() == last_end
        if pending_high is not None and not (adjacent and not is_high):
            return pending_high.decode()
        if pending_high is None and not is_high:
            return escape.decode()
        pending_high = escape if is_high else None
        last_end = match.end()
    return pending_high.decode() if pending_high is not None else None


# (path, status, kind, message) -> the status and body to answer: an API mounted under a prefix (Zep's
# compatibility APIs) answers a refusal in its own error shape
Refusal = Callable[[str, int, str, str], tuple[int, dict[str, Any]]]


def native_refusal(path: str, status: int, kind: str, message: str) -> tuple[int, dict[str, Any]]:
    return status, error_body(kind, message)


class BodySizeLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int, refusal: Refusal = native_refusal) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.refusal = refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse_size(scope, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse_size(scope, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        surrogate = lone_surrogate_escape(body)
        if surrogate is not None:
            await self._refuse(scope, send, 422, "ValidationError",
                               f"the body holds a lone UTF-16 surrogate escape ({surrogate}), which is not text")
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse_size(self, scope: Scope, send: Send) -> None:
        await self._refuse(scope, send, 413, "PayloadTooLargeError",
                           f"request body larger than {self.max_bytes} bytes")

    async def _refuse(self, scope: Scope, send: Send, status: int, kind: str, message: str) -> None:
        status, body = self.refusal(str(scope.get("path", "")), status, kind, message)
        payload = json.dumps(body).encode()
        await send({
            "type": "http.response.start", "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
        })
        await send({"type": "http.response.body", "body": payload})
