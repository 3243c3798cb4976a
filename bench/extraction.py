"""Extraction quality with a real model: the hand-written gold set through the real pipeline.

Each case of ``bench/data/extraction_gold.json`` (conversations and documents, see
``bench/data/README-extraction.md``) is ingested episode by episode, in order, into a group of its
own of an embedded store, with the local MiniLM embedder and the model from the settings (default:
``local``, the packaged Qwen2.5-Coder-1.5B-Instruct on a llama.cpp server this process starts and
stops; ``--model`` for another, e.g. ``local:qwen2.5-coder-0.5b`` or ``openai:gpt-4o-mini``). Then
the graph is compared with the case's gold facts:

- ``gold_fact_recall``: gold facts whose two entities are joined by a fact of the graph (either
  direction; an entity matches a gold name, or one of the case's aliases for it, under
  ``name_key``'s folds, or by holding all of its words — "Globex" for "Globex Corporation");
  ``gold_fact_recall_with_participants`` also counts a hyperedge that holds both among its
  participants ("Dr. Morales put Grace Liu on lisinopril" between the doctor and the patient, with
  the medicine as a further participant, joins Grace Liu and lisinopril);
- ``dates_correct``: of the found gold facts whose text fixes the day they became true, those whose
  fact has that ``valid_at`` (±1 day; a gold year or month: the same year or month);
- ``states_correct``: of the found gold facts, those whose graph state after the last episode is the
  gold one, judged on the graph fact of the pair that reads most like the gold one (still true: it
  has no end; ended: it has an ``invalid_at``, even one still to come, or was expired), with
  ``ended_closed`` the same for the ended ones alone, and ``still_true_closed`` the count of found
  gold facts still true at the end whose graph fact was closed (what closing too eagerly costs);
- ``distinct_merged``: pairs of look-alike names the case lists as different things that ended up
  as one entity;
- ``invented_entities``: entities none of whose words the case's episodes contain;
- ``first_person_facts``: fact texts with I/me/my/we/you that do not name the speaker;
- ``episodes_failed``, ``seconds_per_episode``, ``llm_calls_per_episode``, ``input_tokens_per_episode``,
  ``cached_input_tokens_per_episode``, ``output_tokens_per_episode``.

``--split`` picks the dev cases (default), the holdout (written after the pipeline changes; measure
it once), ``holdout-2`` (6 cases written after stage 6b, the facts a message ends; measure it once),
``holdout-3`` (6 cases written after the changes holdout-2 prompted; measure it once), ``holdout-4``
(6 cases written after the changes holdout-3 prompted; measure it once), ``holdout-5`` (6 cases
written after the changes holdout-4 prompted; measure it once), ``holdout-6`` (6 cases written after
the changes holdout-5 prompted; measure it once), ``holdout-7`` (6 cases written after the changes
holdout-6 prompted; measure it once), ``holdout-8`` (6 cases written after the changes holdout-7
prompted; measure it once), ``holdout-9`` (6 cases written after the changes holdout-8 prompted;
measure it once), ``holdout-10`` (6 cases written blind to the rules, during holdout-9's run; measure it
once), ``holdout-11`` (6 cases written blind, before any run on them; measure it once) or all;
``--cases`` some by id; ``--per-domain K`` the first K of each domain; ``--limit`` the first N.
``--report PATH`` writes every case's graph and verdicts as JSON.

    .venv/bin/python bench/extraction.py
    .venv/bin/python bench/extraction.py --model local:qwen2.5-coder-0.5b --split holdout
    .venv/bin/python bench/extraction.py --model llamacpp:qwen --base-url http://127.0.0.1:8080/v1
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from chronomem.config.settings import Settings
from chronomem.domain import Entity, EpisodeStatus, Fact
from chronomem.llm.accounting import usage_scope
from chronomem.llm.settings import LLMSettings
from chronomem.memory import Chronomem
from chronomem.text.names import name_key

GOLD = Path(__file__).parent / "data" / "extraction_gold.json"
_FIRST_PERSON = re.compile(r"\b(I|me|my|mine|we|our|us|you|your)\b", re.IGNORECASE)
_WORD = re.compile(r"\w+")


def _words(name: str) -> set[str]:
    return set(_WORD.findall(name_key(name)))


@dataclass
class Case:
    """One gold case and what the pipeline made of it."""

    data: dict[str, Any]
    entities: list[Entity] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    failed: int = 0
    seconds: float = 0.0
    verdicts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return str(self.data["id"])

    def names_of(self, gold_name: str) -> list[str]:
        return [gold_name, *self.data.get("aliases", {}).get(gold_name, [])]

    def matches(self, entity: Entity, gold_name: str) -> bool:
        """The entity is the gold entity: a name equal under name_key, or one holding all its words."""
        own = (entity.name, *entity.aliases)
        for name in self.names_of(gold_name):
            key = name_key(name)
            if any(name_key(n) == key for n in own):
                return True
            wanted = _words(name)
            if wanted and any(wanted <= _words(n) or (_words(n) and _words(n) <= wanted) for n in own):
                return not self._distinct_from(entity, gold_name)
        return False

    def _distinct_from(self, entity: Entity, gold_name: str) -> bool:
        """A word-overlap match never crosses a pair the case says are different things."""
        for a, b in self.data.get("distinct", []):
            other = b if gold_name == a else a if gold_name == b else None
            if other and any(name_key(n) == name_key(other) for n in (entity.name, *entity.aliases)):
                return True
        return False

    def entity_ids(self, gold_name: str) -> set[str]:
        return {e.id for e in self.entities if self.matches(e, gold_name)}

    def facts_between(self, a: str, b: str) -> list[Fact]:
        left, right = self.entity_ids(a), self.entity_ids(b)
        return [f for f in self.facts if (f.source_id in left and f.target_id in right)
                or (f.source_id in right and f.target_id in left)]

    def facts_joining(self, a: str, b: str) -> list[Fact]:
        """Facts with both among their participants: the two ends or a hyperedge's further ones."""
        left, right = self.entity_ids(a), self.entity_ids(b)
        return [f for f in self.facts if left & set(f.entity_ids) and right & set(f.entity_ids)]


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def _date_right(gold: str, valid_at: datetime | None) -> bool:
    if valid_at is None:
        return False
    if re.fullmatch(r"\d{4}", gold):
        return valid_at.year == int(gold)
    if re.fullmatch(r"\d{4}-\d{2}", gold):
        return (valid_at.year, valid_at.month) == tuple(int(p) for p in gold.split("-"))
    day = datetime.fromisoformat(gold[:10]).replace(tzinfo=UTC)
    return abs(valid_at - day) <= timedelta(days=1, hours=23, minutes=59)  # ±1 day, any hour


