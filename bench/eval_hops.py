"""LoCoMo recall with and without each multi-hop mechanism, per category; prints ``name: value`` lines.

    .venv/bin/python bench/eval_hops.py                 # locomo10, every variant, in-sample
    .venv/bin/python bench/eval_hops.py --limit 3       # the first three conversations
    .venv/bin/python bench/eval_hops.py --only 0,1 --save a.pkl; … --merge a.pkl b.pkl   # split over processes

Each variant is LoCoMo's config (:data:`chronomem.eval.configs.EVAL_CONFIG`) with none, one or all
of the multi-hop mechanisms (:data:`chronomem.eval.configs.MULTIHOP`: the hop, the list coverage,
the word forms, asking last, the unnamed speakers' offset, the speaker-perspective query; see
:func:`variants`), scored on the same questions in the same pass, so the differences are the
mechanisms' alone; those figures are in-sample. With ``--folds K`` (default 5) the config with all
mechanisms chooses its speaker offset (:data:`OFFSETS`), its perspective weight
(:data:`PERSPECTIVES`) and its weights (RRF constant × BM25 weight, :data:`GRID`) by conversation-level
K-fold cross-validation, and prints ``with.*_oof`` figures: each fold scored with the choice made on
the others.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pickle
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def variants() -> dict[str, dict[str, object]]:
    """Each variant: the multi-hop settings laid over the config without them."""
    from chronomem.eval.configs import MULTIHOP

    off = {"hop_boost": 0.0, "list_coverage_boost": 0.0, "word_forms": False, "asking_last": False,
           "unnamed_speaker_offset": 0, "perspective_weight": 0.0}
    earlier = {"hop_boost": MULTIHOP["hop_boost"], "list_coverage_boost": MULTIHOP["list_coverage_boost"],
               "word_forms": True}  # the three mechanisms of the round before
    return {
        "without": off,
        "asking": {**off, "asking_last": True},
        "speaker": {**off, "unnamed_speaker_offset": MULTIHOP["unnamed_speaker_offset"]},
        "perspective": {**off, "perspective_weight": MULTIHOP["perspective_weight"]},
        "earlier": {**off, **earlier},
        "with": dict(MULTIHOP),
        # the speaker offset's other values, to choose it out of fold (OFFSETS; 0: all but the offset)
        **{f"with@offset={o}": {**MULTIHOP, "unnamed_speaker_offset": o} for o in OFFSETS},
        # the perspective weight's other values (0: all but the perspective query), and the
        # perspective query kept to the named speaker's own messages
        **{f"with@perspective={w:g}": {**MULTIHOP, "perspective_weight": w} for w in PERSPECTIVES},
        "with@perspective_own_turns": {**MULTIHOP, "perspective_own_turns": True},
        # the list coverage dealing only the named speaker's turns
        "with@list_own_turns": {**MULTIHOP, "list_coverage_own_turns": True},
    }


OFFSETS = (0, 3, 10)  # beside MULTIHOP's 6 (chosen out of fold, every fold, 2026-12-01)
PERSPECTIVES = (0.0, 1.0, 2.0, 4.0)  # beside MULTIHOP's 3 (chosen out of fold among 0–3 in four folds of five)


# the weights each family chooses among, out of fold (a small grid: every candidate is a pass)
GRID = [(k, w) for k in (20.0, 60.0) for w in (0.5, 1.0)]
FAMILIES = ("with",)  # the config without the mechanisms chose the default weights in every fold last round


def configs() -> dict[str, object]:
    from chronomem.eval.configs import EVAL_CONFIG, candidate

    made: dict[str, object] = {}
    for name, update in variants().items():
        made[name] = EVAL_CONFIG.model_copy(update=update)
        if name in FAMILIES:
            for k, w in GRID:
                base = EVAL_CONFIG.model_copy(update=update)
                made[f"{name}@rrf_k={k:g},bm25={w:g}"] = candidate(k, w, base=base)  # type: ignore[arg-type]
    return made


def _list_rule_figures(samples: list) -> None:  # type: ignore[type-arg]
    """How often the list-question rule fires, and on questions that do need several turns."""
    from chronomem.search.lists import is_list_question

    questions = [q for s in samples for q in s.questions if q.category in (1, 2, 3, 4) and q.evidence]
    fired = [q for q in questions if is_list_question(q.question)]
    several = [q for q in questions if len(q.evidence) > 1]
    right = [q for q in fired if len(q.evidence) > 1]
    print(f"list_rule_fired: {len(fired)}")
    print(f"list_rule_several_evidence: {len(several)}")
    print(f"list_rule_precision: {len(right) / max(len(fired), 1):.3f}")
    print(f"list_rule_recall: {len(right) / max(len(several), 1):.3f}")
    for category in (1, 2, 3, 4):
        print(f"list_rule_fired_category_{category}: {sum(q.category == category for q in fired)}")


def _asking_rule_figures(samples: list) -> None:  # type: ignore[type-arg]
    """How many turns the asking rule flags, and how many evidence turns among them."""
    from chronomem.eval.ingest import indexed_locomo
    from chronomem.search.asking import only_asks

    flagged = {(s.sample_id, e.episode.metadata["unit"]) for s in samples for e in indexed_locomo(s)
               if "unit" in e.episode.metadata and only_asks(e.episode.content)}
    turns = sum(len(s.turns) for s in samples)
    slots = [(s.sample_id, d) for s in samples for q in s.questions if q.category in (1, 2, 3, 4) for d in q.evidence]
    print(f"asking_rule_turns_flagged: {len(flagged)} of {turns}")
    print(f"asking_rule_evidence_flagged: {sum(slot in flagged for slot in slots)} of {len(slots)}")


def _perspective_rule_figures(samples: list) -> None:  # type: ignore[type-arg]
    """How often the perspective rewrite fires, and how much of the evidence the named speaker says."""
    from chronomem.search.perspective import perspective_query

    fired, evidence, spoken = {1: 0, 2: 0, 3: 0, 4: 0}, 0, 0
    for s in samples:
        speaker_of = {t.dia_id: t.speaker for t in s.turns}
        for q in s.questions:
            if q.category not in fired or not q.evidence:
                continue
            voiced = perspective_query(q.question, set(speaker_of.values()))
            if voiced is None:
                continue
            fired[q.category] += 1
            evidence += len(q.evidence)
            spoken += sum(speaker_of.get(d) == voiced.speaker for d in q.evidence)
    for category, count in fired.items():
        print(f"perspective_rule_fired_category_{category}: {count}")
    print(f"perspective_rule_evidence_by_named_speaker: {spoken} of {evidence}")


def report(scored: list, samples: list, folds: int) -> None:  # type: ignore[type-arg]
    """Print every figure from the per-question scores of every config."""
    from chronomem.eval.folds import cross_validate
    from chronomem.eval.harness import _locomo_metrics

    print(f"locomo_questions: {len(scored)}")
    _list_rule_figures(samples)
    _asking_rule_figures(samples)
    _perspective_rule_figures(samples)
    for name in variants():
        for metric, value in _locomo_metrics([(q.kind, q.by_candidate[name]) for q in scored], "").items():
            print(f"{name}.{metric}: {value:.2f}")
    if folds:
        # every tuned weight chosen out of fold at once: the speaker offset and the grid
        for family in FAMILIES:
            names = [family, *(f"{family}@offset={o}" for o in OFFSETS),
                     *(f"{family}@perspective={p:g}" for p in PERSPECTIVES),
                     *(f"{family}@rrf_k={k:g},bm25={w:g}" for k, w in GRID)]
            held_out, choices = cross_validate(scored, names, "recall_at_10", folds)
            rows = [(q.kind, q.by_candidate[chosen]) for q, chosen in held_out]
            for metric, value in _locomo_metrics(rows, "_oof").items():
                print(f"{family}.{metric}: {value:.2f}")
            for choice in choices:
                print(f"{family}.fold_{choice.fold + 1}_config: {choice.candidate}")
    for metric, value in _locomo_metrics([(q.kind, q.bm25) for q in scored], "").items():
        print(f"bm25.{metric}: {value:.2f}")


async def score(samples: list, cache_dir: Path) -> list:  # type: ignore[type-arg]
    """Every config's per-question scores on ``samples`` (a temporary store, cached vectors)."""
    from chronomem.config.settings import Settings
    from chronomem.embed.cache import CachedEmbedder
    from chronomem.embed.local import LocalEmbedder
    from chronomem.eval.harness import _eval_locomo, _safe
    from chronomem.memory import Chronomem

    inner = LocalEmbedder()
    cache_dir.mkdir(parents=True, exist_ok=True)
    embedder = CachedEmbedder(inner, path=cache_dir / f"vectors-{_safe(inner.model_name)}.db", max_entries=500_000)
    with tempfile.TemporaryDirectory(prefix="chronomem-hops-") as scratch:
        settings = Settings(store_url=f"sqlite:///{Path(scratch) / 'eval.db'}")
        async with await Chronomem.open(settings, embedder=embedder) as memory:
            return await _eval_locomo(samples, memory, configs(), lambda m: print(m, file=sys.stderr))  # type: ignore[arg-type]


async def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, default=DATA / "locomo10.json")
    parser.add_argument("--limit", type=int, help="first N conversations")
    parser.add_argument("--folds", type=int, default=5, help="folds for the out-of-fold figures (0: none)")
    parser.add_argument("--cache-dir", type=Path, default=Path("bench/out/eval-cache"), help="embedding cache")
    parser.add_argument("--only", help="score only these conversations (0-based, comma-separated) and --save them")
    parser.add_argument("--save", type=Path, help="write the per-question scores here instead of reporting")
    parser.add_argument("--merge", type=Path, nargs="+", help="report from scores saved by --save runs")
    args = parser.parse_args(argv)

    from chronomem.datasets.locomo import load_locomo

    samples = load_locomo(args.locomo)[: args.limit]
    if args.merge:  # the parts of one run split over processes
        scored = [q for part in args.merge for q in pickle.loads(part.read_bytes())]
    else:
        wanted = samples if args.only is None else [samples[int(i)] for i in args.only.split(",")]
        scored = await score(wanted, args.cache_dir)
        if args.save:
            args.save.write_bytes(pickle.dumps(scored))
            return 0
    report(scored, samples, args.folds)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
