"""Where each provider lives and how it authenticates: the one home of base-URL and auth rules.

Models and embedders are named ``"provider:model"`` (``"openai:gpt-4o-mini"``,
``"ollama:qwen2.5:7b"``, ``"azure:<deployment>"``); :func:`parse_model_spec` splits them.
:data:`DEFAULT_BASE_URLS` says where each provider answers unless configured otherwise, and
:data:`API_KEY_ENV` which environment variable holds its key (read by the settings, not here).

Three authentication schemes exist (:func:`auth_headers`): ``Authorization: Bearer`` (OpenAI and
everything OpenAI-compatible), ``api-key`` (Azure OpenAI) and ``x-api-key`` (Anthropic).

Azure OpenAI is the one provider whose URL depends on the model: a deployment's requests go to
``{endpoint}/openai/deployments/{deployment}`` with an ``api-version`` query parameter.
:func:`openai_compatible_endpoint` applies that rule for chat and embeddings alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from chronomem.errors import ConfigurationError

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_BASE_URLS",
    "HOSTED_TIMEOUT_S",
    "LOCAL_PROVIDERS",
    "LOCAL_TIMEOUT_S",
    "PROVIDERS",
    "AuthScheme",
    "OpenAICompatibleEndpoint",
    "api_version_params",
    "auth_headers",
    "default_timeout_s",
    "openai_compatible_endpoint",
    "parse_model_spec",
]

AuthScheme = Literal["bearer", "api-key", "x-api-key"]

DEFAULT_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "ollama": "http://localhost:11434/v1",
    "vllm": "http://localhost:8000/v1",
    "llamacpp": "http://localhost:8080/v1",
    "lmstudio": "http://localhost:1234/v1",
    "groq": "https://api.groq.com/openai/v1",
    "together": "https://api.together.xyz/v1",
    "openrouter": "https://openrouter.ai/api/v1",
    "deepseek": "https://api.deepseek.com/v1",
}
API_KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "azure": "AZURE_OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "groq": "GROQ_API_KEY",
    "together": "TOGETHER_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "vllm": "VLLM_API_KEY",
}
# Azure has no default: every resource has its own endpoint; "local" is the packaged model, served
# by a child process on a port chosen when it starts (chronomem.llm.local_model).
PROVIDERS = frozenset(DEFAULT_BASE_URLS) | {"azure", "local"}
# Servers people run themselves, often on CPUs: a call may take minutes, not seconds.
LOCAL_PROVIDERS = frozenset({"ollama", "vllm", "llamacpp", "lmstudio", "local"})
HOSTED_TIMEOUT_S = 60.0
LOCAL_TIMEOUT_S = 300.0


def parse_model_spec(spec: str) -> tuple[str, str]:
    """``"provider:model"`` → ``(provider, model)``; the model part may itself contain colons."""
    provider, sep, model = spec.partition(":")
    provider = provider.strip().lower()
    if not sep or not model or provider not in PROVIDERS:
        raise ConfigurationError(
            f"model {spec!r} must be 'provider:model' with provider one of {', '.join(sorted(PROVIDERS))}"
        )
    return provider, model


def default_timeout_s(provider: str) -> float:
    """How long one call to ``provider`` may take unless configured: longer for local servers."""
    return LOCAL_TIMEOUT_S if provider in LOCAL_PROVIDERS else HOSTED_TIMEOUT_S


def auth_headers(api_key: str | None, scheme: AuthScheme = "bearer") -> dict[str, str]:
    """The header that carries ``api_key`` under ``scheme``; none without a key (local servers)."""
    if not api_key:
        return {}
    if scheme == "bearer":
        return {"Authorization": f"Bearer {api_key}"}
    return {scheme: api_key}


def api_version_params(api_version: str | None) -> dict[str, str] | None:
    """The ``api-version`` query parameter Azure requires on every request, when there is one."""
    return {"api-version": api_version} if api_version else None


@dataclass(frozen=True, slots=True)
class OpenAICompatibleEndpoint:
    """Where an OpenAI-compatible model answers: ``/chat/completions`` and ``/embeddings`` hang off
    ``base_url``; ``auth`` names the key's header; ``api_version`` is sent as a query parameter."""

    base_url: str
    auth: AuthScheme = "bearer"
    api_version: str | None = None


def openai_compatible_endpoint(
    provider: str, model: str, *, base_url: str, azure_api_version: str
) -> OpenAICompatibleEndpoint:
    """The endpoint of ``provider:model`` given the provider's configured ``base_url``."""
    base_url = base_url.rstrip("/")
    if provider == "azure":
        return OpenAICompatibleEndpoint(
            f"{base_url}/openai/deployments/{model}", auth="api-key", api_version=azure_api_version
        )
    return OpenAICompatibleEndpoint(base_url)
