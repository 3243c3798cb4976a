"""The Zep v4 compatibility API: ``/api/v4`` in the wire format of Zep's ``zep-cloud`` 4.x SDK, so a
Zep user, and Zep's framework integrations, switch to chronomem by changing the SDK's ``base_url``.

    from zep_cloud.client import Zep
    client = Zep(api_key=KEY, base_url="http://127.0.0.1:8000/api/v4")

A FastAPI application of its own beside the v3 one at ``/api/v2`` (:mod:`chronomem.service.compat`),
with Zep's v4 error body and its own OpenAPI document (``/api/v4/openapi.json``). Its routes map
each SDK call onto the same project operations (:mod:`chronomem.app.tenancy`) and the same search,
context, ontology and user-node code as v3; what v4 adds is addressing by UUID
(:mod:`~chronomem.app.addresses`), tasks for every write
(:mod:`~chronomem.service.compat.v4.tasks`), ``Idempotency-Key``
(:mod:`~chronomem.service.compat.v4.idempotency`) and cursor pages. Calls outside the memory
subset answer 501 naming the call (:mod:`~chronomem.service.compat.v4.routes.unsupported`).
"""

from __future__ import annotations

import inspect

from fastapi import FastAPI, Request, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from chronomem.service.compat.v4.errors import ERROR_RESPONSES, http_error, install_error_handlers
from chronomem.service.compat.v4.routes import batches, graphs, items, project, threads, unsupported, users

__all__ = ["V4_PREFIX", "create_v4_app", "mount_v4"]

V4_PREFIX = "/api/v4"


def create_v4_app(parent: FastAPI) -> FastAPI:
    """The v4 app; it shares ``parent``'s state (the memory and control plane its lifespan opens)."""
    app = FastAPI(
        title="chronomem: Zep v4 compatibility API",
        description="The routes of Zep's `zep-cloud` 4.x SDK. Authenticate with `Authorization: Api-Key <key>`.",
        version="0.1.0",
    )
    app.state = parent.state
    install_error_handlers(app)
    for module in (users, threads, graphs, items, project, batches):
        app.include_router(module.router, responses=ERROR_RESPONSES)
    app.include_router(unsupported.router)  # last: it answers whatever the others did not
    return app


def mount_v4(parent: FastAPI) -> None:
    """Mount the v4 app under ``V4_PREFIX``; call after the parent's error handlers are installed.
    HTTP errors the parent answers under the prefix (a path the mount cannot match) get v4's body."""
    parent.mount(V4_PREFIX, create_v4_app(parent))
    previous = parent.exception_handlers[StarletteHTTPException]

    async def on_http_error(request: Request, exc: Exception) -> Response:
        path = request.url.path
        if path == V4_PREFIX or path.startswith(V4_PREFIX + "/"):
            return await http_error(request, exc)
        answer = previous(request, exc)
        return await answer if inspect.isawaitable(answer) else answer

    parent.add_exception_handler(StarletteHTTPException, on_http_error)
