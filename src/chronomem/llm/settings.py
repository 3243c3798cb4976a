"""One settings object for the LLM layer, and the factory that builds a ready-to-use model from it.

Models are named by ``"provider:model"`` strings (``"openai:gpt-4o-mini"``, ``"ollama:qwen2.5:7b"``,
``"anthropic:claude-3-5-haiku-latest"``); a role (``Prompt.role``) can get its own model, e.g. a
stronger one for extraction and a cheaper one for resolution. :func:`build_language_model` stacks,
per distinct model: adapter → process-wide rate limiter → retries → optional disk cache, and routes
each prompt by role. The environment is read only by :meth:`LLMSettings.from_env`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from chronomem.errors import ConfigurationError
from chronomem.llm.anthropic import AnthropicModel
from chronomem.llm.base import LanguageModel, ModelRole
from chronomem.llm.cache import CachedModel, ResponseCache
from chronomem.llm.limits import LimitedModel, shared_limiter
from chronomem.llm.openai import OpenAIChatModel, StructuredOutputMode
from chronomem.llm.retry import RetryingModel, RetryPolicy
from chronomem.llm.routing import RoutedModel

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_BASE_URLS",
    "LLMSettings",
    "build_adapter",
    "build_language_model",
    "parse_model_spec",
]

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
PROVIDERS = frozenset(DEFAULT_BASE_URLS) | {"azure"}
_ROLES: tuple[ModelRole, ...] = ("extraction", "resolution", "summary", "rerank", "default")


def parse_model_spec(spec: str) -> tuple[str, str]:
    """``"provider:model"`` → ``(provider, model)``; the model part may itself contain colons."""
    provider, sep, model = spec.partition(":")
    provider = provider.strip().lower()
    if not sep or not model or provider not in PROVIDERS:
        raise ConfigurationError(
            f"model {spec!r} must be 'provider:model' with provider one of {', '.join(sorted(PROVIDERS))}"
        )
    return provider, model


class LLMSettings(BaseModel):
    """Everything the LLM layer can be told. ``role_models`` maps a role to a ``provider:model``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = "openai:gpt-4o-mini"
    role_models: dict[ModelRole, str] = Field(default_factory=dict)
    base_urls: dict[str, str] = Field(default_factory=dict)
    api_keys: dict[str, SecretStr] = Field(default_factory=dict)
    azure_api_version: str = "2024-10-21"
    structured_output: StructuredOutputMode = "auto"
    temperature: float | None = 0.0  # None: not sent (reasoning models refuse it)
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"  # o-series/gpt-5 want the latter
    timeout_s: float = Field(default=60.0, gt=0)
    max_attempts: int = Field(default=6, ge=1)
    initial_backoff_s: float = Field(default=0.5, ge=0)
    max_backoff_s: float = Field(default=30.0, ge=0)
    corrective_retries: int = Field(default=1, ge=0)
    max_concurrency: int = Field(default=16, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    cache_path: Path | None = None

    def model_for(self, role: str) -> str:
        return str(self.role_models.get(role, self.model))  # type: ignore[call-overload]

    def base_url_for(self, provider: str) -> str:
        url = self.base_urls.get(provider) or DEFAULT_BASE_URLS.get(provider)
        if url is None:
            raise ConfigurationError(f"no base URL for provider {provider!r}; set base_urls[{provider!r}]")
        return url.rstrip("/")

    def api_key_for(self, provider: str) -> str | None:
        secret = self.api_keys.get(provider)
        return secret.get_secret_value() if secret is not None else None

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_attempts=self.max_attempts,
            initial_delay_s=self.initial_backoff_s,
            max_delay_s=self.max_backoff_s,
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> LLMSettings:
        """Settings from environment variables (see docs/llm.md); ``overrides`` win over them."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        if model := env.get("CHRONOMEM_LLM_MODEL"):
            values["model"] = model
        roles = {
            r: env[f"CHRONOMEM_LLM_MODEL_{r.upper()}"] for r in _ROLES if env.get(f"CHRONOMEM_LLM_MODEL_{r.upper()}")
        }
        if roles:
            values["role_models"] = roles
        values["api_keys"] = {p: env[name] for p, name in API_KEY_ENV.items() if env.get(name)}
        values["base_urls"] = _base_urls_from_env(env)
        simple = {
            "CHRONOMEM_LLM_STRUCTURED_OUTPUT": "structured_output",
            "CHRONOMEM_LLM_TIMEOUT_S": "timeout_s",
            "CHRONOMEM_LLM_MAX_CONCURRENCY": "max_concurrency",
            "CHRONOMEM_LLM_RPM": "requests_per_minute",
            "CHRONOMEM_LLM_TPM": "tokens_per_minute",
            "CHRONOMEM_LLM_CACHE": "cache_path",
            "OPENAI_API_VERSION": "azure_api_version",
        }
        values.update({field: env[name] for name, field in simple.items() if env.get(name)})
        values.update(overrides)
        return cls.model_validate(values)


def _base_urls_from_env(env: Mapping[str, str]) -> dict[str, str]:
    urls: dict[str, str] = {}
    if url := env.get("OPENAI_BASE_URL"):
        urls["openai"] = url
    if url := env.get("ANTHROPIC_BASE_URL"):
        urls["anthropic"] = url
    if url := env.get("AZURE_OPENAI_ENDPOINT"):
        urls["azure"] = url
    if host := env.get("OLLAMA_HOST"):
        host = host if "://" in host else f"http://{host}"
        urls["ollama"] = host.rstrip("/") + "/v1"
    return urls


def build_adapter(spec: str, settings: LLMSettings) -> LanguageModel:
    """The bare adapter (no wrappers) for one ``provider:model`` string, or the rule-based stand-in
    for ``heuristic`` (not an LLM: it answers from the text itself)."""
    if spec == "heuristic":
        from chronomem.llm.heuristic import heuristic_model

        return heuristic_model()
    provider, model = parse_model_spec(spec)
    common: dict[str, Any] = {
        "api_key": settings.api_key_for(provider),
        "timeout_s": settings.timeout_s,
        "temperature": settings.temperature,
        "corrective_retries": settings.corrective_retries,
    }
    if provider == "anthropic":
        return AnthropicModel(model, base_url=settings.base_url_for(provider), **common)
    if provider == "azure":
        deployment_url = f"{settings.base_url_for('azure')}/openai/deployments/{model}"
        return OpenAIChatModel(
            model,
            base_url=deployment_url,
            provider="azure",
            auth_header="api-key",
            api_version=settings.azure_api_version,
            structured_output=settings.structured_output,
            max_tokens_field=settings.max_tokens_field,
            **common,
        )
    return OpenAIChatModel(
        model,
        base_url=settings.base_url_for(provider),
        provider=provider,
        structured_output=settings.structured_output,
        max_tokens_field=settings.max_tokens_field,
        **common,
    )


def _stack(spec: str, settings: LLMSettings, cache: ResponseCache | None) -> LanguageModel:
    adapter = build_adapter(spec, settings)
    if spec == "heuristic":
        return adapter  # it makes no calls: nothing to limit, retry or cache
    provider, _ = parse_model_spec(spec)
    limiter = shared_limiter(
        f"{spec}@{settings.base_urls.get(provider, DEFAULT_BASE_URLS.get(provider, ''))}",
        max_concurrency=settings.max_concurrency,
        requests_per_minute=settings.requests_per_minute,
        tokens_per_minute=settings.tokens_per_minute,
    )
    model: LanguageModel = RetryingModel(LimitedModel(adapter, limiter), settings.retry_policy())
    if cache is not None:
        model = CachedModel(model, cache, model_name=spec)
    return model


def build_language_model(settings: LLMSettings) -> RoutedModel:
    """A model that answers each prompt with its role's configured model, behind every wrapper."""
    cache = ResponseCache(settings.cache_path) if settings.cache_path else None
    stacks: dict[str, LanguageModel] = {}

    def stacked(spec: str) -> LanguageModel:
        if spec not in stacks:
            stacks[spec] = _stack(spec, settings, cache)
        return stacks[spec]

    default = stacked(settings.model)
    routes: dict[str, LanguageModel] = {role: stacked(spec) for role, spec in settings.role_models.items()}
    return RoutedModel(default, routes, on_close=cache.close if cache is not None else None)
