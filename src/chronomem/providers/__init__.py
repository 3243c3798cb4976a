"""Provider plumbing shared by every remote adapter: chat models (:mod:`chronomem.llm`), embedders
(:mod:`chronomem.embed`) and anything else that calls a model over HTTP.

- :mod:`~chronomem.providers.endpoints`: ``provider:model`` names, default base URLs, API-key
  variables, authentication headers and Azure's deployment URLs (written once, here);
- :mod:`~chronomem.providers.http`: one POST with httpx, failures translated into errors that say
  whether retrying can help;
- :mod:`~chronomem.providers.retry`: backoff with jitter that honours ``Retry-After``;
- :mod:`~chronomem.providers.limits`: concurrency and rate limits shared per endpoint in the process;
- :mod:`~chronomem.providers.tokens`: token estimation where a provider reports no counts;
- :mod:`~chronomem.providers.guard`: the switch that forbids real requests in tests;
- :mod:`~chronomem.providers.settings`: base URLs, keys, timeouts and limits, per provider.

Nothing here knows prompts or vectors; it imports neither :mod:`chronomem.llm` nor
:mod:`chronomem.embed`, which both build on it.
"""

from chronomem.providers.endpoints import (
    DEFAULT_BASE_URLS,
    OpenAICompatibleEndpoint,
    auth_headers,
    openai_compatible_endpoint,
    parse_model_spec,
)
from chronomem.providers.guard import allow_model_requests, forbid_model_requests
from chronomem.providers.http import LazyHttpClient, ProviderRequestError, ProviderUnavailableError, post_json
from chronomem.providers.limits import RateLimiter, shared_limiter
from chronomem.providers.retry import RetryPolicy, call_with_retries
from chronomem.providers.settings import ProviderSettings
from chronomem.providers.tokens import estimate_tokens

__all__ = [
    "DEFAULT_BASE_URLS",
    "LazyHttpClient",
    "OpenAICompatibleEndpoint",
    "ProviderRequestError",
    "ProviderSettings",
    "ProviderUnavailableError",
    "RateLimiter",
    "RetryPolicy",
    "allow_model_requests",
    "auth_headers",
    "call_with_retries",
    "estimate_tokens",
    "forbid_model_requests",
    "openai_compatible_endpoint",
    "parse_model_spec",
    "post_json",
    "shared_limiter",
]
