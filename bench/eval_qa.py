"""End-to-end question answering on LoCoMo and LongMemEval: answers from chronomem's context block
against answers from the full conversation, graded by the benchmarks' rules; prints ``name: value``.

    .venv/bin/python bench/eval_qa.py --model local --real-sample       # the small real-model sample
    .venv/bin/python bench/eval_qa.py --model local --sample 50 --seed 1 --types temporal_reasoning
    CHRONOMEM_LLM_MODEL=openai:gpt-4o-mini .venv/bin/python bench/eval_qa.py --sample 200   # a hosted model
    .venv/bin/python bench/eval_qa.py --model lexical --limit 5 --hashing    # offline plumbing check, no model

``--real-sample`` is the run the docs report for a small local model: 16 questions of the two
shortest LoCoMo conversations and 10 LongMemEval questions in the oracle setting (each haystack cut
to its evidence sessions) whose whole conversation is at most 6,000 tokens (estimated at four
characters a token: a margin for the model's own tokenizer), drawn with seed 1, in the local
model's 8,192-token window. The LoCoMo conversations do not fit that window: their full-context
baseline is skipped and the report says so (``qa_full_context_skipped``). Answers
and verdicts are cached under ``--cache-dir``: a re-run prints the same figures at no model cost.
Same arguments as ``chronomem eval --qa``; both call :func:`chronomem.eval.qa.run_qa`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
LOCAL_WINDOW = 8192  # the packaged local model's server runs with this context (ServerOptions.context_tokens)
# the two shortest LoCoMo conversations (conv-30 and conv-26, 13.0k and 17.9k tokens as the baseline
# writes them: past the local window, so their full-context baseline is reported as skipped) and
# LongMemEval oracle haystacks that fit the window
REAL_SAMPLE = {"locomo": 16, "lme": 10, "seed": 1, "locomo_max_tokens": 18_000, "lme_max_tokens": 6_000}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, help="a LoCoMo file (plain or gzipped JSON)")
    parser.add_argument("--longmemeval", type=Path, help="a LongMemEval file (plain or gzipped JSON)")
    parser.add_argument(
        "--model", help="'local[:name]', 'lexical' (not a model), or provider:model (default: settings)"
    )
    parser.add_argument("--judge-model", help="the judge (default: the reader model)")
    parser.add_argument("--ingest-model", help="extract the conversations into a graph first ('heuristic', 'local', …)")
    parser.add_argument("--types", help="comma-separated question types or LoCoMo categories")
    parser.add_argument("--limit", type=int, help="the first N selected questions")
    parser.add_argument("--sample", type=int, help="N questions drawn at random (with --seed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-conversation-tokens", type=int, help="only conversations at most this long")
    parser.add_argument("--lme-oracle", action="store_true", help="LongMemEval haystacks: evidence sessions only")
    parser.add_argument("--recipe", help="a search recipe for the context block (default: the benchmark's config)")
    parser.add_argument("--template", help="a context template's text, or a file holding it")
    parser.add_argument("--token-budget", type=int, default=2000)
    parser.add_argument("--no-full-context", action="store_true", help="skip the full-context baseline")
    parser.add_argument(
        "--context-window",
        type=int,
        help="the reader's window in tokens (default: 8192 for the local model, else 128000)",
    )
    parser.add_argument("--price-in", type=float, help="USD per million input tokens")
    parser.add_argument("--price-out", type=float, help="USD per million output tokens")
    parser.add_argument("--concurrency", type=int, default=1, help="questions answered at once")
    parser.add_argument("--store-url", help="keep ingested conversations in this store (default: temporary)")
    parser.add_argument("--cache-dir", type=Path, default=Path("bench/out/eval-cache"), help="vectors and answers")
    parser.add_argument("--hashing", action="store_true", help="the hashing test embedder instead of MiniLM")
    parser.add_argument("--real-sample", action="store_true", help="the documented small real-model sample")
    args = parser.parse_args(argv)
    if args.locomo is None and args.longmemeval is None:
        args.locomo = DATA / "locomo10.json"
        args.longmemeval = DATA / "longmemeval_s_dev.json.gz"
    return args


async def _run(args: argparse.Namespace, reader, judge, ingest_model, options, embedder):
    from chronomem.eval.qa import progress_bars, run_qa

    with progress_bars() as progress:
        return await run_qa(
            reader,
            args.locomo,
            args.longmemeval,
            options=options,
            judge=judge,
            ingest_model=ingest_model,
            store_url=args.store_url,
            embedder=embedder,
            cache_dir=args.cache_dir,
            progress=progress,
        )


def _options(args: argparse.Namespace, local: bool):  # -> QaOptions
    from chronomem.eval.qa import QaOptions

    template = args.template
    if template is not None and Path(template).is_file():
        template = Path(template).read_text()
    prices = (args.price_in or 0.0, args.price_out or 0.0) if args.price_in or args.price_out else None
    return QaOptions(
        types=frozenset(t for t in (args.types or "").split(",") if t.strip()),
        limit=args.limit,
        sample=args.sample,
        seed=args.seed,
        max_conversation_tokens=args.max_conversation_tokens,
        lme_oracle=args.lme_oracle,
        token_budget=args.token_budget,
        recipe=args.recipe,
        template=template,
        full_context=not args.no_full_context,
        context_window=args.context_window or (LOCAL_WINDOW if local else 128_000),
        prices=prices,
        concurrency=args.concurrency,
    )


async def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from chronomem.eval.qa_models import build_qa_model
    from chronomem.llm.closing import aclose_model

    args = parse_args(argv)
    local = bool(args.model) and (args.model == "local" or args.model.startswith("local:"))
    reader = build_qa_model(args.model)
    if reader is None:
        print("qa_skipped: no model (pass --model, e.g. --model local or --model lexical, or set CHRONOMEM_LLM_MODEL)")
        return 0
    judge = build_qa_model(args.judge_model) if args.judge_model else None
    ingest_model = build_qa_model(args.ingest_model) if args.ingest_model else None
    embedder = None
    if args.hashing:
        from chronomem.embed.factory import build_embedder

        embedder = build_embedder("hashing", cache=False)
    options = _options(args, local)
    try:
        if args.real_sample:
            lines = await _real_sample(args, reader, judge, ingest_model, options, embedder)
        else:
            lines = list((await _run(args, reader, judge, ingest_model, options, embedder)).lines())
    finally:
        for model in {id(m): m for m in (reader, judge, ingest_model) if m is not None}.values():
            await aclose_model(model)
    for line in lines:
        print(line)
    return 0


async def _real_sample(args, reader, judge, ingest_model, options, embedder) -> list[str]:
    """The documented sample, as two runs (each benchmark's figures under its own prefix)."""
    from dataclasses import replace

    lines = []
    locomo = replace(
        options,
        sample=REAL_SAMPLE["locomo"],
        seed=REAL_SAMPLE["seed"],
        max_conversation_tokens=REAL_SAMPLE["locomo_max_tokens"],
    )
    report = await _run(
        argparse.Namespace(**{**vars(args), "longmemeval": None}), reader, judge, ingest_model, locomo, embedder
    )
    lines += [f"locomo_sample_{line}" for line in report.lines()]
    lme = replace(
        options,
        sample=REAL_SAMPLE["lme"],
        seed=REAL_SAMPLE["seed"],
        lme_oracle=True,
        max_conversation_tokens=REAL_SAMPLE["lme_max_tokens"],
    )
    report = await _run(
        argparse.Namespace(**{**vars(args), "locomo": None}), reader, judge, ingest_model, lme, embedder
    )
    lines += [f"lme_oracle_sample_{line}" for line in report.lines()]
    return lines


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
