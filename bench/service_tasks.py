"""What the service benches share: waiting for the ingestion tasks they queued (bench/soak.py,
bench/failover.py)."""

from __future__ import annotations

import asyncio
import time

import httpx


async def drain(http: httpx.AsyncClient, tasks: set[str], seconds: float) -> set[str]:
    """The tasks still not ``done`` (nor ``failed``) after waiting up to ``seconds``."""
    pending, started = set(tasks), time.monotonic()
    while pending and time.monotonic() - started < seconds:
        for task in list(pending):
            try:
                answer = await http.get(f"/api/v3/tasks/{task}")
            except httpx.HTTPError:
                continue  # a restarting server: ask again on the next round
            if answer.status_code == 200 and answer.json()["status"] in ("done", "failed"):
                pending.discard(task)
        await asyncio.sleep(0.5)
    return pending
