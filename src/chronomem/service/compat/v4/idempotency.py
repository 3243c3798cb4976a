"""``Idempotency-Key``: the SDK sends one with every POST, PATCH and DELETE and sends the same key
again when it retries (after a timeout, a 5xx, a 409 or a 429). A write whose key the project has
seen answered with success is not applied again: the stored answer is replayed.

Answers are kept per project as documents of kind ``zep_v4_idempotency`` (the key, the method and
path it was sent with, the status and body), so every server process of a deployment sees them.
A key sent again with another method or path is refused (400). Only successful answers are kept:
a failed write changed nothing, so its retry runs again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from chronomem.errors import InvalidInputError, NotFoundError
from chronomem.service.auth import authenticate_request
from chronomem.service.deps import service_state

__all__ = ["IdempotentRoute"]

KIND = "zep_v4_idempotency"
HEADER = "idempotency-key"
_WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})
_MAX_KEY = 256


def _name(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class IdempotentRoute(APIRoute):
    """A route whose writes honour ``Idempotency-Key`` (reads pass through)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def route(request: Request) -> Response:
            key = request.headers.get(HEADER)
            if request.method not in _WRITES or not key:
                return await handle(request)
            if len(key) > _MAX_KEY:
                raise InvalidInputError(f"Idempotency-Key: at most {_MAX_KEY} characters")
            state = service_state(request)
            project = authenticate_request(request, state.control, required=state.settings.auth_required)
            sent = f"{request.method} {request.url.path}"
            try:
                stored = state.control.get_document(project.id, KIND, "", _name(key)).body
            except NotFoundError:
                stored = None
            if stored is not None:
                if stored["request"] != sent:
                    raise InvalidInputError(f"Idempotency-Key {key!r} was sent with {stored['request']}")
                return Response(stored["body"], status_code=stored["status"], media_type="application/json",
                                headers={"Idempotent-Replayed": "true"})
            response = await handle(request)
            if 200 <= response.status_code < 300:
                body = bytes(response.body).decode()
                json.loads(body)  # only JSON answers are kept (every v4 success is one)
                state.control.put_document(project.id, KIND, "", _name(key),
                                           {"request": sent, "status": response.status_code, "body": body})
            return response

        return route