def _current(fact: Fact) -> bool:
    """Not known to end: a fact whose end is stated, even a day still to come ("my last day is May
    31"), is an ended one, as the gold marks it."""
    return fact.expired_at is None and fact.invalid_at is None


async def _ingest(memory: Chronomem, case: Case) -> None:
    group = f"case-{case.id}"
    started = time.perf_counter()
    for episode in case.data["episodes"]:
        fields: dict[str, Any] = {"kind": episode.get("kind", "message"),
                                  "reference_time": _time(episode["reference_time"]),
                                  "source_description": episode.get("source_description", "")}
        if episode.get("speaker"):
            fields.update(speaker=episode["speaker"], role=episode.get("role", "user"))
        try:
            result = await memory.add_episode(group, episode["content"], **fields)
            if result.episode.status is EpisodeStatus.FAILED:
                case.failed += 1
        except Exception as error:  # a failed episode is a figure, not the end of the run
            print(f"  {case.id}: episode failed: {type(error).__name__}: {error}", file=sys.stderr)
            case.failed += 1
    case.seconds = time.perf_counter() - started
    case.entities = await memory.store.list_entities(group)
    case.facts = await memory.store.list_facts(group)  # invalidated ones too: their state is judged


def _closest(gold: dict[str, Any], found: list[Fact]) -> list[Fact]:
    """The graph fact of the pair that reads most like the gold one, a right date counting most: one
    pair may carry several gold facts (an old and a new schedule, a founder who is also chair), or
    a state and the event that ended it ("works at Globex", "quit Globex")."""
    def score(fact: Fact) -> float:
        dated = bool(gold.get("valid_at")) and _date_right(gold["valid_at"], fact.valid_at)
        return fuzz.token_set_ratio(gold["fact"], fact.fact) + 100 * dated

    return [max(found, key=score)]


