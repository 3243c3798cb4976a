"""The server loads the embedding model before it says it is ready, so the first request after
``/readyz`` does not wait for it (it waited ~4.5 s for the local model)."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np

from chronomem.config.settings import Settings
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.embed.cache import CachedEmbedder
from chronomem.embed.testing import HashingEmbedder
from chronomem.memory import Chronomem
from chronomem.service.app import create_app
from chronomem.store.factory import open_store


class LoadingEmbedder(HashingEmbedder):
    """A hashing embedder that, like the local one, has a model to load, and counts embeds done
    before it was loaded."""

    def __init__(self) -> None:
        super().__init__(384)
        self.loaded = False
        self.cold_embeds = 0

    async def load(self) -> None:
        self.loaded = True

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.cold_embeds += 0 if self.loaded else 1
        return await super().embed(texts)


async def test_the_model_is_loaded_before_ready_even_behind_the_cache(tmp_path):
    inner = LoadingEmbedder()
    store = await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    memory = Chronomem(store=store, embedder=CachedEmbedder(inner), settings=Settings(data_dir=tmp_path))
    control = SQLiteControlPlane.open(tmp_path / "control.db")
    app = create_app(memory, control=control, workers=False)
    assert not inner.loaded
    async with app.router.lifespan_context(app), \
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        assert (await client.get("/readyz")).status_code == 200
        assert inner.loaded and inner.cold_embeds == 0
    control.close()
    await memory.close()
