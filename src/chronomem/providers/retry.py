"""Retries with exponential backoff and jitter, honouring ``Retry-After``.

:func:`call_with_retries` retries any ``ModelUnavailableError`` (429, 5xx, timeouts, connection
errors, as classified by :mod:`chronomem.providers.http`); other errors pass through at once. The
wait before retry *n* (from 0) is the server's ``Retry-After`` when it sent one, otherwise
``min(max_delay, initial_delay * multiplier**n)`` with "equal jitter" (half fixed, half random) so
callers rejected together do not come back together. A ``Retry-After`` longer than
``max_retry_after_s`` is not waited out: the error surfaces immediately, saying how long the server
asked for.

:class:`chronomem.llm.retry.RetryingModel` applies it to a whole ``LanguageModel.complete`` call;
embedders call :func:`call_with_retries` around their request.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from chronomem.errors import ModelUnavailableError

__all__ = ["RetryPolicy", "call_with_retries"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 6
    initial_delay_s: float = 0.5
    multiplier: float = 2.0
    max_delay_s: float = 30.0
    max_retry_after_s: float = 120.0

    def backoff(self, retry_number: int, rng: random.Random | None = None) -> float:
        """The jittered wait before retry ``retry_number`` (0-based) when the server gave no hint."""
        ceiling = min(self.max_delay_s, self.initial_delay_s * self.multiplier**retry_number)
        return ceiling / 2 + (rng or random).uniform(0, ceiling / 2)


def _server_hint(error: ModelUnavailableError) -> float | None:
    return getattr(error, "retry_after", None)


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    on_retry: Callable[[ModelUnavailableError, float], None] | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> T:
    """Await ``call()`` until it succeeds, retrying ``ModelUnavailableError`` per ``policy``."""
    for retry_number in range(policy.max_attempts):
        try:
            return await call()
        except ModelUnavailableError as error:
            hint = _server_hint(error)
            if hint is not None and hint > policy.max_retry_after_s:
                raise ModelUnavailableError(
                    f"{error} (the server asked to wait {hint:.0f}s, over the {policy.max_retry_after_s:.0f}s "
                    "this policy waits)"
                ) from error
            if retry_number == policy.max_attempts - 1:
                raise ModelUnavailableError(f"{error} (gave up after {policy.max_attempts} attempts)") from error
            delay = hint if hint is not None else policy.backoff(retry_number)
            if on_retry is not None:
                on_retry(error, delay)
            await sleep(delay)
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover
