"""The FastAPI application: ``create_app(settings | memory)``.

    uvicorn --factory chronomem.service.app:app_from_env      # or: chronomem serve

On start-up the app opens the memory (unless one was passed in), loads the embedding model (so the
first request after ``/readyz`` does not wait for it), opens the control plane and, unless
ingestion runs in separate ``chronomem worker`` processes, an in-process worker pool that first
returns any episode a killed process left ``processing`` to the queue. Routes live under
``/api/v3``; probes at ``/healthz`` and ``/readyz``; the OpenAPI document at ``/openapi.json`` and
its browsable forms at ``/docs`` and ``/redoc``; the web explorer at ``/ui``; Prometheus metrics at
``/metrics`` (unless ``telemetry.metrics`` is off), and a span per request when tracing is on
(chronomem.service.observability).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from chronomem.app.process import tune_gc
from chronomem.app.project_config import ProjectProfiles
from chronomem.app.workers import WorkerPool
from chronomem.config.settings import Settings
from chronomem.controlplane import ControlPlane, open_control_plane
from chronomem.embed.base import warm_up
from chronomem.memory import Chronomem
from chronomem.service.compat import COMPAT_PREFIX, mount_compat
from chronomem.service.compat import errors as v2_errors
from chronomem.service.compat.v4 import V4_PREFIX, mount_v4
from chronomem.service.compat.v4 import errors as v4_errors
from chronomem.service.deps import ServiceState
from chronomem.service.errors import install_error_handlers
from chronomem.service.limits import BodySizeLimit, native_refusal
from chronomem.service.observability import RequestTelemetry, metrics_router
from chronomem.service.pages import mount_pages
from chronomem.service.routers import (
    explorer,
    graph,
    lookup,
    probes,
    project_config,
    tasks,
    templates,
    threads,
    users,
)
from chronomem.telemetry import configure as configure_telemetry
from chronomem.telemetry import metrics

__all__ = ["API_PREFIX", "app_from_env", "create_app", "serve_app", "serve_processes"]

logger = logging.getLogger("chronomem.service")

API_PREFIX = "/api/v3"
SWITCH_INTERVAL_S = 0.001


def create_app(
    config: Settings | Chronomem | None = None,
    *,
    control: ControlPlane | None = None,
    workers: bool | None = None,
) -> FastAPI:
    """The service over a memory opened from ``Settings`` (default ``Settings()``), or over a ready
    ``Chronomem`` (which the app then does not close). ``control`` defaults to the one the settings'
    store calls for (``open_control_plane``); ``workers`` overrides ``settings.workers.in_process``."""
    memory = config if isinstance(config, Chronomem) else None
    settings = config.settings if isinstance(config, Chronomem) else (config or Settings())
    run_workers = settings.workers.in_process if workers is None else workers

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        opened = memory or await Chronomem.open(settings)
        await warm_up(opened.embedder)  # before /readyz says ready: the first request should not load it
        plane = control or open_control_plane(settings)
        opened.use_group_profiles(ProjectProfiles(plane))  # each project's ontology and mappings
        logger.info("chronomem: model %s", opened.model_description)
        pool = WorkerPool.for_memory(opened) if run_workers else None
        app.state.chronomem = ServiceState(settings=settings, memory=opened, control=plane, pool=pool)
        if pool is not None:
            await pool.start()
        try:
            yield
        finally:
            if pool is not None:
                await pool.stop()
            opened.use_group_profiles(None)
            if control is None:
                plane.close()
            if memory is None:
                await opened.close()
            metrics.mark_process_dead()  # several server processes: this one's live gauges stop counting

    app = FastAPI(
        title="chronomem",
        summary="Memory for LLM agents on a bi-temporal knowledge graph",
        description=(
            "Users, threads and messages, graph episodes and fact triples, search with time travel, "
            "and context blocks. Authenticate with `Authorization: Bearer <API key>`."
        ),
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # served from local assets by mount_pages
        redoc_url=None,
    )
    install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=settings.api.max_request_bytes, refusal=_refusal)
    app.add_middleware(RequestTelemetry)  # outermost: it sees every answer, a 413 included
    app.include_router(probes.router)
    if settings.telemetry.metrics:
        app.include_router(metrics_router)
    for module in (users, threads, graph, tasks, templates, project_config, explorer, lookup):
        app.include_router(module.router, prefix=API_PREFIX)
    mount_compat(app)  # /api/v2: Zep's SDK works unchanged
    mount_v4(app)  # /api/v4: Zep's 4.x SDK and its framework integrations
    mount_pages(app)
    return app


def app_from_env() -> FastAPI:
    """``create_app(Settings.from_env())``: the factory ``uvicorn --factory`` and ``serve
    --processes`` use. Called in a serving process, so it also sets the switch interval (see
    :func:`serve_app`)."""
    _prepare_serving_process()
    settings = Settings.from_env()
    configure_telemetry(settings.telemetry)
    return create_app(settings)


WORKER_HEALTHCHECK_S = 30


def serve_processes(
    settings: Settings, *, host: str = "127.0.0.1", port: int = 8000, processes: int = 2, log_level: str = "info"
) -> None:
    """Serve with ``processes`` server processes sharing one listening socket (``chronomem serve
    --processes``): uvicorn's supervisor starts them and restarts any that dies. Each process opens
    its own memory from the environment, so ``settings`` travel as ``CHRONOMEM_*`` variables."""
    import uvicorn

    os.environ.update(settings.environment())
    made = metrics.prepare_multiprocess()  # before the processes start: they share one metrics directory
    # The supervisor kills a process that has not answered its ping for this long, resetting every
    # connection it holds. uvicorn's default is 5 s; a CI run on a loaded two-core machine saw a
    # connection reset mid-test, most likely this kill of a healthy but slow process. A hung one
    # is still replaced, later.
    try:
        uvicorn.run("chronomem.service.app:app_from_env", factory=True, host=host, port=port, workers=processes,
                    log_level=log_level, timeout_worker_healthcheck=WORKER_HEALTHCHECK_S)
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


async def serve_app(
    app: FastAPI,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "info",
    sockets: list[socket.socket] | None = None,
) -> None:
    """Serve ``app`` with uvicorn in the running event loop until SIGINT/SIGTERM (``chronomem serve``).

    It also shortens the interpreter's thread switch interval to 1 ms for the process: the event
    loop shares the GIL with the store's writer thread and gets it back sooner (about 10% more
    context requests per second in ``bench/service.py``, measured when the SQLite store still ran
    its reads on threads too). uvicorn picks ``httptools`` for HTTP when it is installed
    (``uvicorn[standard]``); the loop is the caller's (``uvloop.run`` to serve on uvloop).
    ``sockets``: listen on these bound sockets instead of ``host``/``port`` (several processes
    sharing one port).
    """
    import uvicorn

    _prepare_serving_process()
    await uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level)).serve(sockets=sockets)


def _prepare_serving_process() -> None:
    sys.setswitchinterval(SWITCH_INTERVAL_S)  # see serve_app
    tune_gc()


def _refusal(path: str, status: int, kind: str, message: str) -> tuple[int, dict[str, Any]]:
    """A request the body limits refuse, answered in the error shape of the API it was sent to."""
    if path.startswith(f"{COMPAT_PREFIX}/"):
        return v2_errors.refusal_body(status, message)
    if path.startswith(f"{V4_PREFIX}/"):
        return v4_errors.refusal_body(status, message)
    return native_refusal(path, status, kind, message)