def _judge(case: Case) -> None:
    for gold in case.data["facts"]:
        found = case.facts_between(gold["source"], gold["target"])
        verdict: dict[str, Any] = {"id": gold["id"], "found": bool(found), "facts": [f.fact for f in found],
                                   "joined": bool(case.facts_joining(gold["source"], gold["target"]))}
        if found:
            if gold.get("valid_at"):
                verdict["date_right"] = any(_date_right(gold["valid_at"], f.valid_at) for f in found)
            (closest,) = _closest(gold, found)
            verdict["state_right"] = _current(closest) == bool(gold["still_true"])
        case.verdicts.append(verdict)


def _distinct_merged(case: Case) -> int:
    merged = 0
    for a, b in case.data.get("distinct", []):
        both = [e for e in case.entities
                if {name_key(a), name_key(b)} <= {name_key(n) for n in (e.name, *e.aliases)}]
        merged += bool(both)
    return merged


def _invented(case: Case) -> list[str]:
    text = " ".join(name_key(e["content"] + " " + (e.get("speaker") or "")) for e in case.data["episodes"])
    words = set(_WORD.findall(text))
    return [e.name for e in case.entities if not (_words(e.name) & words)]


def _first_person(case: Case) -> list[str]:
    speakers = {e["speaker"] for e in case.data["episodes"] if e.get("speaker")}
    names = {w for s in speakers for name in case.names_of(s) for w in _words(name)}
    return [f.fact for f in case.facts if _FIRST_PERSON.search(f.fact) and not (_words(f.fact) & names)]


def _share(hits: int, total: int) -> str:
    return f"{hits / total:.3f}" if total else "n/a"


