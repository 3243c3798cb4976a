"""The dependencies of the Zep routes: the caller's project space and the uuid locator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from chronomem.app.tenancy import ProjectSpace
from chronomem.controlplane import ControlPlane
from chronomem.memory import Chronomem
from chronomem.service.compat.space import Locator
from chronomem.service.deps import project_space, service_state

__all__ = ["Zep", "ZepSpace"]


@dataclass(frozen=True, slots=True)
class ZepSpace:
    """The caller's project space, the parts behind it, and the uuid locator."""

    space: ProjectSpace
    control: ControlPlane
    memory: Chronomem
    locate: Locator


async def zep_space(request: Request, space: Annotated[ProjectSpace, Depends(project_space)]) -> ZepSpace:
    state = service_state(request)
    return ZepSpace(space, state.control, state.memory, Locator(space, state.control, state.memory))


Zep = Annotated[ZepSpace, Depends(zep_space)]
