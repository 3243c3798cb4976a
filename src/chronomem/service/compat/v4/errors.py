"""Errors as Zep's v4 SDK expects them: ``{"error": {"code", "message", "param", "details",
"request_id"}}``.

The status of each library error comes from the native API's table
(:func:`chronomem.service.errors.status_for`), with invalid input answered 400 as Zep does (the SDK
raises ``BadRequestError``). A call or an option chronomem does not implement answers 501 with code
``not_implemented`` and a message that names it.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from chronomem.errors import ChronomemError, ConflictError
from chronomem.service.compat.errors import NotImplementedCallError
from chronomem.service.compat.v4.models import ErrorOut
from chronomem.service.errors import status_for

__all__ = [
    "ERROR_RESPONSES",
    "DuplicateError",
    "error_response",
    "install_error_handlers",
    "refuse_unsupported",
]

log = logging.getLogger(__name__)

_CODES = {400: "bad_request", 401: "unauthorized", 404: "not_found", 405: "method_not_allowed", 409: "conflict",
          413: "content_too_large", 429: "rate_limited", 501: "not_implemented", 502: "upstream_error",
          503: "service_unavailable"}

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": description} for status, description in {
        400: "invalid input; nothing was changed",
        401: "missing, unknown or revoked API key",
        404: "no such object in the caller's project",
        409: "the external id is in use (details.uuid names the holder), or the request contradicts stored data",
        413: "request body too large",
        501: "a Zep call, or an option of one, that chronomem does not implement; the message names it",
        503: "the store is unreachable or the server lacks a model it needs",
    }.items()
}


class DuplicateError(ConflictError):
    """An external id already names an object of the project; ``uuid`` is that object's address."""

    def __init__(self, message: str, *, uuid: str) -> None:
        super().__init__(message)
        self.uuid = uuid


def refuse_unsupported(call: str, **fields: Any) -> None:
    """Raise ``NotImplementedCallError`` naming ``call`` and each field given a value (``None``,
    ``False`` and empty collections count as not given)."""
    given = sorted(name for name, value in fields.items() if value not in (None, False, [], {}, ""))
    if given:
        raise NotImplementedCallError(f"{call}: chronomem does not implement {', '.join(given)}")


def refusal_body(status: int, message: str) -> tuple[int, dict[str, Any]]:
    """A request refused before any route ran (too large, not text), in v4's error shape; invalid
    input is 400 as everywhere in v4."""
    status = 400 if status == 422 else status
    return status, {"error": {"code": _CODES.get(status, "internal_error"), "message": message,
                              "request_id": uuid.uuid4().hex}}


def error_response(status: int, message: str, *, param: str | None = None, details: dict[str, Any] | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"code": _CODES.get(status, "internal_error"), "message": message,
                            "request_id": uuid.uuid4().hex}
    if param is not None:
        body["param"] = param
    if details is not None:
        body["details"] = details
    return JSONResponse({"error": body}, status_code=status, headers=headers)


async def _on_domain_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ChronomemError)
    if isinstance(exc, NotImplementedCallError):
        return error_response(501, str(exc))
    status = status_for(exc)
    if status == 422:
        status = 400
    if status >= 500:
        log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
    details = {"uuid": exc.uuid} if isinstance(exc, DuplicateError) else None
    return error_response(status, str(exc), details=details,
                          headers={"WWW-Authenticate": "Api-Key"} if status == 401 else None)


async def _on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError | ValidationError)
    errors = [dict(e) for e in exc.errors()]
    first = errors[0] if errors else {}
    param = ".".join(str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path")) or None
    message = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ()) if p != 'body') or 'request'}: {e.get('msg', 'invalid')}"
        for e in errors[:5])
    return error_response(400, message, param=param)


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    return error_response(exc.status_code, str(exc.detail), headers=dict(exc.headers) if exc.headers else None)


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s crashed", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal error; see the server log")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ChronomemError, _on_domain_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(ValidationError, _on_validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, _on_unexpected)
