"""LLM-free retrieval evaluation on LoCoMo and LongMemEval (``run_eval``; see ``harness``)."""

from chronomem.eval.harness import EVAL_CONFIG, LME_CONFIG, EvalReport, run_eval

__all__ = ["EVAL_CONFIG", "LME_CONFIG", "EvalReport", "run_eval"]
