"""LLM-layer benchmark: the wrapper stack under load, and its overhead per call.

Against the loopback fake provider (``chronomem.llm.fakeserver``, run as a separate process) speaking
the OpenAI chat wire format:

1. Load: ``--calls`` structured calls (default 1,000) from ``--concurrency`` workers (default 16),
   the server answering after ``--latency-ms`` (50) and refusing ``--rate-limited`` (20%) of requests
   with 429 (no Retry-After, so our jittered backoff decides). The stack is the one
   ``build_language_model`` builds (adapter → process-wide limiter → retries); every answer is
   parsed and validated. Reports throughput, p50/p95 latency per call as the caller sees it,
   retries, and failures that reached the caller (should be 0).
2. Overhead: the same structured call through the full stack vs a bare ``httpx`` POST of the same
   payload (server latency 0, no 429s), alternating call by call. ``llm_wrapper_overhead_ms`` is the
   difference of the median wall times; ``llm_wrapper_overhead_cpu_ms`` the difference in this
   process's CPU time per call, which a busy machine does not inflate (building the request,
   limiter, retry bookkeeping, parsing, validation).

Prints ``name: value`` lines; progress goes to stderr.

    .venv/bin/python bench/llm.py
    .venv/bin/python bench/llm.py --calls 300 --overhead-calls 200
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Literal

import httpx
from pydantic import BaseModel

from chronomem.llm.accounting import process_usage, reset_process_usage
from chronomem.llm.base import Message, Prompt
from chronomem.llm.closing import aclose_model
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


@contextlib.contextmanager
def fake_provider(latency_ms: float = 0.0, rate_limited: float = 0.0) -> Iterator[tuple[str, dict[str, int]]]:
    """The fake provider in its own process (so it does not compete for this process's GIL).

    Yields its OpenAI base URL and a dict filled, on exit, with its request counts."""
    command = [sys.executable, "-m", "chronomem.llm.fakeserver", "--answer", json.dumps(ANSWER)]
    command += ["--latency-ms", str(latency_ms), "--rate-limited", str(rate_limited), "--seed", "7"]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    stats: dict[str, int] = {}
    try:
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1", stats
    finally:
        process.stdin.close()
        stats.update(json.loads(process.stdout.readline() or "{}"))
        process.wait(timeout=30)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def _load(args: argparse.Namespace, base_url: str) -> dict[str, float]:
    settings = LLMSettings(
        model="vllm:bench-model",
        base_urls={"vllm": base_url},
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
    return {
        "llm_calls": args.calls,
        "llm_concurrency": args.concurrency,
        "llm_throughput_rps": round(args.calls / elapsed, 1),
        "llm_p50_ms": round(1000 * _percentile(latencies, 0.50), 1),
        "llm_p95_ms": round(1000 * _percentile(latencies, 0.95), 1),
        "llm_retries": usage.retries,
        "llm_failures_surfaced": failures,
    }


async def _overhead(args: argparse.Namespace, base_url: str) -> dict[str, float]:
    model = build_language_model(LLMSettings(model="vllm:bench-model", base_urls={"vllm": base_url}))
    adapter = model.default.inner.inner  # type: ignore[attr-defined]  # RetryingModel → LimitedModel → adapter
    episode = Episode(text="Alice lives in Paris and works at Acme.")
    payload = adapter._payload(EXTRACT, EXTRACT.messages(episode), adapter.mode)
    url = adapter.url
    wall: dict[str, list[float]] = {"bare": [], "stack": []}
    cpu = {"bare": 0.0, "stack": 0.0}

    async def bare() -> None:
        response = await client.post(url, json=payload)
        response.raise_for_status()
        response.json()

    async def stack() -> None:
        await model.complete(EXTRACT, episode)

    async with httpx.AsyncClient() as client:
        for _ in range(20):  # warm both paths (connections, schema cache)
            await bare()
            await stack()
        for _ in range(args.overhead_calls):  # alternate call by call, so noise hits both alike
            for name, call in (("bare", bare), ("stack", stack)):
                started_wall, started_cpu = time.perf_counter(), time.process_time()
                await call()
                wall[name].append(time.perf_counter() - started_wall)
                cpu[name] += time.process_time() - started_cpu
    await aclose_model(model)
    bare_ms, stack_ms = (1000 * statistics.median(wall[name]) for name in ("bare", "stack"))
    return {
        "llm_bare_httpx_ms": round(bare_ms, 3),
        "llm_stack_call_ms": round(stack_ms, 3),
        "llm_wrapper_overhead_ms": round(stack_ms - bare_ms, 3),
        # CPU of this process only (the server runs in another): immune to waiting on a busy machine.
        "llm_wrapper_overhead_cpu_ms": round(1000 * (cpu["stack"] - cpu["bare"]) / args.overhead_calls, 3),
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
    with fake_provider(args.latency_ms, args.rate_limited) as (base_url, served):
        figures = asyncio.run(_load(args, base_url))
    figures["llm_requests_sent"] = served.get("requests", -1)
    figures["llm_rate_limited_429"] = served.get("rate_limited", -1)
    print("overhead: stack vs bare httpx …", file=sys.stderr)
    with fake_provider() as (base_url, _):
        figures.update(asyncio.run(_overhead(args, base_url)))
    for name, value in figures.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
