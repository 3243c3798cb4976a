"""The environment variables of the LLM layer: declared once here, each with what it sets and means.

:data:`VARIABLES` is the table (docs and tests read it); :func:`values_from_env` turns an
environment into the keyword values of :class:`~chronomem.llm.settings.LLMSettings`, which is the
only caller (``LLMSettings.from_env``). Nothing reads ``os.environ`` on import.

Base URLs, highest precedence first:

1. ``CHRONOMEM_<PROVIDER>_BASE_URL`` (``CHRONOMEM_LLAMACPP_BASE_URL``, ``CHRONOMEM_OLLAMA_BASE_URL``, …);
2. ``CHRONOMEM_LLM_BASE_URL``, for the provider of ``CHRONOMEM_LLM_MODEL`` (the usual way to point
   the model at one local server);
3. the vendors' own variables (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ``AZURE_OPENAI_ENDPOINT``,
   ``OLLAMA_HOST``);
4. the provider's default (:data:`chronomem.providers.endpoints.DEFAULT_BASE_URLS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chronomem.providers.endpoints import API_KEY_ENV, PROVIDERS, parse_model_spec

__all__ = ["VARIABLES", "EnvironmentVariable", "base_url_variable", "values_from_env"]

_AZURE_ENDPOINT = " For Azure: the resource endpoint, https://<resource>.openai.azure.com."
_ROLES = ("extraction", "resolution", "summary", "rerank", "default")


@dataclass(frozen=True, slots=True)
class EnvironmentVariable:
    """One variable: its ``name``, the ``setting`` of ``LLMSettings`` it fills, and what it means."""

    name: str
    setting: str
    doc: str


def base_url_variable(provider: str) -> str:
    """``CHRONOMEM_<PROVIDER>_BASE_URL``: the per-provider base-URL variable."""
    return f"CHRONOMEM_{provider.upper()}_BASE_URL"


def _role_variable(role: str) -> str:
    return f"CHRONOMEM_LLM_MODEL_{role.upper()}"


# Settings read as they are (pydantic validates and converts the strings).
_PLAIN: tuple[EnvironmentVariable, ...] = (
    EnvironmentVariable(
        "CHRONOMEM_LLM_MODEL",
        "model",
        "The model for every role without one of its own, as 'provider:model' (e.g. 'openai:gpt-4o-mini', "
        "'llamacpp:qwen2.5'), or 'local' for the packaged Qwen2.5-Coder-1.5B-Instruct, run offline. Without it "
        "the library and server use no model.",
    ),
    EnvironmentVariable(
        "CHRONOMEM_LLM_STRUCTURED_OUTPUT",
        "structured_output",
        "How JSON is asked for: 'auto' (default: negotiated with the endpoint, learnt once per process), "
        "'json_schema', 'json_object_schema' (llama.cpp's form), 'json_object' or 'prompt'.",
    ),
    EnvironmentVariable(
        "CHRONOMEM_LLM_TIMEOUT_S",
        "timeout_s",
        "Seconds one model request may take, end to end, before it fails (and is retried). Default: 60 for "
        "hosted providers, 300 for local servers (ollama, vllm, llamacpp, lmstudio), which are often slow CPUs.",
    ),
    EnvironmentVariable(
        "CHRONOMEM_LLM_MAX_CONCURRENCY",
        "max_concurrency",
        "Requests in flight at once per endpoint and model, process-wide (default 16).",
    ),
    EnvironmentVariable(
        "CHRONOMEM_LLM_RPM", "requests_per_minute", "Requests per minute per endpoint and model (default: unlimited)."
    ),
    EnvironmentVariable(
        "CHRONOMEM_LLM_TPM", "tokens_per_minute", "Tokens per minute per endpoint and model (default: unlimited)."
    ),
    EnvironmentVariable(
        "CHRONOMEM_LOCAL_MODEL_THREADS",
        "local_threads",
        "Threads of the packaged local model's server (default 0: the machine's cores, up to 8). On a machine "
        "busy with other work, 1: threads that wait for each other slow to a crawl when one is descheduled.",
    ),
    EnvironmentVariable(
        "CHRONOMEM_LLM_CACHE", "cache_path", "A SQLite file for the on-disk response cache (default: no cache)."
    ),
    EnvironmentVariable(
        "OPENAI_API_VERSION", "azure_api_version", "Azure OpenAI's api-version query parameter (default 2024-10-21)."
    ),
)
_ROLE_MODELS = tuple(
    EnvironmentVariable(_role_variable(role), f"role_models[{role!r}]", f"The model of the {role!r} role.")
    for role in _ROLES
)
_BASE_URLS = (
    EnvironmentVariable(
        "CHRONOMEM_LLM_BASE_URL",
        "base_urls[<provider of CHRONOMEM_LLM_MODEL>]",
        "The base URL of the default model's provider (e.g. http://127.0.0.1:8080/v1 for a llama.cpp server).",
    ),
    *(
        EnvironmentVariable(
            base_url_variable(provider),
            f"base_urls[{provider!r}]",
            f"The base URL of {provider!r}; wins over every other base-URL variable."
            + (_AZURE_ENDPOINT if provider == "azure" else ""),
        )
        for provider in sorted(PROVIDERS)
    ),
    EnvironmentVariable("OPENAI_BASE_URL", "base_urls['openai']", "OpenAI's own variable for its base URL."),
    EnvironmentVariable("ANTHROPIC_BASE_URL", "base_urls['anthropic']", "Anthropic's own variable for its base URL."),
    EnvironmentVariable(
        "AZURE_OPENAI_ENDPOINT", "base_urls['azure']", "Azure's own variable: https://<resource>.openai.azure.com."
    ),
    EnvironmentVariable(
        "OLLAMA_HOST", "base_urls['ollama']", "Ollama's own variable, host:port or a URL; '/v1' is appended."
    ),
)
_API_KEYS = tuple(
    EnvironmentVariable(name, f"api_keys[{provider!r}]", f"The API key for {provider!r}.")
    for provider, name in sorted(API_KEY_ENV.items())
)

VARIABLES: tuple[EnvironmentVariable, ...] = (*_PLAIN, *_ROLE_MODELS, *_BASE_URLS, *_API_KEYS)


def _ollama_url(host: str) -> str:
    host = host if "://" in host else f"http://{host}"
    return host.rstrip("/") + "/v1"


def _base_urls(env: Mapping[str, str], default_model: str) -> dict[str, str]:
    urls: dict[str, str] = {}  # filled from the lowest precedence up, so later writes win
    vendor = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL", "azure": "AZURE_OPENAI_ENDPOINT"}
    urls.update({provider: env[name] for provider, name in vendor.items() if env.get(name)})
    if host := env.get("OLLAMA_HOST"):
        urls["ollama"] = _ollama_url(host)
    if url := env.get("CHRONOMEM_LLM_BASE_URL"):
        urls[parse_model_spec(env.get("CHRONOMEM_LLM_MODEL") or default_model)[0]] = url
    urls.update({p: env[base_url_variable(p)] for p in PROVIDERS if env.get(base_url_variable(p))})
    return urls


def values_from_env(env: Mapping[str, str], *, default_model: str) -> dict[str, Any]:
    """The ``LLMSettings`` keyword values that ``env`` sets (unset and empty variables set nothing).

    ``default_model`` is the model ``CHRONOMEM_LLM_BASE_URL`` applies to when
    ``CHRONOMEM_LLM_MODEL`` is not set.
    """
    values: dict[str, Any] = {v.setting: env[v.name] for v in _PLAIN if env.get(v.name)}
    roles = {role: env[_role_variable(role)] for role in _ROLES if env.get(_role_variable(role))}
    if roles:
        values["role_models"] = roles
    values["api_keys"] = {provider: env[name] for provider, name in API_KEY_ENV.items() if env.get(name)}
    values["base_urls"] = _base_urls(env, default_model)
    return values
