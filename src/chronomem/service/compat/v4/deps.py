"""The dependency of the v4 routes: the caller's project space, its addresses and its tasks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from chronomem.app.addresses import Addresses
from chronomem.app.tenancy import ProjectSpace
from chronomem.controlplane import ControlPlane
from chronomem.memory import Chronomem
from chronomem.service.compat.v4.tasks import Tasks
from chronomem.service.deps import project_space, service_state

__all__ = ["Zep4", "Zep4Space"]


@dataclass(frozen=True, slots=True)
class Zep4Space:
    space: ProjectSpace
    control: ControlPlane
    memory: Chronomem
    addresses: Addresses
    tasks: Tasks


async def zep4_space(request: Request, space: Annotated[ProjectSpace, Depends(project_space)]) -> Zep4Space:
    state = service_state(request)
    return Zep4Space(space, state.control, state.memory, space.addresses(), Tasks(space, state.control))


Zep4 = Annotated[Zep4Space, Depends(zep4_space)]