async def run(args: argparse.Namespace) -> dict[str, Any]:
    gold = json.loads(GOLD.read_text())
    cases = [Case(c) for c in gold["cases"] if args.split == "all" or c["split"] == args.split]
    if args.cases:
        wanted = set(args.cases.split(","))
        cases = [c for c in cases if c.id in wanted]
    if args.per_domain:  # the first K cases of each domain: every kind of episode, in a shorter run
        taken: Counter[str] = Counter()
        kept = []
        for case in cases:
            taken[case.data["domain"]] += 1
            if taken[case.data["domain"]] <= args.per_domain:
                kept.append(case)
        cases = kept
    cases = cases[: args.limit] if args.limit else cases
    episodes = sum(len(c.data["episodes"]) for c in cases)
    print(f"{len(cases)} cases, {episodes} episodes, model {args.model}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as data_dir:
        llm = LLMSettings.from_env(model=args.model, timeout_s=900)  # CHRONOMEM_LOCAL_MODEL_THREADS and the like count
        if args.base_url:
            llm = llm.model_copy(update={"base_urls": {args.model.partition(":")[0]: args.base_url}})
        # CHRONOMEM_INGEST_* and the config file count; the data dir and the model are the run's own
        settings = dataclasses.replace(Settings.from_env(), data_dir=Path(data_dir), llm=llm)
        async with await Chronomem.open(settings) as memory:
            with usage_scope() as usage:
                for number, case in enumerate(cases, start=1):
                    await _ingest(memory, case)
                    _judge(case)
                    found = sum(v["found"] for v in case.verdicts)
                    print(f"[{number}/{len(cases)}] {case.id}: {found}/{len(case.verdicts)} found, "
                          f"{case.seconds:.0f} s", file=sys.stderr)
                    if args.show:
                        _show(case)
    verdicts = [v for c in cases for v in c.verdicts]
    found = [v for v in verdicts if v["found"]]
    dated = [v for v in found if "date_right" in v]
    golds = {g["id"]: g for c in cases for g in c.data["facts"]}
    ended = [v for v in found if not golds[v["id"]]["still_true"]]
    figures = {
        "cases": len(cases),
        "gold_facts": len(verdicts),
        "gold_fact_recall": _share(len(found), len(verdicts)),
        "gold_fact_recall_with_participants": _share(sum(v["joined"] for v in verdicts), len(verdicts)),
        "dates_correct": _share(sum(v["date_right"] for v in dated), len(dated)),
        "dated_gold_facts_found": len(dated),
        "states_correct": _share(sum(v["state_right"] for v in found), len(found)),
        "ended_closed": _share(sum(v["state_right"] for v in ended), len(ended)),
        # the precision side of closing: found gold facts still true at the end that the graph closed
        "still_true_closed": sum(not v["state_right"] for v in found if golds[v["id"]]["still_true"]),
        "distinct_merged": sum(_distinct_merged(c) for c in cases),
        "invented_entities": sum(len(_invented(c)) for c in cases),
        "first_person_facts": sum(len(_first_person(c)) for c in cases),
        "episodes_failed": sum(c.failed for c in cases),
        "seconds_per_episode": f"{sum(c.seconds for c in cases) / episodes:.1f}",
        "llm_calls_per_episode": f"{usage.calls / episodes:.2f}",
        "input_tokens_per_episode": round(usage.input_tokens / episodes),
        "cached_input_tokens_per_episode": round(getattr(usage, "cached_input_tokens", 0) / episodes),
        "output_tokens_per_episode": round(usage.output_tokens / episodes),
    }
    if args.report:
        report = [{"id": c.id, "verdicts": c.verdicts, "entities": [e.name for e in c.entities],
                   "facts": [{"fact": f.fact, "valid_at": str(f.valid_at), "invalid_at": str(f.invalid_at),
                              "expired": f.expired_at is not None} for f in c.facts],
                   "invented": _invented(c), "first_person": _first_person(c), "failed": c.failed}
                  for c in cases]
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        Path(args.report).write_text(json.dumps({"figures": figures, "cases": report}, indent=1))
    return figures


def _show(case: Case) -> None:
    """The case's graph facts and its gold facts missed or wrong, on stderr, as the run goes."""
    for fact in case.facts:
        span = f"[{_day(fact.valid_at)} .. {_day(fact.invalid_at)}]{' expired' if fact.expired_at else ''}"
        print(f"    graph: {fact.fact} {span}", file=sys.stderr)
    golds = {g["id"]: g for g in case.data["facts"]}
    for verdict in case.verdicts:
        gold = golds[verdict["id"]]
        wrong = [k for k in ("date_right", "state_right") if k in verdict and not verdict[k]]
        if not verdict["found"] or wrong:
            print(f"    {'missed' if not verdict['found'] else ', '.join(wrong) + ' wrong'}: {gold['fact']}",
                  file=sys.stderr)


def _day(moment: datetime | None) -> str:
    return moment.date().isoformat() if moment else "-"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="local", help="'provider:model' or local[:name] (default: local)")
    parser.add_argument("--base-url", help="the model's server, for a provider:model of your own server")
    splits = ("dev", "holdout", *(f"holdout-{n}" for n in range(2, 12)), "all")
    parser.add_argument("--split", choices=splits, default="dev")
    parser.add_argument("--cases", help="comma-separated case ids")
    parser.add_argument("--limit", type=int, help="only the first N cases")
    parser.add_argument("--per-domain", type=int, help="only the first K cases of each domain")
    parser.add_argument("--report", help="write the per-case graph and verdicts here (JSON)")
    parser.add_argument("--show", action="store_true", help="print each case's graph and misses as it is judged")
    args = parser.parse_args(argv)
    for name, value in asyncio.run(run(args)).items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
