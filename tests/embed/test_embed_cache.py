"""CachedEmbedder: each distinct text costs one inner embedding, once."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from chronomem.embed.cache import CachedEmbedder
from chronomem.embed.factory import build_embedder
from chronomem.embed.local import LocalEmbedder
from chronomem.embed.openai import OpenAIEmbedder
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import ConfigurationError, ModelUnavailableError
from chronomem.llm.settings import LLMSettings


async def test_repeated_text_costs_no_inner_call():
    inner = HashingEmbedder(16)
    cached = CachedEmbedder(inner)
    first = await cached.embed(["Alice likes tea", "Bob"])
    assert (inner.calls, inner.texts_embedded) == (1, 2)
    again = await cached.embed(["Bob", "Alice likes tea"])
    assert (inner.calls, inner.texts_embedded) == (1, 2)
    assert np.array_equal(again, first[::-1])


async def test_only_new_texts_reach_the_inner_embedder_deduplicated():
    inner = HashingEmbedder(16)
    cached = CachedEmbedder(inner)
    await cached.embed(["a"])
    out = await cached.embed(["a", "b", "b", "c"])
    assert (inner.calls, inner.texts_embedded) == (2, 3)
    assert np.array_equal(out[1], out[2]) and out.shape == (4, 16)
    assert (cached.stats.hits, cached.stats.misses) == (1, 3)


@pytest.mark.parametrize("on_disk", [False, True])
async def test_concurrent_calls_for_the_same_text_embed_it_once(on_disk, tmp_path):
    class Slow(HashingEmbedder):
        async def embed(self, texts):
            await asyncio.sleep(0.02)
            return await super().embed(texts)

    inner = Slow(16)
    cached = CachedEmbedder(inner, path=tmp_path / "v.sqlite" if on_disk else None)
    results = await asyncio.gather(*(cached.embed(["same text", f"other {i % 2}"]) for i in range(6)))
    assert inner.texts_embedded == 3 and all(np.array_equal(r[0], results[0][0]) for r in results)
    await cached.aclose()


async def test_disk_layer_survives_a_new_process_and_models_do_not_mix(tmp_path):
    path = tmp_path / "vectors.sqlite"
    first = CachedEmbedder(HashingEmbedder(16), path=path)
    vector = await first.embed(["persisted"])
    await first.aclose()

    inner = HashingEmbedder(16)
    second = CachedEmbedder(inner, path=path)
    assert np.array_equal(await second.embed(["persisted"]), vector) and inner.calls == 0
    await second.aclose()

    other_model = HashingEmbedder(32)
    third = CachedEmbedder(other_model, path=path)
    assert (await third.embed(["persisted"])).shape == (1, 32) and other_model.calls == 1
    await third.aclose()


async def test_lru_evicts_the_oldest_entry():
    inner = HashingEmbedder(8)
    cached = CachedEmbedder(inner, max_entries=2)
    await cached.embed(["a", "b", "c"])
    await cached.embed(["c"])
    assert inner.texts_embedded == 3
    await cached.embed(["a"])
    assert inner.texts_embedded == 4


async def test_failed_inner_call_is_not_cached_and_waiters_see_the_error():
    class Failing(HashingEmbedder):
        fail = True

        async def embed(self, texts):
            await asyncio.sleep(0.01)
            if self.fail:
                raise ModelUnavailableError("down")
            return await super().embed(texts)

    inner = Failing(8)
    cached = CachedEmbedder(inner)
    results = await asyncio.gather(cached.embed(["x"]), cached.embed(["x"]), return_exceptions=True)
    assert all(isinstance(r, ModelUnavailableError) for r in results)
    inner.fail = False
    assert (await cached.embed(["x"])).shape == (1, 8)


async def test_empty_input():
    assert (await CachedEmbedder(HashingEmbedder(8)).embed([])).shape == (0, 8)


def test_build_embedder_specs():
    assert isinstance(build_embedder("hashing"), HashingEmbedder)
    assert build_embedder("hashing:64").dimension == 64
    local = build_embedder("local")
    assert isinstance(local, CachedEmbedder) and isinstance(local.inner, LocalEmbedder)
    assert isinstance(build_embedder("local:/models/e5", cache=False), LocalEmbedder)
    remote = build_embedder("openai:text-embedding-3-small", cache=False)
    assert isinstance(remote, OpenAIEmbedder) and remote.url == "https://api.openai.com/v1/embeddings"
    settings = LLMSettings(base_urls={"azure": "https://r.openai.azure.com"}, api_keys={"azure": "k"})
    azure = build_embedder("azure:emb", settings=settings, dimension=1536, cache=False)
    assert azure.url == "https://r.openai.azure.com/openai/deployments/emb/embeddings"
    with pytest.raises(ConfigurationError):
        build_embedder("anthropic:x")
    with pytest.raises(ConfigurationError):
        build_embedder("ollama:nomic-embed-text")  # dimension unknown
