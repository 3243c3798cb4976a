"""Zep v4 tasks: every write answers with one, read at ``GET /tasks/{uuid}``.

An ingestion task (messages, episodes) is the control plane's task, its status read from its
episodes (``done`` → ``succeeded``; ``partial`` when some failed and others succeeded). A write
chronomem does at once (a delete, a clone) answers with a task already ``succeeded``. Each task
``/api/v4`` hands out is recorded as a project document (kind ``zep_v4_task``) so ``task.list``
can list them; a task of another API is still readable by its UUID.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chronomem.app.tenancy import ProjectSpace, TaskView
from chronomem.controlplane import ControlPlane, TaskRecord
from chronomem.domain import EpisodeStatus, new_id
from chronomem.errors import NotFoundError
from chronomem.service.compat.v4.addresses import object_id, wire_id
from chronomem.service.compat.v4.models import ErrorBodyOut, TaskOut
from chronomem.timeutil import utc_now

__all__ = ["TASK_DOCUMENT", "Tasks"]

TASK_DOCUMENT = "zep_v4_task"
_STATUS = {"pending": "pending", "processing": "processing", "done": "succeeded", "failed": "failed"}


def _ingest_status(view: TaskView) -> str:
    if view.status == "failed" and any(e.status is not EpisodeStatus.FAILED for e in view.episodes):
        return "partial"
    return _STATUS[view.status]


class Tasks:
    """The v4 tasks of one project."""

    def __init__(self, space: ProjectSpace, control: ControlPlane) -> None:
        self._space = space
        self._control = control
        self._pid = space.project.id

    async def ingest(self, task: TaskRecord, kind: str) -> TaskOut:
        """Record an ingestion task of the control plane; its current state."""
        self._control.put_document(self._pid, TASK_DOCUMENT, "", task.task_id,
                                   {"type": kind, "ingest": True, "created_at": task.created_at.isoformat()})
        return self._ingest_out(task.task_id, kind, await self._space.get_task(task.task_id))

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
        except NotFoundError:
            body = {"type": "ingest", "ingest": True}  # a task of /api/v2 or /api/v3
        if not body["ingest"]:
            return self._done_out(task_id, body)
        return self._ingest_out(task_id, body["type"], await self._space.get_task(task_id))

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

    def _ingest_out(self, task_id: str, kind: str, view: TaskView) -> TaskOut:
        status = _ingest_status(view)
        error = ErrorBodyOut(code="extraction_failed", message=view.error) if view.error else None
        episodes = [{"episode_uuid": wire_id(e.id)} for e in view.episodes]
        return TaskOut(uuid=wire_id(task_id), type=kind, status=status,  # type: ignore[arg-type]
                       created_at=view.task.created_at, error=error, result={"episodes": episodes})

    @staticmethod
    def _done_out(task_id: str, body: dict[str, Any]) -> TaskOut:
        created = datetime.fromisoformat(body["created_at"])
        return TaskOut(uuid=wire_id(task_id), type=body["type"], status="succeeded", created_at=created,
                       started_at=created, completed_at=created, updated_at=created, result=body.get("result"))
