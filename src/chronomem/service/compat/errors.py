"""Errors as Zep's SDK expects them: ``{"message": ...}`` bodies, 400 for bad input (the SDK raises
``BadRequestError``), 404 (``NotFoundError``), 409 for duplicates, and 501 for a call or a field
chronomem does not implement, with a body that names the SDK call.

The status of each library error comes from the native API's table
(:func:`chronomem.service.errors.status_for`); only invalid input changes, 422 → 400, because that is
what Zep answers and what the SDK turns into ``BadRequestError``.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from chronomem.errors import ChronomemError
from chronomem.service.compat.models import ApiErrorBody
from chronomem.service.errors import status_for

__all__ = [
    "COMPAT_ERROR_RESPONSES",
    "NotImplementedCallError",
    "compat_http_error",
    "install_compat_error_handlers",
    "refuse_unsupported",
]

log = logging.getLogger(__name__)

# Every status a compatibility route can answer besides its success, for its OpenAPI document (the
# schema-driven fuzz test holds the routes to it).
COMPAT_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ApiErrorBody, "description": description} for status, description in {
        400: "invalid input (Zep answers 400 where the native API answers 422); nothing was changed",
        401: "missing, unknown or revoked API key",
        404: "no such object in the caller's project",
        409: "the id exists already, or the request contradicts stored data",
        413: "request body too large",
        429: "rate limit of the project exceeded",
        501: "a Zep call, or an option of one, that chronomem does not implement; the message names it",
        503: "the store is unreachable or the server lacks a model it needs",
    }.items()
}


class NotImplementedCallError(ChronomemError):
    """A Zep call, or an option of one, that chronomem does not implement (501)."""


def refuse_unsupported(call: str, **fields: Any) -> None:
    """Raise ``NotImplementedCallError`` naming ``call`` and each field that was given a value
    (``None``, ``False`` and empty collections count as not given)."""
    given = sorted(name for name, value in fields.items() if value not in (None, False, [], {}, ""))
    if given:
        raise NotImplementedCallError(f"{call}: chronomem does not implement {', '.join(given)}")


def refusal_body(status: int, message: str) -> tuple[int, dict[str, Any]]:
    """A request refused before any route ran (too large, not text), in this API's shape: Zep
    answers invalid input 400 where the native API answers 422."""
    return (400 if status == 422 else status), {"message": message}


def _body(message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"message": message}, status_code=status, headers=headers)


def _describe(errors: list[dict[str, Any]]) -> str:
    parts = []
    for err in errors[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "request"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


async def _on_domain_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ChronomemError)
    if isinstance(exc, NotImplementedCallError):
        return _body(str(exc), 501)
    status = status_for(exc)
    if status == 422:
        status = 400
    if status >= 500:
        log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
    return _body(str(exc), status, {"WWW-Authenticate": "Api-Key"} if status == 401 else None)


async def _on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError | ValidationError)
    return _body(_describe([dict(e) for e in exc.errors()]), 400)


async def compat_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    return _body(str(exc.detail), exc.status_code, dict(exc.headers) if exc.headers else None)


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s crashed", request.method, request.url.path, exc_info=exc)
    return _body("internal error; see the server log", 500)


def install_compat_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ChronomemError, _on_domain_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(ValidationError, _on_validation_error)
    app.add_exception_handler(StarletteHTTPException, compat_http_error)
    app.add_exception_handler(Exception, _on_unexpected)
