"""The report signal (chronomem.search.reports) on LongMemEval, with and without, out of fold.

    .venv/bin/python bench/eval_reports.py --store-url sqlite:///$PWD/bench/out/lme.db

Prints ``without_*`` (LongMemEval's config with ``report_boost`` 0, no folds), then ``with_*``:
the shipped config (``report_boost`` 2) with 5-fold selection among ``report_boost`` 0, 1, 2 and 3
— each fold's weight chosen on the other four, so ``with_*_oof`` is what the weight chosen
elsewhere scores, and ``with_lme_fold_N_config`` says which weight each fold took. Per question
type, BM25 beside each.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "longmemeval_s_dev.json.gz"
WEIGHTS = (0.0, 1.0, 2.0, 3.0)


async def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from chronomem.eval.configs import LME_CONFIG
    from chronomem.eval.harness import run_eval

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--longmemeval", type=Path, default=DATA)
    parser.add_argument("--store-url", help="keep ingested groups in this store (default: a temporary SQLite file)")
    parser.add_argument("--cache-dir", type=Path, default=Path("bench/out/eval-cache"), help="embedding cache")
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    without = LME_CONFIG.model_copy(update={"report_boost": 0.0})
    candidates = {f"report_boost={w:g}": LME_CONFIG.model_copy(update={"report_boost": w}) for w in WEIGHTS}
    runs = {
        "without": await run_eval(longmemeval=args.longmemeval, store_url=args.store_url, cache_dir=args.cache_dir,
                                  config=without, progress=log),
        "with": await run_eval(longmemeval=args.longmemeval, store_url=args.store_url, cache_dir=args.cache_dir,
                               config=LME_CONFIG, folds=args.folds, candidates=candidates, progress=log),
    }
    for name, report in runs.items():
        for line in report.lines():
            if "recall_all_at_5" in line or "config" in line:
                print(f"{name}_{line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
