"""The OpenAI-compatible embedder against a loopback /v1/embeddings server."""

from __future__ import annotations

import numpy as np
import pytest

from chronomem.embed.openai import OpenAIEmbedder
from chronomem.errors import ConfigurationError, ModelCallForbiddenError, ModelOutputError, ModelUnavailableError
from chronomem.llm.fakeserver import Embeddings, Stall, Status
from chronomem.providers.guard import forbid_model_requests
from chronomem.providers.retry import RetryPolicy

FAST = RetryPolicy(max_attempts=3, initial_delay_s=0.01, max_delay_s=0.02)


@pytest.fixture
async def embedder(embeddings_server):
    made = OpenAIEmbedder(
        "nomic-embed-text",
        base_url=embeddings_server.openai_base_url,
        api_key="sk-e",
        provider="ollama",
        dimension=8,
        batch_size=3,
        timeout_s=1.0,  # the stalled reply (2 s) still times out; a loaded CI machine answers the others in time
        retry=FAST,
    )
    yield made
    await made.aclose()


async def test_vectors_come_back_normalized_in_input_order_across_batches(embeddings_server, embedder):
    texts = ["alpha", "beta", "gamma", "delta", "alpha"]
    vectors = await embedder.embed(texts)
    assert vectors.shape == (5, 8) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], vectors[4]) and not np.allclose(vectors[0], vectors[1])
    assert embeddings_server.count("embeddings") == 2  # batch_size=3
    first = embeddings_server.requests[0]
    assert first.path == "/v1/embeddings" and first.headers["authorization"] == "Bearer sk-e"
    assert first.json == {"model": "nomic-embed-text", "input": ["alpha", "beta", "gamma"], "encoding_format": "float"}
    assert embedder.model_name == "ollama:nomic-embed-text" and embedder.usage.requests == 2


async def test_rows_are_reordered_by_index(embeddings_server, embedder):
    # Build a reply whose rows arrive out of order: the embedder must sort them by "index".
    embeddings_server.responder = None
    vectors = [[1.0] + [0.0] * 7, [0.0, 1.0] + [0.0] * 6]
    embeddings_server.enqueue(Embeddings(vectors=vectors))
    out = await embedder.embed(["a", "b"])
    assert out[0][0] == 1.0 and out[1][1] == 1.0


async def test_429_500_and_timeout_are_retried(embeddings_server, embedder):
    embeddings_server.enqueue(Status(429, headers={"retry-after-ms": "20"}), Status(500), Embeddings())
    await embedder.embed(["x"])
    embeddings_server.enqueue(Stall(2.0), Embeddings())
    await embedder.embed(["y"])
    assert embeddings_server.count() == 5 and embedder.usage.retries == 3


async def test_persistent_failure_surfaces_as_unavailable(embeddings_server, embedder):
    embeddings_server.enqueue(Status(503), Status(503), Status(503))
    with pytest.raises(ModelUnavailableError):
        await embedder.embed(["x"])
    assert embeddings_server.count() == 3


async def test_wrong_count_or_dimension_is_an_output_error(embeddings_server, embedder):
    embeddings_server.enqueue(Embeddings(vectors=[[0.1] * 8]))
    with pytest.raises(ModelOutputError, match="1 embeddings for 2 texts"):
        await embedder.embed(["a", "b"])
    embeddings_server.enqueue(Embeddings(vectors=[[0.1] * 4]))
    with pytest.raises(ModelOutputError, match="dimension 8"):
        await embedder.embed(["a"])


def test_unknown_model_needs_a_dimension():
    with pytest.raises(ConfigurationError):
        OpenAIEmbedder("mystery")
    assert OpenAIEmbedder("text-embedding-3-small").dimension == 1536


async def test_forbidden_requests_fail_before_io(embeddings_server, embedder):
    with forbid_model_requests(), pytest.raises(ModelCallForbiddenError):
        await embedder.embed(["x"])
    assert embeddings_server.count() == 0
