"""Retrieval evaluation on LoCoMo and LongMemEval, LLM-free; prints ``name: value`` lines.

    .venv/bin/python bench/eval_retrieval.py                       # the dev files in ../shared/data
    .venv/bin/python bench/eval_retrieval.py --locomo PATH --longmemeval PATH --limit 2
    .venv/bin/python bench/eval_retrieval.py --folds 0      # the default configs only, no selection

By default the weights are chosen by 5-fold cross-validation and each metric is printed out of fold
(``_oof``: each fold scored with the config chosen on the others) beside in-sample and BM25.

Same arguments as ``chronomem eval``; both call :func:`chronomem.eval.harness.run_eval`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, help="a LoCoMo file (plain or gzipped JSON)")
    parser.add_argument("--longmemeval", type=Path, help="a LongMemEval file (plain or gzipped JSON)")
    parser.add_argument("--limit", type=int, help="first N LoCoMo conversations and N LongMemEval questions")
    parser.add_argument("--store-url", help="keep ingested groups in this store (default: a temporary SQLite file)")
    parser.add_argument("--cache-dir", type=Path, default=Path("bench/out/eval-cache"), help="embedding cache")
    parser.add_argument("--folds", type=int, default=5, help="folds for the out-of-fold figures (0: none)")
    parser.add_argument("--hashing", action="store_true", help="use the hashing test embedder instead of MiniLM")
    parser.add_argument("--embedder", help="embedder spec (build_embedder: 'local', 'local:/dir', …); default MiniLM")
    args = parser.parse_args(argv)
    if args.locomo is None and args.longmemeval is None:
        args.locomo = DATA / "locomo10.json"
        args.longmemeval = DATA / "longmemeval_s_dev.json.gz"
    return args


async def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from chronomem.eval.harness import run_eval

    args = parse_args(argv)
    embedder = None
    if args.hashing or args.embedder:
        from chronomem.embed.factory import build_embedder

        embedder = build_embedder("hashing" if args.hashing else args.embedder, cache=False)  # run_eval caches
    report = await run_eval(
        args.locomo, args.longmemeval, limit=args.limit, store_url=args.store_url, embedder=embedder,
        cache_dir=args.cache_dir, folds=args.folds or None, progress=lambda message: print(message, file=sys.stderr),
    )
    for line in report.lines():
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
