"""How to reach model providers: base URLs, credentials, timeouts, retries and rate limits.

One settings model for everything that calls a provider over HTTP: the chat models'
:class:`~chronomem.llm.settings.LLMSettings` extends it with what only chat needs, and the embedder
factory takes it as it is, so an embedder and a chat model of one provider share one URL, key and
limit. The environment is read elsewhere (``LLMSettings.from_env``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from chronomem.errors import ConfigurationError
from chronomem.providers.endpoints import DEFAULT_BASE_URLS, default_timeout_s
from chronomem.providers.retry import RetryPolicy

__all__ = ["ProviderSettings"]


class ProviderSettings(BaseModel):
    """Per-provider endpoints and keys, and the request policy every provider call follows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_urls: dict[str, str] = Field(default_factory=dict)
    api_keys: dict[str, SecretStr] = Field(default_factory=dict)
    azure_api_version: str = "2024-10-21"
    timeout_s: float | None = Field(default=None, gt=0)  # None: the provider's default (60 s, local 300 s)
    max_attempts: int = Field(default=6, ge=1)
    initial_backoff_s: float = Field(default=0.5, ge=0)
    max_backoff_s: float = Field(default=30.0, ge=0)
    max_concurrency: int = Field(default=16, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)

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

    def timeout_for(self, provider: str) -> float:
        """Seconds one call to ``provider`` may take: ``timeout_s``, or the provider's default."""
        return self.timeout_s if self.timeout_s is not None else default_timeout_s(provider)
