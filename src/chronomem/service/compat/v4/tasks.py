"""Zep v4 tasks: every write answers with one, read at ``GET /tasks/{uuid}``.

An ingestion task stands for one or more control-plane tasks (a batch queues one per thread or
graph) and its status is read from their episodes: ``succeeded`` when every one was extracted,
``failed`` when every one failed, ``partial`` when some of each, else ``pending`` or
``processing``. A write chronomem does at once (a delete, a clone) answers with a task already
``succeeded``. Each task ``/api/v4`` hands out is recorded as a project document (kind
``zep_v4_task``) so ``task.list`` can list it; a task of ``/api/v2`` or ``/api/v3`` is still
readable by its UUID.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from chronomem.app.addresses import object_id, wire_id
from chronomem.app.tenancy import ProjectSpace, TaskView
from chronomem.controlplane import ControlPlane, TaskRecord
from chronomem.domain import EpisodeStatus, new_id
from chronomem.errors import NotFoundError
from chronomem.service.compat.v4.models import ErrorBodyOut, TaskOut
from chronomem.timeutil import utc_now

__all__ = ["TASK_DOCUMENT", "Tasks", "combined_status"]

TASK_DOCUMENT = "zep_v4_task"


def combined_status(episodes: Sequence[Any]) -> str:
    """The v4 status of a set of episodes (see the module docstring)."""
    statuses = {e.status for e in episodes}
    for waiting in (EpisodeStatus.PROCESSING, EpisodeStatus.PENDING):
        if waiting in statuses:
            return waiting.value
    if EpisodeStatus.FAILED in statuses:
        return "failed" if statuses == {EpisodeStatus.FAILED} else "partial"
    return "succeeded"


class Tasks:
    """The v4 tasks of one project."""

    def __init__(self, space: ProjectSpace, control: ControlPlane) -> None:
        self._space = space
        self._control = control
        self._pid = space.project.id

    async def ingest(self, task: TaskRecord | Sequence[TaskRecord], kind: str) -> TaskOut:
        """Record an ingestion task made of control-plane tasks; its current state."""
        parts = [task] if isinstance(task, TaskRecord) else list(task)
        task_id = parts[0].task_id if len(parts) == 1 else new_id()  # one part: the v3 task's own id
        body = {"type": kind, "ingest": True, "parts": [p.task_id for p in parts],
                "created_at": parts[0].created_at.isoformat()}
        self._control.put_document(self._pid, TASK_DOCUMENT, "", task_id, body)
        return await self._ingest_out(task_id, body)

    def done(self, kind: str, result: dict[str, Any] | None = None) -> TaskOut:
        """A task for a write already done."""
        task_id, now = new_id(), utc_now()
        body = {"type": kind, "ingest": False, "created_at": now.isoformat(), "result": result}
        self._control.put_document(self._pid, TASK_DOCUMENT, "", task_id, body)
        return self._done_out(task_id, body)

    async def get(self, address: str) -> TaskOut:
        task_id = object_id(address)
        try:
            body = self._control.get_document(self._pid, TASK_DOCUMENT, "", task_id).body
        except NotFoundError:  # a task of /api/v2 or /api/v3
            task = self._control.get_task(self._pid, task_id)
            body = {"type": "ingest", "ingest": True, "parts": [task_id], "created_at": task.created_at.isoformat()}
        if not body["ingest"]:
            return self._done_out(task_id, body)
        return await self._ingest_out(task_id, body)

    async def list(self, *, status: str | None, kind: str | None) -> list[TaskOut]:
        """The project's v4 tasks, newest first (a task whose episodes are all gone is left out)."""
        out = []
        documents = self._control.list_documents(self._pid, TASK_DOCUMENT, scope="")
        for document in sorted(documents, key=lambda d: d.body["created_at"], reverse=True):
            if kind is not None and document.body["type"] != kind:
                continue
            try:
                task = await self.get(document.name)
            except NotFoundError:
                continue
            if status is None or task.status == status:
                out.append(task)
        return out

    async def _ingest_out(self, task_id: str, body: dict[str, Any]) -> TaskOut:
        views: list[TaskView] = [await self._space.get_task(part) for part in body.get("parts") or [task_id]]
        episodes = [e for view in views for e in view.episodes]
        error = next((view.error for view in views if view.error), None)
        return TaskOut(uuid=wire_id(task_id), type=body["type"], status=combined_status(episodes),  # type: ignore[arg-type]
                       created_at=datetime.fromisoformat(body["created_at"]),
                       error=ErrorBodyOut(code="extraction_failed", message=error) if error else None,
                       result={"episodes": [{"episode_uuid": wire_id(e.id)} for e in episodes]})

    @staticmethod
    def _done_out(task_id: str, body: dict[str, Any]) -> TaskOut:
        created = datetime.fromisoformat(body["created_at"])
        return TaskOut(uuid=wire_id(task_id), type=body["type"], status="succeeded", created_at=created,
                       started_at=created, completed_at=created, updated_at=created, result=body.get("result"))
