"""What every route needs: the running service's parts and the caller's project."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request
from pydantic import BaseModel

from chronomem.app.tenancy import ProjectSpace
from chronomem.app.workers import WorkerPool
from chronomem.config.settings import Settings
from chronomem.controlplane import ControlPlane
from chronomem.memory import Chronomem
from chronomem.service.auth import authenticate_request

__all__ = [
    "CONFLICT_RESPONSE",
    "ERROR_RESPONSES",
    "ErrorBody",
    "ErrorDetail",
    "ServiceState",
    "Space",
    "project_space",
    "service_state",
]


@dataclass(slots=True)
class ServiceState:
    """The parts a running app holds (``app.state.chronomem``)."""

    settings: Settings
    memory: Chronomem
    control: ControlPlane
    pool: WorkerPool | None  # None: ingestion runs in separate `chronomem worker` processes


class ErrorDetail(BaseModel):
    type: str
    message: str
    details: Any = None


class ErrorBody(BaseModel):
    """Every error response: ``{"error": {"type": ..., "message": ...}}``."""

    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "the body could not be parsed (e.g. nested beyond the parser's depth)"},
    401: {"model": ErrorBody, "description": "missing, unknown or revoked API key"},
    404: {"model": ErrorBody, "description": "no such object in the caller's project"},
    413: {"model": ErrorBody, "description": "request body too large"},
    422: {"model": ErrorBody, "description": "invalid input (a limit of docs/service.md); nothing was changed"},
    503: {"model": ErrorBody, "description": "the store is unreachable or the server lacks a model it needs"},
}

CONFLICT_RESPONSE: dict[int | str, dict[str, Any]] = {
    409: {"model": ErrorBody, "description": "the id exists already, or the request contradicts stored data"},
}


def service_state(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.chronomem
    return state


async def project_space(request: Request) -> ProjectSpace:
    state = service_state(request)
    project = authenticate_request(request, state.control, required=state.settings.auth_required)
    notify = state.pool.notify if state.pool is not None else (lambda: None)
    return ProjectSpace(project, state.control, state.memory, notify)


Space = Annotated[ProjectSpace, Depends(project_space)]
