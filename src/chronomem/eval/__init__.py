"""LLM-free retrieval evaluation on LoCoMo and LongMemEval (``run_eval``; see ``harness``)."""

from chronomem.eval.configs import CANDIDATES, EVAL_CONFIG, LME_CONFIG
from chronomem.eval.harness import EvalReport, run_eval

__all__ = ["CANDIDATES", "EVAL_CONFIG", "LME_CONFIG", "EvalReport", "run_eval"]
