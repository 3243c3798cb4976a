"""Ingestion tasks: one per accepted write, with the status of its episodes, and retry."""

from __future__ import annotations

from fastapi import APIRouter

from chronomem.app.tenancy import TaskView
from chronomem.service.deps import ERROR_RESPONSES, Space
from chronomem.service.schemas import TaskEpisode, TaskOut

__all__ = ["router"]

router = APIRouter(prefix="/tasks", tags=["tasks"], responses=ERROR_RESPONSES)


def _render(view: TaskView) -> TaskOut:
    return TaskOut(
        task_id=view.task.task_id, status=view.status, attempts=view.attempts, error=view.error,  # type: ignore[arg-type]
        created_at=view.task.created_at,
        episodes=[TaskEpisode(uuid=e.id, status=e.status.value, attempts=e.attempts, error=e.last_error)
                  for e in view.episodes],
    )


@router.get("/{task_id}", response_model=TaskOut, summary="Status of an accepted write")
async def get_task(task_id: str, space: Space) -> TaskOut:
    return _render(await space.get_task(task_id))


@router.post("/{task_id}/retry", response_model=TaskOut, summary="Queue a task's failed episodes again")
async def retry_task(task_id: str, space: Space) -> TaskOut:
    return _render(await space.retry_task(task_id))
