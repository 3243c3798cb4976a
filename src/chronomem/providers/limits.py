"""Concurrency and rate limits shared by every caller of one endpoint in the process.

A :class:`RateLimiter` combines three limits: at most ``max_concurrency`` requests in flight, and
token buckets for requests per minute and tokens per minute (each bucket holds one minute's worth
and refills continuously, which is how providers meter). A caller reserves its estimated tokens
(prompt estimate + the prompt's output limit) before sending and :meth:`Reservation.settle` returns
what the call did not use.

:func:`shared_limiter` hands out one limiter per key (e.g. an endpoint URL) so that every model
object built for that endpoint in this process draws from the same budget.

The limiter keeps no asyncio primitives bound to an event loop (only futures created while waiting),
so a process-wide instance survives successive event loops (tests, ``asyncio.run`` per command).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RateLimiter", "Reservation", "shared_limiter"]


@dataclass(slots=True)
class _Bucket:
    per_minute: float
    level: float
    updated: float

    def refill(self, now: float) -> None:
        self.level = min(self.per_minute, self.level + (now - self.updated) * self.per_minute / 60.0)
        self.updated = now

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` is available (0 when it is now)."""
        missing = min(amount, self.per_minute) - self.level
        return max(0.0, missing * 60.0 / self.per_minute)


@dataclass(slots=True)
class Reservation:
    """Tokens reserved for one request; ``settle`` corrects the budget with the actual count."""

    limiter: RateLimiter
    reserved: int
    settled: bool = field(default=False)

    def settle(self, actual_tokens: int) -> None:
        if not self.settled:
            self.settled = True
            self.limiter._return_tokens(self.reserved - actual_tokens)


class RateLimiter:
    """At most ``max_concurrency`` in flight; optional requests- and tokens-per-minute budgets."""

    def __init__(
        self,
        *,
        max_concurrency: int | None = None,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.max_concurrency = max_concurrency
        self._clock = clock
        self._sleep = sleep
        now = clock()
        self._requests = _Bucket(requests_per_minute, requests_per_minute, now) if requests_per_minute else None
        self._tokens = _Bucket(tokens_per_minute, tokens_per_minute, now) if tokens_per_minute else None
        self._active = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def in_flight(self) -> int:
        return self._active

    async def _enter(self) -> None:
        if self.max_concurrency is None:
            self._active += 1
            return
        if self._active < self.max_concurrency and not self._waiters:
            self._active += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # the releasing caller hands its slot over (``_active`` stays counted)
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._leave()  # we were handed a slot we will not use: pass it on
            else:
                self._waiters.remove(waiter)
            raise

    def _leave(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._active -= 1

    async def _take_budget(self, tokens: int) -> None:
        while True:
            now = self._clock()
            waits = [0.0]
            for bucket, amount in ((self._requests, 1), (self._tokens, tokens)):
                if bucket is not None:
                    bucket.refill(now)
                    waits.append(bucket.wait_for(amount))
            wait = max(waits)
            if wait <= 0:
                if self._requests is not None:
                    self._requests.level -= 1
                if self._tokens is not None:
                    self._tokens.level -= min(tokens, self._tokens.per_minute)
                return
            await self._sleep(wait)

    def _return_tokens(self, amount: int) -> None:
        if self._tokens is not None:
            self._tokens.refill(self._clock())
            self._tokens.level = min(self._tokens.per_minute, self._tokens.level + amount)

    @asynccontextmanager
    async def slot(self, tokens: int = 0) -> AsyncIterator[Reservation]:
        """Hold one request slot (and ``tokens`` of budget) for the duration of the block."""
        await self._enter()
        try:
            await self._take_budget(tokens)
            yield Reservation(self, tokens)
        finally:
            self._leave()


_shared: dict[str, RateLimiter] = {}


def shared_limiter(key: str, **limits: Any) -> RateLimiter:
    """The process-wide limiter for ``key``; the first caller's ``limits`` configure it."""
    limiter = _shared.get(key)
    if limiter is None:
        limiter = _shared[key] = RateLimiter(**limits)
    return limiter
