"""Liveness and readiness probes (no API key needed)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from chronomem.service.deps import service_state
from chronomem.service.schemas import Health, Ready

__all__ = ["router"]

router = APIRouter(tags=["probes"])


@router.get("/healthz", response_model=Health, summary="The process is up")
async def health() -> Health:
    return Health()


@router.get("/readyz", response_model=Ready, summary="The store answers and ingestion workers run",
            responses={503: {"model": Ready}})
async def ready(request: Request) -> JSONResponse:
    state = service_state(request)
    try:
        await state.memory.list_groups()
        store_ok = True
    except Exception:  # a probe reports, it does not raise
        store_ok = False
    workers: Literal["running", "stopped", "external"] = (
        "external" if state.pool is None else ("running" if state.pool.running else "stopped")
    )
    ok = store_ok and workers != "stopped"
    body = Ready(status="ready" if ok else "not_ready", store=store_ok, workers=workers,
                 model=state.memory.model_description)
    return JSONResponse(body.model_dump(), status_code=200 if ok else 503)
