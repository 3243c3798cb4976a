"""An embedder for OpenAI-compatible ``POST {base_url}/embeddings`` endpoints (OpenAI, Azure, Ollama,
vLLM, llama.cpp, LM Studio, Together, …), through the same provider plumbing as the chat models
(:mod:`chronomem.providers`: transport, retry policy, process-wide rate limiter, auth headers).

Texts go out in batches of ``batch_size``; rows come back in input order (by the ``index`` the
endpoint returns), L2-normalized float32. A reply with the wrong number of vectors or the wrong
dimension is a ``ModelOutputError``, never silently padded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

from chronomem.errors import ConfigurationError, ModelOutputError
from chronomem.providers.endpoints import AuthScheme, api_version_params, auth_headers
from chronomem.providers.http import LazyHttpClient, post_json
from chronomem.providers.limits import RateLimiter
from chronomem.providers.retry import RetryPolicy, call_with_retries
from chronomem.providers.tokens import estimate_tokens

__all__ = ["KNOWN_DIMENSIONS", "EmbeddingUsage", "OpenAIEmbedder"]

KNOWN_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


@dataclass(slots=True)
class EmbeddingUsage:
    requests: int = 0
    input_tokens: int = 0
    retries: int = 0
    texts: int = 0


class OpenAIEmbedder:
    """``dimension`` is required unless the model is a known OpenAI one; with ``request_dimensions``
    it is also sent as ``dimensions`` (text-embedding-3 models shorten their vectors)."""

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        provider: str = "openai",
        dimension: int | None = None,
        request_dimensions: bool = False,
        batch_size: int = 256,
        timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        limiter: RateLimiter | None = None,
        auth_header: AuthScheme = "bearer",
        api_version: str | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        resolved = dimension or KNOWN_DIMENSIONS.get(model)
        if resolved is None:
            raise ConfigurationError(f"the dimension of embedding model {model!r} is unknown; pass dimension=")
        self.model = model
        self._dimension = resolved
        self._name = f"{provider}:{model}" + (f"@{resolved}" if request_dimensions else "")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.request_dimensions = request_dimensions
        self.batch_size = batch_size
        self.retry = retry or RetryPolicy()
        self.limiter = limiter or RateLimiter(max_concurrency=8)
        self.usage = EmbeddingUsage()
        self._params = api_version_params(api_version)
        self._headers = auth_headers(api_key, auth_header)
        self._http = LazyHttpClient(timeout_s, client)

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def model_name(self) -> str:
        return self._name

    async def aclose(self) -> None:
        await self._http.aclose()

    def _vectors(self, data: dict[str, Any], expected: int) -> np.ndarray:
        rows = data.get("data")
        if not isinstance(rows, list) or len(rows) != expected:
            got = len(rows) if isinstance(rows, list) else "no"
            raise ModelOutputError(f"{self.url} returned {got} embeddings for {expected} texts")
        rows = sorted(rows, key=lambda row: row.get("index", 0))
        try:
            matrix = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelOutputError(f"{self.url} returned malformed embeddings: {exc}") from exc
        if matrix.ndim != 2 or matrix.shape[1] != self._dimension:
            raise ModelOutputError(
                f"{self.url} returned vectors of shape {matrix.shape}, expected dimension {self._dimension}"
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1.0, norms)

    async def _request(self, texts: list[str]) -> np.ndarray:
        payload: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.request_dimensions:
            payload["dimensions"] = self._dimension
        tokens = sum(estimate_tokens(t) for t in texts)
        async with self.limiter.slot(tokens) as reservation:
            data = await post_json(
                self._http.client,
                self.url,
                payload,
                headers=self._headers,
                params=self._params,
                target=self.url,
                timeout_s=self._http.timeout_s,
            )
            reported = (data.get("usage") or {}).get("prompt_tokens")
            reservation.settle(int(reported or tokens))
        self.usage.requests += 1
        self.usage.input_tokens += int(reported or tokens)
        return self._vectors(data, len(texts))

    def _count_retry(self, _error: Exception, _delay: float) -> None:
        self.usage.retries += 1

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        batches = [list(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        parts = []
        for batch in batches:

            async def send(batch: list[str] = batch) -> np.ndarray:
                return await self._request(batch)

            parts.append(await call_with_retries(send, self.retry, on_retry=self._count_retry))
        self.usage.texts += len(texts)
        return np.concatenate(parts, axis=0)
