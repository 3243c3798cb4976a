"""LoCoMo recall with and without each multi-hop mechanism, per category; prints ``name: value`` lines.

    .venv/bin/python bench/eval_hops.py                 # locomo10, every variant, in-sample
    .venv/bin/python bench/eval_hops.py --limit 3       # the first three conversations

Each variant is :data:`chronomem.eval.EVAL_CONFIG` with one mechanism changed (see
:data:`VARIANTS`), scored on the same questions in the same pass, so the differences are the
mechanisms' alone. These are in-sample figures (every variant scored on the questions it is shown
on); the out-of-fold ones come from ``bench/eval_retrieval.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def variants() -> dict[str, object]:
    from chronomem.eval.configs import EVAL_CONFIG

    base = EVAL_CONFIG.model_copy(update={"hop_boost": 0.0, "list_coverage_boost": 0.0})
    return {
        "without": base,
        "hop_0.25": base.model_copy(update={"hop_boost": 0.25}),
        "list_1": base.model_copy(update={"list_coverage_boost": 1.0, "list_conversation_boost": 1.5}),
        "list_1_conv_0.5": base.model_copy(update={"list_coverage_boost": 1.0, "list_conversation_boost": 0.5}),
        "list_1_conv_0": base.model_copy(update={"list_coverage_boost": 1.0, "list_conversation_boost": 0.0}),
        "list_2_conv_0": base.model_copy(update={"list_coverage_boost": 2.0, "list_conversation_boost": 0.0}),
        "shipped": EVAL_CONFIG,
    }


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


async def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, default=DATA / "locomo10.json")
    parser.add_argument("--limit", type=int, help="first N conversations")
    parser.add_argument("--cache-dir", type=Path, default=Path("bench/out/eval-cache"), help="embedding cache")
    args = parser.parse_args(argv)

    from chronomem.embed.cache import CachedEmbedder
    from chronomem.embed.local import LocalEmbedder
    from chronomem.eval.harness import _eval_locomo, _locomo_metrics, _safe
    from chronomem.eval.locomo import load_locomo
    from chronomem.memory import Chronomem
    from chronomem.settings import Settings

    configs = variants()
    inner = LocalEmbedder()
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    embedder = CachedEmbedder(inner, path=args.cache_dir / f"vectors-{_safe(inner.model_name)}.db",
                              max_entries=500_000)
    with tempfile.TemporaryDirectory(prefix="chronomem-hops-") as scratch:
        settings = Settings(store_url=f"sqlite:///{Path(scratch) / 'eval.db'}")
        async with await Chronomem.open(settings, embedder=embedder) as memory:
            samples = load_locomo(args.locomo)[: args.limit]
            scored = await _eval_locomo(samples, memory, configs, lambda m: print(m, file=sys.stderr))
    print(f"locomo_questions: {len(scored)}")
    _list_rule_figures(samples)
    for name in configs:
        for metric, value in _locomo_metrics([(q.kind, q.by_candidate[name]) for q in scored], "").items():
            print(f"{name}.{metric}: {value:.2f}")
    for metric, value in _locomo_metrics([(q.kind, q.bm25) for q in scored], "").items():
        print(f"bm25.{metric}: {value:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
