"""Ingestion with a real model at the speed of the hardware: prompt caching off and on, in one run.

Episodes of LoCoMo conv-26 (its first ``--locomo`` turns) and of the extraction gold set (the dev
split's first ``--gold`` episodes) go through the whole pipeline, with the packaged local model
(``--model``, default Qwen2.5-Coder-1.5B-Instruct) on a llama.cpp server this process starts: once
with the server's prompt cache off (as the server was run before: only the previous call's state
is reused, so alternating prompts re-read their instructions), once with it on (llama-cpp-python's
RAM cache: every prompt resumes from the longest prefix it has evaluated). Each pass gets a fresh
server and a fresh store, so neither warms the other.

Per pass, on the same episodes: ``seconds_per_episode`` (wall time of ``add_episode``),
``prompt_seconds_per_episode`` and ``writing_seconds_per_episode`` (the server's own split of that
time, from its log), ``prompt_tokens_per_episode``, ``cached_prompt_tokens_share`` (prompt tokens the server did not
evaluate again, read from its log), ``output_tokens_per_episode``, ``llm_calls_per_episode``; the
"off" pass's figures are prefixed ``off_``, and ``speedup`` is off / on.

    .venv/bin/python bench/ingest_real.py
    .venv/bin/python bench/ingest_real.py --locomo 5 --gold 5 --model qwen2.5-coder-0.5b
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from chronomem.config.settings import Settings
from chronomem.domain import Episode, EpisodeKind
from chronomem.llm.accounting import usage_scope
from chronomem.llm.local_model import LocalChatModel, LocalServer, ServerOptions, assemble, local_model
from chronomem.memory import Chronomem

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ingest import locomo_episodes  # noqa: E402  (bench/ingest.py: conv-26 as episodes)

GOLD = HERE / "data" / "extraction_gold.json"


def gold_episodes(limit: int) -> list[Episode]:
    """The dev split's episodes, case after case, each case a group of its own."""
    episodes = []
    for case in json.loads(GOLD.read_text())["cases"]:
        if case["split"] != "dev":
            continue
        for number, item in enumerate(case["episodes"]):
            episodes.append(Episode(
                id=f"{case['id']}-{number}", group_id=f"gold-{case['id']}",
                kind=EpisodeKind(item.get("kind", "message")), content=item["content"],
                speaker=item.get("speaker"), role=item.get("role"),
                reference_time=datetime.fromisoformat(item["reference_time"].replace("Z", "+00:00")),
                source_description=item.get("source_description", ""),
            ))
    return episodes[:limit]


async def one_pass(episodes: list[Episode], model_name: str, *, cache: bool, threads: int) -> dict[str, Any]:
    options = ServerOptions(threads=threads, prompt_cache_bytes=ServerOptions().prompt_cache_bytes if cache else 0)
    with LocalServer(assemble(local_model(model_name)), options) as server, tempfile.TemporaryDirectory() as data:
        llm = LocalChatModel(server, model_name, timeout_s=600, temperature=0.0, extra_body={"seed": 0})
        memory = await Chronomem.open(Settings(data_dir=Path(data)), llm=llm)
        seconds = 0.0
        log_start = server.log_size()
        try:
            with usage_scope() as usage:
                for number, episode in enumerate(episodes, start=1):
                    started = time.perf_counter()
                    await memory.add_episodes([episode])
                    took = time.perf_counter() - started
                    seconds += took
                    print(f"  [{'on' if cache else 'off'} {number}/{len(episodes)}] {took:.1f} s", file=sys.stderr)
        finally:
            await memory.close()
            await llm.aclose()
        reading, writing = server.seconds_since(log_start)
    count = len(episodes)
    return {
        "seconds_per_episode": round(seconds / count, 1),
        # the server's own split of that time: reading prompts (what caching saves) and writing answers
        "prompt_seconds_per_episode": round(reading / count, 1),
        "writing_seconds_per_episode": round(writing / count, 1),
        "prompt_tokens_per_episode": round(usage.input_tokens / count),
        "cached_prompt_tokens_share": round(usage.cached_input_tokens / max(1, usage.input_tokens), 3),
        "output_tokens_per_episode": round(usage.output_tokens / count),
        "llm_calls_per_episode": round(usage.calls / count, 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=int, default=8, help="LoCoMo conv-26 turns (default 8)")
    parser.add_argument("--gold", type=int, default=8, help="extraction gold set episodes (default 8)")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="a packaged local model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", choices=("on", "off"), help="run one pass only")
    args = parser.parse_args(argv)
    episodes = locomo_episodes("locomo-conv-26", args.locomo) + gold_episodes(args.gold)
    print(f"{len(episodes)} episodes, model {args.model}, {args.threads} threads", file=sys.stderr)
    figures: dict[str, Any] = {"episodes": len(episodes), "model": args.model}
    passes = [False, True] if args.only is None else [args.only == "on"]
    for cache in passes:
        result = asyncio.run(one_pass(episodes, args.model, cache=cache, threads=args.threads))
        figures.update({(name if cache else f"off_{name}"): value for name, value in result.items()})
    if "off_seconds_per_episode" in figures and "seconds_per_episode" in figures:
        figures["speedup"] = round(figures["off_seconds_per_episode"] / figures["seconds_per_episode"], 2)
    for name, value in figures.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
