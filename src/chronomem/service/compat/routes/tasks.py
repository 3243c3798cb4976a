"""``client.task``: the status of an accepted write."""

from __future__ import annotations

from fastapi import APIRouter

from chronomem.service.compat.deps import Zep
from chronomem.service.compat.models import TaskErrorOut, TaskOut

__all__ = ["router"]

router = APIRouter(tags=["task"])

_STATUS = {"pending": "pending", "processing": "processing", "done": "completed", "failed": "failed"}


@router.get("/tasks/{task_id}", response_model=TaskOut)
async def get(task_id: str, zep: Zep) -> TaskOut:
    view = await zep.space.get_task(task_id)
    error = TaskErrorOut(code="extraction_failed", message=view.error) if view.error else None
    return TaskOut(task_id=task_id, type="ingest", status=_STATUS[view.status],  # type: ignore[arg-type]
                   created_at=view.task.created_at, error=error)
