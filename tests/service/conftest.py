"""The real ASGI app in-process (httpx), over an embedded store in a temporary directory."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from chronomem.config.settings import Settings
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.embed.testing import HashingEmbedder
from chronomem.memory import Chronomem
from chronomem.service.app import create_app
from chronomem.store.factory import open_store
from service_support import FAST_WORKERS, SMALL_LIMITS, Service, SwitchableModel


@pytest.fixture
async def service(tmp_path) -> AsyncIterator[Service]:
    model = SwitchableModel()
    store = await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    settings = Settings(data_dir=tmp_path, workers=FAST_WORKERS, api=SMALL_LIMITS)
    memory = Chronomem(store=store, embedder=HashingEmbedder(), llm=model.model, settings=settings)
    control = SQLiteControlPlane.open(tmp_path / "control.db")
    _, key_a = control.create_key("project-a")
    _, key_b = control.create_key("project-b")
    app = create_app(memory, control=control)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield Service(client, control, memory, model, key_a, key_b)
    control.close()
    await memory.close()
