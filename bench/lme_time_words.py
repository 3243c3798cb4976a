"""Robustness to time words that are not about the evidence, on LongMemEval's single-session questions.

    .venv/bin/python bench/lme_time_words.py --store-url sqlite:///$PWD/bench/out/lme.db

A question asked from one session ("What breed is my dog?") may carry a time expression that dates
the event from the session's point of view, or that is plain noise, rather than from the question's
date. The time signal then lifts whatever is dated in the window it reads. This bench appends each
of five time expressions to every single-session question of the dev file (user, assistant and
preference; 18 questions × 5 = 90 variants) and prints, for the LongMemEval config, the same config
without the time signal, and BM25 (whole sessions, on the same altered question): how many variants
keep their evidence session first (``*_at_1``), in the top 5 (``*_at_5``), and its mean rank —
separately for the variants whose window misses the evidence session (``outside_*``: the time
words are not about it) and those whose window holds it (``inside_*``; LongMemEval's
single-session evidence is often a few days before the question). It is a stress test built to
show one failure mode, not a sample of real questions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "longmemeval_s_dev.json.gz"
TIME_WORDS = (" last week", " last month", " two weeks ago", " in the past three months", " last summer")


async def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from chronomem.datasets.longmemeval import lme_group, load_longmemeval
    from chronomem.eval.bm25 import BM25
    from chronomem.eval.configs import DEPTH, LME_CONFIG
    from chronomem.eval.harness import open_memory, ranked_units
    from chronomem.eval.ingest import indexed_lme, ingest
    from chronomem.eval.metrics import distinct
    from chronomem.search.config import TimeMode
    from chronomem.text.timeparse import parse_time

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--longmemeval", type=Path, default=DATA)
    parser.add_argument("--store-url", help="keep ingested groups in this store (default: a temporary SQLite file)")
    parser.add_argument("--cache-dir", type=Path, default=Path("bench/out/eval-cache"), help="embedding cache")
    args = parser.parse_args(argv)
    configs = {"lme": LME_CONFIG, "lme_time_off": LME_CONFIG.model_copy(update={"time_mode": TimeMode.OFF})}
    ranks: dict[str, list[int]] = {f"{where}_{name}": [] for where in ("outside", "inside")
                                   for name in [*configs, "bm25"]}
    questions = [
        q for q in load_longmemeval(args.longmemeval)
        if q.question_type.startswith("single-session") and not q.is_abstention
    ]
    async with open_memory(store_url=args.store_url, cache_dir=args.cache_dir) as memory:
        for q in questions:
            group = lme_group(q)
            await ingest(memory.store, memory.embedder, group, indexed_lme(q))
            [gold] = q.answer_session_ids
            session_ids = [s.session_id for s in q.sessions]
            bm25 = BM25([s.user_text for s in q.sessions])
            for words in TIME_WORDS:
                question = q.question.rstrip("?. ") + words + "?"
                evidence_date = q.sessions[session_ids.index(gold)].date
                where = "inside" if parse_time(question, q.question_date).contains(evidence_date) else "outside"
                for name, config in configs.items():
                    units = distinct(await ranked_units(memory, group, question, q.question_date, config))
                    ranks[f"{where}_{name}"].append(units.index(gold) + 1 if gold in units else DEPTH + 1)
                baseline = [session_ids[i] for i in bm25.rank(question, DEPTH)]
                ranks[f"{where}_bm25"].append(baseline.index(gold) + 1 if gold in baseline else DEPTH + 1)
    print(f"time_words_variants_outside: {len(ranks['outside_bm25'])}")
    print(f"time_words_variants_inside: {len(ranks['inside_bm25'])}")
    for name, found in ranks.items():
        print(f"{name}_at_1: {sum(r == 1 for r in found)}")
        print(f"{name}_at_5: {sum(r <= 5 for r in found)}")
        print(f"{name}_mean_rank: {statistics.fmean(found):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
