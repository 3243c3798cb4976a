"""Where each LongMemEval question's evidence sessions ranked (chronomem and BM25); misses first.

    .venv/bin/python bench/lme_misses.py                    # the dev file, the LongMemEval config
    .venv/bin/python bench/lme_misses.py --types temporal-reasoning multi-session --all
    .venv/bin/python bench/lme_misses.py --store-url sqlite:///bench/out/lme.db   # reuse an ingest

One line per question: ``type id ours=[ranks] bm25=[ranks] question | events``, a rank being the
evidence session's place among distinct sessions ("-": not in the top 50). Then ``name: value``
counts of the questions missed at k.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _ranks(ranks: dict[str, int | None]) -> str:
    return "[" + ",".join("-" if r is None else str(r) for r in sorted(ranks.values(), key=lambda r: r or 99)) + "]"


async def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from chronomem.eval.misses import lme_evidence_ranks

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--longmemeval", type=Path, default=DATA / "longmemeval_s_dev.json.gz")
    parser.add_argument("--types", nargs="*", default=(), help="question types to show (default: all)")
    parser.add_argument("--all", action="store_true", help="every question, not only the misses")
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--store-url", help="keep ingested groups in this store (default: a temporary SQLite file)")
    parser.add_argument("--cache-dir", type=Path, default=Path("bench/out/eval-cache"), help="embedding cache")
    args = parser.parse_args(argv)
    rows = await lme_evidence_ranks(
        args.longmemeval, question_types=args.types, store_url=args.store_url, cache_dir=args.cache_dir
    )
    for row in sorted(rows, key=lambda r: (not r.missed(args.k), r.question_type, r.question_id)):
        if args.all or row.missed(args.k):
            events = " | ".join(row.events)
            print(f"{row.question_type} {row.question_id} ours={_ranks(row.ours)} bm25={_ranks(row.bm25)} "
                  f"{row.question}" + (f" || events: {events}" if events else ""))
    bm25_missed = sum(any(r is None or r > args.k for r in row.bm25.values()) for row in rows)
    print(f"questions: {len(rows)}")
    print(f"missed_at_{args.k}: {sum(row.missed(args.k) for row in rows)}")
    print(f"missed_at_{args.k}_bm25: {bm25_missed}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
