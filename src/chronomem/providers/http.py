"""HTTP plumbing shared by every remote adapter (chat, embeddings): one POST, errors translated.

:func:`post_json` checks the forbid-requests switch, sends one request with httpx and turns every
failure into a chronomem error that says whether retrying can help:

- :class:`ProviderUnavailableError` (a ``ModelUnavailableError``): timeouts, connection errors,
  429, 408, 5xx (Anthropic's 529 included) and bodies that are not JSON. Carries ``retry_after``
  (seconds) when the server sent ``Retry-After`` or ``retry-after-ms``. The retry wrapper retries these.
- :class:`ProviderRequestError` (a ``ModelError``): other 4xx; retrying the same request cannot help.

No SDK is involved: the adapters speak the providers' documented wire formats directly, which keeps
the per-call overhead small and lets our retry policy, not an SDK's, decide.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from typing import Any

import httpx

from chronomem.errors import ModelError, ModelUnavailableError
from chronomem.providers.guard import ensure_model_requests_allowed

__all__ = [
    "LazyHttpClient",
    "ProviderRequestError",
    "ProviderUnavailableError",
    "new_http_client",
    "parse_retry_after",
    "post_json",
]

_RETRYABLE_STATUS = frozenset({408, 409, 429})
_MAX_BODY_IN_MESSAGE = 500


class ProviderUnavailableError(ModelUnavailableError):
    """A failure that may pass: retry later (after ``retry_after`` seconds, when given)."""

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None, body: str = ""
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.body = body


class ProviderRequestError(ModelError):
    """The provider refused the request itself (4xx); sending it again would fail again."""

    def __init__(self, message: str, *, status: int, body: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` as seconds or an HTTP date."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def new_http_client(timeout_s: float, max_connections: int = 64) -> httpx.AsyncClient:
    """A pooled client; the connect timeout is shorter so a dead host fails fast."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
        limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
    )


class LazyHttpClient:
    """An httpx client made on first use (building an adapter opens nothing) and closed with its owner.

    A client passed in (tests, a shared pool) is used as it is.
    """

    def __init__(self, timeout_s: float, client: httpx.AsyncClient | None = None) -> None:
        self.timeout_s = timeout_s
        self._client = client

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = new_http_client(self.timeout_s)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


def _error_for_status(response: httpx.Response, target: str) -> ModelError:
    body = response.text[:_MAX_BODY_IN_MESSAGE]
    status = response.status_code
    message = f"{target} answered HTTP {status}: {body}"
    if status in _RETRYABLE_STATUS or status >= 500:
        return ProviderUnavailableError(
            message, status=status, retry_after=parse_retry_after(response.headers), body=body
        )
    return ProviderRequestError(message, status=status, body=body)


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    payload: dict[str, Any],
    *,
    headers: dict[str, str],
    target: str,
    params: dict[str, str] | None = None,
    timeout_s: float | None = None,
) -> dict[str, Any]:
    """POST ``payload`` as JSON and return the decoded JSON object; see the module docstring.

    ``timeout_s`` bounds the whole call (httpx's own timeouts bound each read, and a server that
    trickles bytes would never trip them).
    """
    ensure_model_requests_allowed(target)
    try:
        async with asyncio.timeout(timeout_s):
            response = await client.post(url, json=payload, headers=headers, params=params)
    except (httpx.TimeoutException, TimeoutError) as exc:
        raise ProviderUnavailableError(f"{target} timed out ({_timeout_reason(exc, timeout_s)})") from exc
    except httpx.TransportError as exc:
        raise ProviderUnavailableError(f"{target} could not be reached: {exc!r}") from exc
    if response.status_code >= 400:
        raise _error_for_status(response, target)
    try:
        data = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProviderUnavailableError(
            f"{target} sent a body that is not JSON: {response.text[:_MAX_BODY_IN_MESSAGE]!r}",
            status=response.status_code,
        ) from exc
    if not isinstance(data, dict):
        raise ProviderUnavailableError(f"{target} sent JSON that is not an object", status=response.status_code)
    return data


def _timeout_reason(exc: Exception, timeout_s: float | None) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return type(exc).__name__
    return f"no answer within the per-call timeout of {timeout_s:g}s"
