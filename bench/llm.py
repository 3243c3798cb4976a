"""LLM-layer benchmark: the wrapper stack under load, and its overhead per call.

Against the loopback fake provider (``chronomem.llm.fakeserver``) speaking the OpenAI chat wire format:

1. Load: ``--calls`` structured calls (default 1,000) from ``--concurrency`` workers (default 16),
   the server answering after ``--latency-ms`` (50) and refusing ``--rate-limited`` (20%) of requests
   with 429 (no Retry-After, so our jittered backoff decides). The stack is the one
   ``build_language_model`` builds (adapter → process-wide limiter → retries); every answer is
   parsed and validated. Reports throughput, p50/p95 latency per call as the caller sees it,
   retries, and failures that reached the caller (should be 0).
2. Overhead: the same structured call through the full stack vs a bare ``httpx`` POST of the same
   payload (server latency 0, no 429s), interleaved in rounds; the median difference is the
   wrapper's cost per call (building the request, limiter, retry bookkeeping, parsing, validation).

Prints ``name: value`` lines; progress goes to stderr.

    .venv/bin/python bench/llm.py
    .venv/bin/python bench/llm.py --calls 300 --overhead-calls 200
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Literal

import httpx
from pydantic import BaseModel

from chronomem.llm.accounting import process_usage, reset_process_usage
from chronomem.llm.base import Message, Prompt
from chronomem.llm.closing import aclose_model
from chronomem.llm.fakeserver import Answer, FakeProviderServer, FakeRequest
from chronomem.llm.settings import LLMSettings, build_language_model

__all__ = ["main"]


class Fact(BaseModel):
    source: str
    target: str
    relation_type: str
    fact: str
    valid_at: str | None = None


class Facts(BaseModel):
    facts: list[Fact]
    status: Literal["complete", "partial"]


class Episode(BaseModel):
    text: str


ANSWER = {
    "facts": [
        {"source": "Alice", "target": "Paris", "relation_type": "LIVES_IN", "fact": "Alice lives in Paris"},
        {"source": "Alice", "target": "Acme", "relation_type": "WORKS_AT", "fact": "Alice works at Acme"},
    ],
    "status": "complete",
}


def _build(episode: Episode) -> list[Message]:
    return [Message("system", "Extract the facts stated in the message."), Message("user", episode.text)]


EXTRACT = Prompt(name="extract_facts", answer=Facts, build=_build, max_output_tokens=256)


def _answer(_request: FakeRequest) -> Answer:
    return Answer(ANSWER)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def _load(args: argparse.Namespace) -> dict[str, float]:
    server = FakeProviderServer(
        responder=_answer, latency_s=args.latency_ms / 1000, rate_limit_fraction=args.rate_limited, seed=7
    ).start()
    settings = LLMSettings(
        model="vllm:bench-model",
        base_urls={"vllm": server.openai_base_url},
        max_concurrency=args.concurrency,
        initial_backoff_s=args.backoff_s,
        max_backoff_s=2.0,
        max_attempts=10,
    )
    model = build_language_model(settings)
    latencies: list[float] = []
    failures = 0
    remaining = iter(range(args.calls))

    async def worker() -> None:
        nonlocal failures
        for number in remaining:
            started = time.perf_counter()
            try:
                completion = await model.complete(EXTRACT, Episode(text=f"Alice ({number}) lives in Paris."))
                assert completion.output.facts[0].relation_type == "LIVES_IN"
            except Exception as exc:  # counted: the figure is "failures the caller saw"
                failures += 1
                print(f"failure: {exc!r}", file=sys.stderr)
            latencies.append(time.perf_counter() - started)

    reset_process_usage()
    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(args.concurrency)))
    elapsed = time.perf_counter() - started
    usage = process_usage()
    await aclose_model(model)
    server.stop()
    return {
        "llm_calls": args.calls,
        "llm_concurrency": args.concurrency,
        "llm_throughput_rps": round(args.calls / elapsed, 1),
        "llm_p50_ms": round(1000 * _percentile(latencies, 0.50), 1),
        "llm_p95_ms": round(1000 * _percentile(latencies, 0.95), 1),
        "llm_requests_sent": server.count(),
        "llm_rate_limited_429": server.rate_limited,
        "llm_retries": usage.retries,
        "llm_failures_surfaced": failures,
    }


async def _overhead(args: argparse.Namespace) -> dict[str, float]:
    server = FakeProviderServer(responder=_answer).start()
    settings = LLMSettings(model="vllm:bench-model", base_urls={"vllm": server.openai_base_url + "/"})
    model = build_language_model(settings)
    adapter = model.default.inner.inner  # type: ignore[attr-defined]  # RetryingModel → LimitedModel → adapter
    episode = Episode(text="Alice lives in Paris and works at Acme.")
    payload = adapter._payload(EXTRACT, EXTRACT.messages(episode), adapter.mode)
    url = adapter.url
    stack_times: list[float] = []
    bare_times: list[float] = []
    async with httpx.AsyncClient() as client:
        for _ in range(20):  # warm both paths (connections, caches)
            await model.complete(EXTRACT, episode)
            (await client.post(url, json=payload)).json()
        rounds, per_round = 10, max(1, args.overhead_calls // 10)
        for _ in range(rounds):
            for _ in range(per_round):
                started = time.perf_counter()
                (await client.post(url, json=payload)).json()
                bare_times.append(time.perf_counter() - started)
            for _ in range(per_round):
                started = time.perf_counter()
                await model.complete(EXTRACT, episode)
                stack_times.append(time.perf_counter() - started)
    await aclose_model(model)
    server.stop()
    bare, stacked = statistics.median(bare_times), statistics.median(stack_times)
    return {
        "llm_bare_httpx_ms": round(1000 * bare, 3),
        "llm_stack_call_ms": round(1000 * stacked, 3),
        "llm_wrapper_overhead_ms": round(1000 * (stacked - bare), 3),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--rate-limited", type=float, default=0.2, help="share of requests answered 429")
    parser.add_argument("--backoff-s", type=float, default=0.05, help="initial retry backoff")
    parser.add_argument("--overhead-calls", type=int, default=1000)
    args = parser.parse_args(argv)
    print("load: structured calls through the wrappers …", file=sys.stderr)
    figures = asyncio.run(_load(args))
    print("overhead: stack vs bare httpx …", file=sys.stderr)
    figures.update(asyncio.run(_overhead(args)))
    for name, value in figures.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
