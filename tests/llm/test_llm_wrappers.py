"""Wrappers around any model: limits, retries, cache, routing, accounting."""

from __future__ import annotations

import asyncio
import random

import pytest
from llm_test_prompts import PERSON, Person, Question

from chronomem.errors import ModelOutputError, ModelUnavailableError
from chronomem.llm.accounting import process_usage, reset_process_usage, usage_scope
from chronomem.llm.base import Prompt
from chronomem.llm.cache import CachedModel, ResponseCache
from chronomem.llm.limits import LimitedModel
from chronomem.llm.retry import RetryingModel
from chronomem.llm.routing import RoutedModel
from chronomem.llm.testing import FunctionModel
from chronomem.providers.http import ProviderUnavailableError
from chronomem.providers.limits import RateLimiter, shared_limiter
from chronomem.providers.retry import RetryPolicy, call_with_retries


def alice(prompt, context):
    return Person(name="Alice", role="speaker")


async def test_concurrency_limit_holds_across_callers():
    in_flight = 0
    peak = 0

    async def slow(prompt, context):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return alice(prompt, context)

    limiter = RateLimiter(max_concurrency=3)
    models = [LimitedModel(FunctionModel(slow), limiter) for _ in range(2)]  # two callers, one budget
    await asyncio.gather(*(models[i % 2].complete(PERSON, Question(text="x")) for i in range(12)))
    assert peak == 3 and limiter.in_flight == 0


async def test_cancelled_waiter_does_not_leak_a_slot():
    limiter = RateLimiter(max_concurrency=1)
    release = asyncio.Event()

    async def hold():
        async with limiter.slot():
            await release.wait()

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0)
    waiter = asyncio.create_task(hold())
    await asyncio.sleep(0)
    waiter.cancel()
    release.set()
    await holder
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert limiter.in_flight == 0
    async with limiter.slot():
        assert limiter.in_flight == 1


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


async def test_requests_per_minute_budget_makes_the_next_caller_wait():
    clock = FakeClock()
    limiter = RateLimiter(requests_per_minute=2, clock=clock, sleep=clock.sleep)
    for _ in range(2):
        async with limiter.slot():
            pass
    assert clock.sleeps == []
    async with limiter.slot():
        pass
    assert clock.now == pytest.approx(30.0)  # one request refills every 30 s at 2/min


async def test_tokens_per_minute_budget_counts_reserved_tokens_and_refunds_unused():
    clock = FakeClock()
    limiter = RateLimiter(tokens_per_minute=1000, clock=clock, sleep=clock.sleep)
    async with limiter.slot(800) as reservation:
        reservation.settle(100)  # the call used far less than reserved: 700 come back
    async with limiter.slot(800):
        pass
    assert clock.sleeps == []
    async with limiter.slot(600):
        pass
    assert clock.now == pytest.approx(600 / 1000 * 60 - 100 / 1000 * 60)  # waits for the 500 missing


def test_shared_limiter_is_one_instance_per_key():
    first = shared_limiter("test-endpoint-a", max_concurrency=2)
    assert shared_limiter("test-endpoint-a", max_concurrency=99) is first
    assert shared_limiter("test-endpoint-b") is not first


async def test_call_with_retries_uses_server_hint_else_jittered_backoff():
    delays: list[float] = []
    failures = [ProviderUnavailableError("429", retry_after=1.5), ProviderUnavailableError("500")]

    async def call():
        if failures:
            raise failures.pop(0)
        return "ok"

    async def record(seconds: float) -> None:
        delays.append(seconds)

    policy = RetryPolicy(initial_delay_s=1.0, multiplier=2.0)
    assert await call_with_retries(call, policy, sleep=record) == "ok"
    assert delays[0] == 1.5
    assert 1.0 <= delays[1] <= 2.0  # retry 1: ceiling 2 s, half of it fixed


def test_backoff_grows_exponentially_and_is_capped():
    policy = RetryPolicy(initial_delay_s=0.5, multiplier=2.0, max_delay_s=4.0)
    rng = random.Random(1)
    ceilings = [0.5, 1.0, 2.0, 4.0, 4.0]
    for number, ceiling in enumerate(ceilings):
        delay = policy.backoff(number, rng)
        assert ceiling / 2 <= delay <= ceiling


