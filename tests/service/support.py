"""Helpers shared by the service tests: a switchable scripted model and the running service."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

from chronomem.llm.testing import FunctionModel
from chronomem.memory import Chronomem
from chronomem.service.controlplane import ControlPlane
from chronomem.settings import ApiLimits, WorkerSettings

FAST_WORKERS = WorkerSettings(concurrency=4, max_attempts=3, retry_base_s=0.01, poll_interval_s=0.05)
SMALL_LIMITS = ApiLimits(max_request_bytes=200_000)


class SwitchableModel:
    """A scripted model that extracts nothing, or fails like an unreachable provider when told to."""

    def __init__(self) -> None:
        self.failing = False
        self.model = FunctionModel(self._answer)

    def _answer(self, prompt, context):
        from chronomem.errors import ModelUnavailableError

        if self.failing:
            raise ModelUnavailableError("provider unreachable (scripted)")
        return prompt.answer()


@dataclass
class Service:
    client: httpx.AsyncClient
    control: ControlPlane
    memory: Chronomem
    model: SwitchableModel
    key_a: str
    key_b: str

    def as_(self, key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"} if key else {}



async def wait_for_task(service: Service, key: str, task_id: str, want: set[str], timeout: float = 10.0) -> dict:
    async with asyncio.timeout(timeout):
        while True:
            body = (await service.client.get(f"/api/v3/tasks/{task_id}", headers=service.as_(key))).json()
            if body["status"] in want:
                return body
            await asyncio.sleep(0.02)
