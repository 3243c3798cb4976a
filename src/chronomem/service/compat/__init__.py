"""The Zep compatibility API: ``/api/v2`` in the wire format of Zep's ``zep-cloud`` 3.x SDK, so a
Zep user switches to chronomem by changing the SDK's ``base_url``.

    from zep_cloud.client import Zep
    client = Zep(api_key=KEY, base_url="http://127.0.0.1:8000/api/v2")

It is a FastAPI application of its own, mounted by the native one (:func:`mount_compat`), with its
own error bodies (Zep's ``{"message": …}``, 400 for bad input) and OpenAPI document
(``/api/v2/openapi.json``). Its routes map each SDK call onto the same project operations the native
API uses (:mod:`chronomem.app.tenancy`); calls outside the memory subset answer 501 naming
the call (:mod:`~chronomem.service.compat.routes.unsupported`).
"""

from __future__ import annotations

import inspect

from fastapi import FastAPI, Request, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from chronomem.service.compat.errors import COMPAT_ERROR_RESPONSES, compat_http_error, install_compat_error_handlers
from chronomem.service.compat.routes import graph, items, project, tasks, threads, unsupported, users

__all__ = ["COMPAT_PREFIX", "create_compat_app", "mount_compat"]

COMPAT_PREFIX = "/api/v2"


def create_compat_app(parent: FastAPI) -> FastAPI:
    """The compatibility app; it shares ``parent``'s state (the memory and control plane its
    lifespan opens)."""
    app = FastAPI(
        title="chronomem: Zep v2 compatibility API",
        description="The routes of Zep's `zep-cloud` 3.x SDK. Authenticate with `Authorization: Api-Key <key>`.",
        version="0.1.0",
    )
    app.state = parent.state
    install_compat_error_handlers(app)
    for module in (users, threads, items, graph, tasks, project):
        app.include_router(module.router, responses=COMPAT_ERROR_RESPONSES)
    app.include_router(unsupported.router)  # last: it answers whatever the others did not
    return app


def mount_compat(parent: FastAPI) -> None:
    """Mount the compatibility app under ``COMPAT_PREFIX``; call after the parent's error handlers
    are installed.

    A path the mount cannot match (Starlette's path pattern stops at a raw newline, so
    ``/api/v2/users/a%0Ab`` never reaches the compatibility app) is answered by the parent: its HTTP
    errors under the prefix still get Zep's body, which is what the SDK parses."""
    parent.mount(COMPAT_PREFIX, create_compat_app(parent))
    native = parent.exception_handlers[StarletteHTTPException]

    async def on_http_error(request: Request, exc: Exception) -> Response:
        path = request.url.path
        if path == COMPAT_PREFIX or path.startswith(COMPAT_PREFIX + "/"):
            return await compat_http_error(request, exc)
        answer = native(request, exc)
        return await answer if inspect.isawaitable(answer) else answer

    parent.add_exception_handler(StarletteHTTPException, on_http_error)
