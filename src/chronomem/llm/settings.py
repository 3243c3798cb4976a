"""One settings object for the LLM layer, and the factory that builds a ready-to-use model from it.

Models are named by ``"provider:model"`` strings (``"openai:gpt-4o-mini"``, ``"ollama:qwen2.5:7b"``,
``"anthropic:claude-3-5-haiku-latest"``); a role (``Prompt.role``) can get its own model, e.g. a
stronger one for extraction and a cheaper one for resolution. :func:`build_language_model` stacks,
per distinct model: adapter → process-wide rate limiter → retries → optional disk cache, and routes
each prompt by role. The environment is read only by :meth:`LLMSettings.from_env`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from chronomem.llm.anthropic import AnthropicModel
from chronomem.llm.base import LanguageModel, ModelRole
from chronomem.llm.cache import CachedModel, ResponseCache
from chronomem.llm.environment import values_from_env
from chronomem.llm.limits import LimitedModel
from chronomem.llm.openai import OpenAIChatModel, StructuredOutputMode
from chronomem.llm.retry import RetryingModel
from chronomem.llm.routing import RoutedModel
from chronomem.providers.endpoints import (
    DEFAULT_BASE_URLS,
    openai_compatible_endpoint,
    parse_model_spec,
)
from chronomem.providers.limits import shared_limiter
from chronomem.providers.settings import ProviderSettings

__all__ = ["LLMSettings", "NamedModels", "build_adapter", "build_language_model"]



class LLMSettings(ProviderSettings):
    """Everything the LLM layer can be told: how to reach providers (:class:`ProviderSettings`) and
    which model answers. ``role_models`` maps a role to a ``provider:model``."""

    model: str = "openai:gpt-4o-mini"
    role_models: dict[ModelRole, str] = Field(default_factory=dict)
    structured_output: StructuredOutputMode = "auto"
    temperature: float | None = 0.0  # None: not sent (reasoning models refuse it)
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"  # o-series/gpt-5 want the latter
    corrective_retries: int = Field(default=1, ge=0)
    cache_path: Path | None = None
    local_threads: int = Field(default=0, ge=0)  # the packaged local model's server; 0: the machine's cores

    @field_validator("model")
    @classmethod
    def _expand_local(cls, spec: str) -> str:
        return _expand_local_spec(spec)

    @field_validator("role_models")
    @classmethod
    def _expand_local_roles(cls, specs: dict[ModelRole, str]) -> dict[ModelRole, str]:
        return {role: _expand_local_spec(spec) for role, spec in specs.items()}

    def model_for(self, role: str) -> str:
        return next((spec for routed, spec in self.role_models.items() if routed == role), self.model)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> LLMSettings:
        """Settings from the environment variables of :mod:`chronomem.llm.environment` (listed in
        docs/llm.md); ``overrides`` win over them."""
        env = os.environ if environ is None else environ
        default_model = overrides.get("model") or cls.model_fields["model"].default
        values = values_from_env(env, default_model=default_model)
        values.update(overrides)
        return cls.model_validate(values)


def _expand_local_spec(spec: str) -> str:
    """``local`` alone names the packaged default model."""
    if spec.strip().lower() == "local":
        from chronomem.llm.local_model import DEFAULT_MODEL

        return f"local:{DEFAULT_MODEL}"
    return spec


# Models the caller builds itself, by a name without a provider (the facade passes the rule-based
# stand-in, ``heuristic``, which lives above the engines whose prompts it answers).
NamedModels = Mapping[str, Callable[[], LanguageModel]]


def build_adapter(spec: str, settings: LLMSettings) -> LanguageModel:
    """The bare adapter (no wrappers) for one ``provider:model`` string."""
    provider, model = parse_model_spec(spec)
    common: dict[str, Any] = {
        "api_key": settings.api_key_for(provider),
        "timeout_s": settings.timeout_for(provider),
        "temperature": settings.temperature,
        "corrective_retries": settings.corrective_retries,
    }
    if provider == "anthropic":
        return AnthropicModel(model, base_url=settings.base_url_for(provider), **common)
    if provider == "local":
        from chronomem.llm.local_model import LocalChatModel, ServerOptions, server_for

        # the packaged model behind a child llama.cpp server, spoken to like any OpenAI-compatible one
        server = server_for(model, ServerOptions(threads=settings.local_threads))
        return LocalChatModel(server, model, structured_output=settings.structured_output,
                              extra_body={"seed": 0}, **common)
    endpoint = openai_compatible_endpoint(
        provider, model, base_url=settings.base_url_for(provider), azure_api_version=settings.azure_api_version
    )
    return OpenAIChatModel(
        model,
        base_url=endpoint.base_url,
        provider=provider,
        auth_header=endpoint.auth,
        api_version=endpoint.api_version,
        structured_output=settings.structured_output,
        max_tokens_field=settings.max_tokens_field,
        **common,
    )


def _stack(spec: str, settings: LLMSettings, cache: ResponseCache | None, named: NamedModels) -> LanguageModel:
    if spec in named:
        return named[spec]()  # built by the caller: it makes no provider calls to limit, retry or cache
    adapter = build_adapter(spec, settings)
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


def build_language_model(settings: LLMSettings, *, named: NamedModels | None = None) -> RoutedModel:
    """A model that answers each prompt with its role's configured model, behind every wrapper.

    ``named`` maps model names without a provider to factories (``{"heuristic": heuristic_model}``:
    ``chronomem.heuristic.STAND_INS``); a spec found there is built by its factory, unwrapped."""
    named = named or {}
    cache = ResponseCache(settings.cache_path) if settings.cache_path else None
    stacks: dict[str, LanguageModel] = {}

    def stacked(spec: str) -> LanguageModel:
        if spec not in stacks:
            stacks[spec] = _stack(spec, settings, cache, named)
        return stacks[spec]

    default = stacked(settings.model)
    routes: dict[str, LanguageModel] = {role: stacked(spec) for role, spec in settings.role_models.items()}
    return RoutedModel(default, routes, on_close=cache.close if cache is not None else None)