async def test_non_transient_errors_are_not_retried():
    calls = 0

    async def call():
        nonlocal calls
        calls += 1
        raise ModelOutputError("bad answer")

    with pytest.raises(ModelOutputError):
        await call_with_retries(call, RetryPolicy(initial_delay_s=0))
    assert calls == 1


async def test_retries_are_counted_in_usage_and_scopes():
    attempts = 0

    async def flaky(prompt, context):
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise ProviderUnavailableError("503")
        return alice(prompt, context)

    model = RetryingModel(FunctionModel(flaky), RetryPolicy(initial_delay_s=0.001))
    with usage_scope() as scope:
        completion = await model.complete(PERSON, Question(text="x"))
    assert completion.usage.retries == 2 and model.retries == 2
    assert scope.retries == 2 and scope.calls == 1


async def test_giving_up_raises_unavailable_with_attempt_count():
    async def down(prompt, context):
        raise ProviderUnavailableError("503")

    model = RetryingModel(FunctionModel(down), RetryPolicy(max_attempts=2, initial_delay_s=0.001))
    with pytest.raises(ModelUnavailableError, match="after 2 attempts"):
        await model.complete(PERSON, Question(text="x"))


async def test_disk_cache_makes_a_repeated_prompt_free_and_survives_reopening(tmp_path):
    inner = FunctionModel(alice, model_name="fn")
    cache = ResponseCache(tmp_path / "llm.sqlite")
    model = CachedModel(inner, cache)
    first = await model.complete(PERSON, Question(text="Alice: hi"))
    with usage_scope() as scope:
        second = await model.complete(PERSON, Question(text="Alice: hi"))
    assert second.output == first.output and len(inner.calls) == 1
    assert (second.usage.cache_hits, second.usage.calls, scope.cache_hits, scope.calls) == (1, 0, 1, 0)
    cache.close()

    reopened = CachedModel(FunctionModel(alice, model_name="fn"), ResponseCache(tmp_path / "llm.sqlite"))
    third = await reopened.complete(PERSON, Question(text="Alice: hi"))
    assert third.usage.cache_hits == 1
    reopened.cache.close()


async def test_cache_misses_when_context_model_or_schema_differ(tmp_path):
    cache = ResponseCache(tmp_path / "llm.sqlite")
    inner = FunctionModel(alice, model_name="fn")
    await CachedModel(inner, cache).complete(PERSON, Question(text="a"))
    await CachedModel(inner, cache).complete(PERSON, Question(text="b"))
    await CachedModel(inner, cache, model_name="other").complete(PERSON, Question(text="a"))

    class Loose(Person):
        note: str | None = None

    loose = Prompt(name=PERSON.name, answer=Loose, build=PERSON.build, max_output_tokens=64)
    await CachedModel(inner, cache).complete(loose, Question(text="a"))
    assert len(inner.calls) == 4
    cache.close()


async def test_invalid_answers_are_never_cached(tmp_path):
    cache = ResponseCache(tmp_path / "llm.sqlite")
    model = CachedModel(FunctionModel(lambda p, c: {"name": "x"}), cache)
    for _ in range(2):
        with pytest.raises(ModelOutputError):
            await model.complete(PERSON, Question(text="a"))
    assert len(model.inner.calls) == 4
    cache.close()


async def test_routed_model_sends_each_role_to_its_model():
    strong = FunctionModel(alice, model_name="strong")
    cheap = FunctionModel(alice, model_name="cheap")
    routed = RoutedModel(strong, {"resolution": cheap})
    resolution = Prompt(name="resolve", answer=Person, build=PERSON.build, role="resolution")
    await routed.complete(PERSON, Question(text="x"))
    await routed.complete(resolution, Question(text="x"))
    assert strong.prompt_names == ["extract_person"] and cheap.prompt_names == ["resolve"]


async def test_process_usage_adds_up_every_call():
    reset_process_usage()
    model = FunctionModel(alice)
    await asyncio.gather(*(model.complete(PERSON, Question(text="x")) for _ in range(5)))
    total = process_usage()
    assert total.calls == 5 and total.output_tokens == model.usage.output_tokens > 0
