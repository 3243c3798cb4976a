"""LongMemEval dev questions reworded by hand: do the rules and the ranking hold on other wordings?

    .venv/bin/python bench/lme_rewordings.py --store-url sqlite:///$PWD/bench/out/lme.db

``bench/data/lme_rewordings.json`` holds one rewording per knowledge-update, multi-session,
temporal-reasoning and single-session-user question (47; its ``about`` says how they were
written). For the original and the reworded questions this prints ``recall_all@5`` overall and per
type under LongMemEval's config, the same without the report signal, and BM25 (whole sessions), and
lists the reworded questions missed at 5 with the evidence ranks. The rules (decomposition, focus,
time parsing, the report cue) were written from the original wordings; the rewordings were not
looked at while writing them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "longmemeval_s_dev.json.gz"
REWORDINGS = ROOT / "bench" / "data" / "lme_rewordings.json"


async def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from chronomem.datasets.longmemeval import lme_group, load_longmemeval
    from chronomem.eval.bm25 import BM25
    from chronomem.eval.configs import DEPTH, LME_CONFIG
    from chronomem.eval.harness import open_memory, ranked_units
    from chronomem.eval.ingest import indexed_lme, ingest
    from chronomem.eval.metrics import recall_all
    from chronomem.eval.misses import evidence_ranks

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--longmemeval", type=Path, default=DATA)
    parser.add_argument("--rewordings", type=Path, default=REWORDINGS)
    parser.add_argument("--store-url", help="keep ingested groups in this store (default: a temporary SQLite file)")
    parser.add_argument("--cache-dir", type=Path, default=Path("bench/out/eval-cache"), help="embedding cache")
    args = parser.parse_args(argv)
    rewordings: dict[str, str] = json.loads(args.rewordings.read_text())["rewordings"]
    configs = {"lme": LME_CONFIG, "lme_no_reports": LME_CONFIG.model_copy(update={"report_boost": 0.0})}
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))  # name -> type -> values
    misses = []
    questions = [q for q in load_longmemeval(args.longmemeval) if q.question_id in rewordings]
    async with open_memory(store_url=args.store_url, cache_dir=args.cache_dir) as memory:
        for q in questions:
            group = lme_group(q)
            await ingest(memory.store, memory.embedder, group, indexed_lme(q))
            session_ids = [s.session_id for s in q.sessions]
            bm25 = BM25([s.user_text for s in q.sessions])
            for wording, text in (("original", q.question), ("reworded", rewordings[q.question_id])):
                for name, config in configs.items():
                    ranked = await ranked_units(memory, group, text, q.question_date, config)
                    scores[f"{wording}_{name}"][q.question_type].append(recall_all(ranked, q.answer_session_ids, 5))
                    if wording == "reworded" and name == "lme" and not recall_all(ranked, q.answer_session_ids, 5):
                        ranks = sorted(r or DEPTH + 1 for r in evidence_ranks(ranked, q.answer_session_ids).values())
                        misses.append(f"{q.question_type} {q.question_id} {ranks} {text}")
                baseline = [session_ids[i] for i in bm25.rank(text, DEPTH)]
                scores[f"{wording}_bm25"][q.question_type].append(recall_all(baseline, q.answer_session_ids, 5))
    print(f"rewordings: {len(questions)}")
    for name, by_type in scores.items():
        print(f"{name}_recall_all_at_5: {statistics.fmean(v for values in by_type.values() for v in values):.4f}")
        for qtype, values in sorted(by_type.items()):
            print(f"{name}_recall_all_at_5_{qtype.replace('-', '_')}: {statistics.fmean(values):.4f}")
    for miss in misses:
        print(f"# reworded miss: {miss}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
