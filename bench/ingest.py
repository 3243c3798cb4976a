"""Ingestion benchmark: the first LoCoMo conversation (conv-26, 419 turns) through the full pipeline.

One episode per turn, with its session's time (plus 30 s per turn, so turns keep their order). The
model is the *heuristic stand-in* (``chronomem.heuristic``: not an LLM; it answers every
prompt from the text itself: speakers, capitalized phrases and noun phrases as entities, facts
between them, relative dates, candidate duplicates, occasional contradictions). Embeddings come from
the deterministic hashing embedder; the store is SQLite in a temporary directory.

1. Cost and overhead, staged extraction (the paper's) and combined (entities and facts in one
   call): LLM calls per episode (mean, p95, max), input/output tokens per episode (estimated,
   ceil(chars/4)), entities and facts extracted per episode, pipeline time per episode outside the
   model (median and mean of each ``add_episode`` call's wall time — persist, stages, the one write —
   minus the time spent in model calls), and the process CPU time per episode (all threads, the
   stand-in model's own CPU excluded), which a loaded machine does not inflate.
   With ``--summaries``, Zep's user and thread summaries are kept too, as the service keeps them:
   the conversation's first speaker is the user, every turn is a message of one thread, and after
   each episode both summaries are read (the service refreshes one with one call once 24 new facts
   or messages piled up). Their calls and input tokens are reported per episode on their own
   (``summary_*``) and added to the ingestion figures (``with_summaries_*``).
   Entity summaries are always on (they cost no call of their own: each episode's note rides in the
   entity-extraction answer, and a batched rewrite runs when one passes its bound): the notes added
   and skipped as repeats (and how many skipped ones belong to an entity that got a new fact in the
   same episode: a skip that may have missed something), and at the end the number of empty
   summaries, their length and who wrote them (``summary_source``: the heuristic stand-in's are
   labelled ``graph``, as a model's would be ``model``).
2. Throughput: ``--groups`` groups (10) each ingesting the first ``--throughput-episodes`` turns
   (30) at once, every model call taking ``--latency-ms`` (500): episodes per second overall.

Prints ``name: value`` lines (combined-mode figures are prefixed ``combined_``); progress on stderr.

    .venv/bin/python bench/ingest.py
    .venv/bin/python bench/ingest.py --episodes 100 --throughput-episodes 10
    .venv/bin/python bench/ingest.py --summaries --skip-combined
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from chronomem.domain import Episode
from chronomem.embed.testing import HashingEmbedder
from chronomem.heuristic import heuristic_answer
from chronomem.ingest import IngestConfig, Ingestor, IngestResult
from chronomem.llm.accounting import estimate_message_tokens
from chronomem.llm.testing import FunctionModel
from chronomem.memory import Chronomem
from chronomem.store.factory import open_store
from chronomem.timeutil import assume_utc

__all__ = ["locomo_episodes", "main"]

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo10.json"  # ../shared beside the repo


def locomo_episodes(group_id: str, limit: int | None = None, path: Path = LOCOMO) -> list[Episode]:
    """conv-26 as message episodes, in order, with their session times."""
    sample = json.loads(path.read_text())[0]
    conversation = sample["conversation"]
    sessions = sorted(int(k.split("_")[1]) for k in conversation if k.startswith("session_") and k[8:].isdigit())
    episodes = []
    for number in sessions:
        started = assume_utc(datetime.strptime(conversation[f"session_{number}_date_time"], "%I:%M %p on %d %B, %Y"))
        for index, turn in enumerate(conversation[f"session_{number}"]):
            episodes.append(Episode(
                id=turn["dia_id"], group_id=group_id, speaker=turn["speaker"], content=turn["text"],
                reference_time=started + timedelta(seconds=30 * index), source_description="locomo conv-26",
            ))
    return episodes[:limit]


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


class SummaryReader:
    """Reads the user's and the thread's summaries after each episode, through the service's own
    code (``ProjectSpace``), and counts the summary calls and their input tokens per episode."""

    PROMPTS = ("user_summary", "thread_summary")

    def __init__(self, memory: Any, first_speaker: str) -> None:
        from chronomem.app.tenancy import ProjectSpace
        from chronomem.controlplane.sqlite import SQLiteControlPlane

        self.control = SQLiteControlPlane.open(":memory:")
        self.space = ProjectSpace(self.control.ensure_project("bench"), self.control, memory)
        self.user = self.space.create_user("user", first_name=first_speaker)
        self.space.create_thread("thread", "user")
        self.calls: list[int] = []
        self.tokens: list[int] = []
        self._calls = self._tokens = 0

    def count(self, prompt: Any, context: Any) -> None:
        if prompt.name in self.PROMPTS:
            self._calls += 1
            self._tokens += estimate_message_tokens(prompt.messages(context))

    async def after(self, episode: Episode) -> None:
        self.control.append_messages(self.space.project.id, "thread", self.user.group_id, [episode.id])
        await self.space.user_summary("user")
        await self.space.thread_summary("thread")
        self.calls.append(self._calls)
        self.tokens.append(self._tokens)
        self._calls = self._tokens = 0


async def measure_cost(mode: str, episodes: int | None, *, summaries: bool = False) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(f"sqlite:///{tmp}/bench.db")
        model_cpu = [0.0]
        reader: SummaryReader | None = None

        def timed_heuristic(prompt: Any, context: Any) -> Any:  # the stand-in's own CPU time is model time
            started = time.process_time()
            if reader is not None:
                reader.count(prompt, context)
            try:
                return heuristic_answer(prompt, context)
            finally:
                model_cpu[0] += time.process_time() - started

        model = FunctionModel(timed_heuristic, model_name="heuristic")
        ingestor = Ingestor(store, HashingEmbedder(), model, config=IngestConfig(extraction=mode))  # type: ignore[arg-type]
        turns = locomo_episodes("bench", episodes)
        if summaries:
            # the summaries are read through a facade over the same store and model; ingestion stays the
            # plain Ingestor above, so its figures are the ones measured without summaries
            memory = Chronomem(store=store, embedder=HashingEmbedder(), llm=model, owns_store=False)
            reader = SummaryReader(memory, turns[0].speaker or "user")
            turns = [e.model_copy(update={"group_id": reader.user.group_id}) for e in turns]
        results: list[IngestResult] = []
        pipeline_ms: list[float] = []  # the whole add_episode (persist, stages, write) minus model time
        cpu_started = time.process_time()
        try:
            for episode in turns:
                started = time.perf_counter()
                results.append(await ingestor.add_episode(episode))
                pipeline_ms.append(1000 * (time.perf_counter() - started - results[-1].usage.latency_s))
                if reader is not None:
                    await reader.after(episode)
            summaries = await _entity_summaries(store, turns[0].group_id) if turns else {}
        finally:
            await store.close()
        cpu_ms = 1000 * (time.process_time() - cpu_started - model_cpu[0]) / max(1, len(results))
    usages = [r.episode.usage for r in results]
    calls = [u["calls"] for u in usages]
    by_prompt: dict[str, int] = {}
    for usage in usages:
        for name, count in usage["by_prompt"].items():
            by_prompt[name] = by_prompt.get(name, 0) + count
    figures = {
        "episodes": len(results),
        "llm_calls_per_episode_mean": statistics.mean(calls),
        "llm_calls_per_episode_p95": _p95(calls),
        "llm_calls_per_episode_max": max(calls),
        "input_tokens_per_episode_mean": statistics.mean(u["input_tokens"] for u in usages),
        "output_tokens_per_episode_mean": statistics.mean(u["output_tokens"] for u in usages),
        "entities_per_episode_mean": statistics.mean(u["entities_extracted"] for u in usages),
        "facts_per_episode_mean": statistics.mean(u["facts_extracted"] for u in usages),
        "pipeline_overhead_ms_per_episode": statistics.median(pipeline_ms),
        "pipeline_overhead_ms_per_episode_mean": statistics.mean(pipeline_ms),
        # CPU time of every thread of this process per episode, the stand-in model's excluded: unlike
        # wall time it does not grow when other processes load the machine
        "pipeline_cpu_ms_per_episode": cpu_ms,
        "facts_restated_total": sum(len(r.facts_updated) for r in results),
        "facts_invalidated_total": sum(len(r.facts_invalidated) for r in results),
        "entities_created_total": sum(len(r.entities_created) for r in results),
        "failed_episodes": sum(1 for r in results if r.episode.status.value != "done"),
        # list items the stand-in answered past an answer's bounds for its context (the first ones kept)
        "answer_items_dropped_total": sum(int(u.get("items_dropped", 0)) for u in usages),
    }
    figures.update({f"calls_{name}_total": count for name, count in sorted(by_prompt.items())})
    keys = ("added", "skipped", "skipped_with_new_fact", "facts_for_skipped")
    notes = {key: sum(u["summary_notes"][key] for u in usages) for key in keys}
    figures.update({
        "summary_notes_added_total": notes["added"],
        "summary_notes_skipped_total": notes["skipped"],
        # a skip that may have missed something: the entity got a new fact in the same episode
        "summary_notes_skipped_with_new_fact_total": notes["skipped_with_new_fact"],
        # ... of which the new fact said what the summary lacked: its sentence was appended instead
        "summary_facts_appended_for_skipped_total": notes["facts_for_skipped"],
        **summaries,
    })
    if reader is not None:
        reader.control.close()
        both_calls = [c + s for c, s in zip(calls, reader.calls, strict=True)]
        both_tokens = [u["input_tokens"] + t for u, t in zip(usages, reader.tokens, strict=True)]
        figures.update({
            "summary_calls_per_episode_mean": statistics.mean(reader.calls),
            "summary_calls_total": sum(reader.calls),
            "summary_input_tokens_per_episode_mean": statistics.mean(reader.tokens),
            "summary_input_tokens_per_call_mean": sum(reader.tokens) / max(1, sum(reader.calls)),
            "with_summaries_llm_calls_per_episode_mean": statistics.mean(both_calls),
            "with_summaries_llm_calls_per_episode_p95": _p95(both_calls),
            "with_summaries_llm_calls_per_episode_max": max(both_calls),
            "with_summaries_input_tokens_per_episode_mean": statistics.mean(both_tokens),
        })
    return figures


async def _entity_summaries(store: Any, group_id: str) -> dict[str, float]:
    """What the entity summaries look like at the end: how many are empty, how long, who wrote them."""
    entities = await store.list_entities(group_id)
    lengths = [len(e.summary) for e in entities]
    figures: dict[str, float] = {
        "entity_summaries_empty": sum(1 for n in lengths if n == 0),
        "entity_summary_chars_mean": statistics.mean(lengths) if lengths else 0.0,
        "entity_summary_chars_max": max(lengths, default=0),
    }
    for source in ("model", "graph", "edit", ""):
        figures[f"entity_summaries_by_{source or 'nobody'}"] = sum(1 for e in entities if e.summary_source == source)
    return figures


async def measure_throughput(groups: int, per_group: int, latency_ms: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(f"sqlite:///{tmp}/throughput.db")
        model = FunctionModel(heuristic_answer, model_name="heuristic", latency_s=latency_ms / 1000)
        ingestor = Ingestor(store, HashingEmbedder(), model)
        batch = [e for g in range(groups) for e in locomo_episodes(f"group-{g}", per_group)]
        started = time.perf_counter()
        try:
            results = await ingestor.add_episodes(batch, progress=sys.stderr.isatty())
        finally:
            await store.close()
        elapsed = time.perf_counter() - started
    done = sum(1 for r in results if r.episode.status.value == "done")
    return {
        f"episodes_per_s_{int(latency_ms)}ms_{groups}groups": done / elapsed,
        "throughput_episodes": done,
        "throughput_wall_s": elapsed,
    }


def _print(figures: dict[str, float], prefix: str = "") -> None:
    for name, value in figures.items():
        text = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"{prefix}{name}: {text}", flush=True)


async def run(args: argparse.Namespace) -> None:
    print("staged extraction…", file=sys.stderr)
    _print(await measure_cost("staged", args.episodes, summaries=args.summaries))
    if not args.skip_combined:
        print("combined extraction…", file=sys.stderr)
        _print(await measure_cost("combined", args.episodes), prefix="combined_")
    print(f"throughput, {args.groups} groups, {args.latency_ms:.0f} ms per model call…", file=sys.stderr)
    _print(await measure_throughput(args.groups, args.throughput_episodes, args.latency_ms))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=None, help="turns of conv-26 to ingest (default: all 419)")
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--throughput-episodes", type=int, default=30, help="turns per group for the throughput run")
    parser.add_argument("--latency-ms", type=float, default=500.0)
    parser.add_argument("--skip-combined", action="store_true")
    parser.add_argument("--summaries", action="store_true",
                        help="keep Zep's user and thread summaries too, and report what they cost per episode")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
