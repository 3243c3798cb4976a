"""The one place where errors become HTTP responses.

Every error body has the same shape: ``{"error": {"type": ..., "message": ...}}`` (plus
``"details"`` for request validation), so a client needs one parser.

=============================  ======  ===========================================================
error                          status  meaning
=============================  ======  ===========================================================
(unparseable body)             400     the body is not JSON the parser can read (FastAPI's answer)
request validation (pydantic)  422     the body, path or query does not match the schema
``InvalidInputError``          422     the library refused a value; nothing changed
pydantic ``ValidationError``   422     a domain model refused a value taken from the request
``AuthenticationError``        401     no key, an unknown key or a revoked key
``NotFoundError``              404     nothing with that id in *your* project (other projects' objects too)
``ConflictError``              409     the id exists already, or the request contradicts stored state
(body size limit)              413     the body is larger than the configured limit (``limits.py``)
(method not allowed)           405     with ``Allow`` naming every method the path serves
``ConfigurationError``         503     the server lacks something this request needs (e.g. a model)
``StoreUnavailableError``      503     the store cannot be reached; retry later
``ModelError``                 502     the language model or embedder failed
any other ``ChronomemError``   500     a bug: reported, logged
=============================  ======  ===========================================================
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from chronomem.errors import (
    ChronomemError,
    ConfigurationError,
    ConflictError,
    InvalidInputError,
    ModelError,
    NotFoundError,
    StoreUnavailableError,
)

__all__ = ["AuthenticationError", "allowed_methods", "error_body", "install_error_handlers", "status_for"]

log = logging.getLogger(__name__)


class AuthenticationError(ChronomemError):
    """The request carries no valid API key."""


# Order matters: the first class an error is an instance of wins.
_STATUS: tuple[tuple[type[ChronomemError], int], ...] = (
    (AuthenticationError, 401),
    (InvalidInputError, 422),
    (NotFoundError, 404),
    (ConflictError, 409),
    (StoreUnavailableError, 503),
    (ConfigurationError, 503),
    (ModelError, 502),
)


def status_for(exc: ChronomemError) -> int:
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def error_body(kind: str, message: str, details: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"type": kind, "message": message}
    if details is not None:
        error["details"] = details
    return {"error": error}


def _describe(errors: list[dict[str, Any]]) -> str:
    parts = []
    for err in errors[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "request"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "; ".join(parts) + more


async def _on_domain_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ChronomemError)
    status = status_for(exc)
    if status >= 500:
        log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(error_body(type(exc).__name__, str(exc)), status_code=status, headers=headers)


async def _on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    details = jsonable_encoder([{k: e[k] for k in ("loc", "msg", "type") if k in e} for e in errors])
    return JSONResponse(error_body("ValidationError", _describe(errors), details), status_code=422)


async def _on_model_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ValidationError)
    errors = [dict(e) for e in exc.errors()]
    return JSONResponse(error_body("ValidationError", _describe(errors)), status_code=422)


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(allowed_methods(request))
    return JSONResponse(error_body("HTTPError", str(exc.detail)), status_code=exc.status_code, headers=headers)


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (Starlette's own 405 names only the first
    route whose path matched, e.g. ``GET`` for ``/users/{id}`` that also takes PATCH and DELETE)."""
    routes = request.app.router.routes
    return [method for method in _METHODS
            if any(route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes)]


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s crashed", request.method, request.url.path, exc_info=exc)
    return JSONResponse(error_body("InternalError", "internal error; see the server log"), status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ChronomemError, _on_domain_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(ValidationError, _on_model_validation_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(Exception, _on_unexpected)
