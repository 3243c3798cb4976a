"""Evaluation on LoCoMo and LongMemEval: LLM-free retrieval (``run_eval``; see ``harness``) and
end-to-end question answering with a model (``run_qa``; see ``qa``)."""

from chronomem.eval.configs import CANDIDATES, EVAL_CONFIG, LME_CONFIG
from chronomem.eval.harness import EvalReport, run_eval
from chronomem.eval.qa import QaOptions, run_qa

__all__ = ["CANDIDATES", "EVAL_CONFIG", "LME_CONFIG", "EvalReport", "QaOptions", "run_eval", "run_qa"]
