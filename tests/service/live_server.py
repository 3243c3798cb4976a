"""A real chronomem server for the kill test and the fuzz run: uvicorn, the embedded store, and a
scripted model that takes ``--latency`` seconds per call. Each episode whose extraction completes is
appended to ``<data-dir>/processed.log`` (after the store's atomic write), so a test can tell whether
any episode was processed twice across a SIGKILL and a restart.

    python tests/service/live_server.py --data-dir DIR --port PORT [--latency 0.2] [--role all|api|worker]
        [--store URL] [--shard i/n] [--model speakers|heuristic] [--hang-after N]

``--role api`` serves without ingestion workers and ``--role worker`` runs only the worker pool (no
port), as ``chronomem serve --no-workers`` and ``chronomem worker [--shard i/n]`` do, on the same
store (default: ``<data-dir>/graph.db``). With ``--hang-after N`` every model call after the N-th
logged episode waits forever, so a test can SIGKILL the process while it surely holds an episode.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

from chronomem.app.workers import Shard, run_until_stopped
from chronomem.config.settings import Settings, WorkerSettings
from chronomem.crossencoder.testing import TokenOverlapCrossEncoder
from chronomem.embed.testing import HashingEmbedder
from chronomem.heuristic import heuristic_answer
from chronomem.ingest.prompts import ExtractedEntities, ExtractedEntity
from chronomem.llm.testing import FunctionModel
from chronomem.memory import Chronomem
from chronomem.store.factory import open_store


def speakers_only(prompt, context):
    if prompt.answer is ExtractedEntities:
        return ExtractedEntities(entities=[ExtractedEntity(name=context.episode.current.split(":", 1)[0])])
    return prompt.answer()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--role", choices=["all", "api", "worker"], default="all")
    parser.add_argument("--store")
    parser.add_argument("--shard", type=Shard.parse, default=Shard())
    parser.add_argument("--model", choices=["speakers", "heuristic"], default="speakers",
                        help="speakers: extract only each message's speaker; heuristic: the rule-based stand-in")
    parser.add_argument("--hang-after", type=int, default=None,
                        help="once this many episodes are logged, model calls never return")
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir, store_url=args.store,  # a server store: its control plane too
                        workers=WorkerSettings(concurrency=4, poll_interval_s=0.1))
    store_url = args.store or f"sqlite:///{args.data_dir / 'graph.db'}"

    asyncio.run(serve(args.data_dir, args.port, args.latency, settings, args.role, store_url, args.shard, args.model,
                      args.hang_after))


async def serve(
    data_dir: Path, port: int, latency: float, settings: Settings, role: str, store_url: str, shard: Shard,
    model_name: str = "speakers", hang_after: int | None = None,
) -> None:
    store = await open_store(store_url)
    log_path = data_dir / "processed.log"
    answer = heuristic_answer if model_name == "heuristic" else speakers_only
    logged_here = 0

    async def answer_or_hang(prompt, context):
        if hang_after is not None and logged_here >= hang_after:
            await asyncio.Event().wait()  # never set: the episode stays in ``processing`` until the kill
        return answer(prompt, context)

    named = "heuristic" if model_name == "heuristic" else "function:speakers_only"
    model = FunctionModel(answer_or_hang, model_name=named, latency_s=latency)
    memory = Chronomem(store=store, embedder=HashingEmbedder(), llm=model, settings=settings,
                       cross_encoder=TokenOverlapCrossEncoder())
    extract = memory.process

    async def logged(group_id: str, episode_id: str):
        nonlocal logged_here
        result = await extract(group_id, episode_id)
        if not result.skipped:
            logged_here += 1
            with open(log_path, "a", encoding="utf-8") as log:
                log.write(episode_id + "\n")
                log.flush()
                os.fsync(log.fileno())
        return result

    memory.process = logged  # type: ignore[method-assign]
    if role != "worker":
        from chronomem.service.app import create_app, serve_app  # a worker does not pay for the HTTP app

        await serve_app(create_app(memory, workers=role == "all"), port=port, log_level="warning")
        return
    await run_until_stopped(memory, shard=shard, on_ready=lambda: print("worker ready", flush=True))
    await memory.close()


if __name__ == "__main__":
    main()
