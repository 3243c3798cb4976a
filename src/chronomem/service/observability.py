"""What the HTTP app reports: a span and two metrics per request, and ``GET /metrics``.

:class:`RequestTelemetry` is a plain ASGI middleware (outermost, so it sees every answer, a 413
from the body limit and a 500 included). It labels metrics with the *route template* the router
matched (``/api/v3/users/{user_id}``; a mounted app's prefix included), never the path, so ids
never become labels; a path no route matched is ``unmatched``.

``GET /metrics`` (no key, like the probes: serve it on a private interface) refreshes the queue
gauges from the store, then answers the exposition text of this process, or of every process of
``chronomem serve --processes N`` (chronomem.telemetry.metrics).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.routing import Mount

from chronomem.app.workers import refresh_queue_metrics
from chronomem.service.deps import service_state
from chronomem.telemetry import annotate, metrics, span

__all__ = ["QUEUE_REFRESH_TIMEOUT_S", "RequestTelemetry", "metrics_router"]

log = logging.getLogger(__name__)

QUEUE_REFRESH_TIMEOUT_S = 5.0  # a slow store must not hang the scrape: the gauges keep their last values

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

metrics_router = APIRouter(tags=["probes"])


@metrics_router.get("/metrics", summary="Prometheus metrics (no key)", response_class=Response)
async def prometheus_metrics(request: Request) -> Response:
    state = service_state(request)
    try:
        async with asyncio.timeout(QUEUE_REFRESH_TIMEOUT_S):
            await refresh_queue_metrics(state.memory.store)
    except Exception:  # a scrape reports what it can
        log.warning("could not read the queue depth for /metrics", exc_info=True)
    body, content_type = metrics.render()
    return Response(body, media_type=content_type)


def _route_of(scope: dict[str, Any]) -> str:
    """The matched route's template with the prefix it was included or mounted under. The router
    records the route itself (``/users/{user_id}``); the prefix (``/api/v3``) is the part of the
    path before the segments the template covers (an id never holds a ``/``)."""
    route = scope.get("route")
    template = getattr(route, "path", None)
    if template is None:
        return "unmatched"
    if isinstance(route, Mount):  # static files, a mounted app that set no route of its own
        return f"{template.rstrip('/')}/{{path}}"
    covered = [part for part in template.split("/") if part]
    segments = [part for part in scope["path"].split("/") if part]
    prefix = segments[: max(len(segments) - len(covered), 0)]
    return "/" + "/".join([*prefix, *covered])


class RequestTelemetry:
    """A ``request`` span around each HTTP request and one row of the HTTP metrics when it ends."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # an exception that escapes every handler ends as a 500

        async def send_status(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        method = scope["method"] if scope["method"] in _METHODS else "other"  # a client may send any word
        try:
            with span(f"HTTP {method}", method=method):
                try:
                    await self.app(scope, receive, send_status)
                finally:
                    annotate(route=_route_of(scope), status=status)
        finally:
            metrics.record_http(method, _route_of(scope), status, time.perf_counter() - started)
