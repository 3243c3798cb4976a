"""A lexical stand-in for the reader and the judge — NOT a language model — so the question-answering
harness runs end to end offline (``--model lexical``): in tests, in ``make bench``, on a machine
without a model.

- reader: the line of the context (a fact, an entity, a message) that shares the most words with
  the question, without its date prefix; "No information available" when none shares a word;
- judges: correct when the response holds the gold answer in one of its written forms
  (:func:`~chronomem.eval.answers.answer_in_context`); for abstention questions, when the response
  says the information is not available.

Its accuracy measures retrieval plus word overlap, nothing a model would add; it is a plumbing
check and a floor, never a result to report as a model's.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from chronomem.eval.answers import answer_in_context
from chronomem.eval.bm25 import tokenize
from chronomem.eval.qa_prompts import JudgeContext, ReaderAnswer, ReaderContext, Verdict
from chronomem.llm.base import Prompt
from chronomem.llm.testing import FunctionModel

__all__ = ["LEXICAL", "lexical_answer", "lexical_model"]

LEXICAL = "lexical"
_DATE_PREFIX = re.compile(r"^-?\s*\(\d{4}-\d{2}-\d{2}[^)]*\)\s*")
_UNAVAILABLE = ("no information available", "not available", "not mentioned", "no information")
_COMMON = frozenset([
    "a", "an", "the", "is", "are", "was", "were", "do", "does", "did", "what", "when", "where", "who", "how",
    "which", "of", "to", "in", "on", "i", "my", "me", "you",
])  # fmt: skip


def _best_line(question: str, context: str) -> str:
    wanted = set(tokenize(question)) - _COMMON
    best, best_score = "", 0
    for line in context.splitlines():
        score = len(wanted & set(tokenize(line)))
        if score > best_score:
            best, best_score = line, score
    return _DATE_PREFIX.sub("", best.strip()).lstrip("- ").strip()[:300]


def lexical_answer(prompt: Prompt[Any, Any], context: Any) -> BaseModel:
    """The FunctionModel callback (see the module docstring)."""
    if isinstance(context, ReaderContext):
        return ReaderAnswer(answer=_best_line(context.question, context.context) or "No information available")
    if isinstance(context, JudgeContext):
        if context.rule == "abstention":
            return Verdict(correct=any(p in context.response.casefold() for p in _UNAVAILABLE))
        return Verdict(correct=answer_in_context(context.gold, context.response))
    raise ValueError(f"the lexical stand-in answers only the QA prompts, not {prompt.name!r}")


def lexical_model() -> FunctionModel:
    return FunctionModel(lexical_answer, model_name=LEXICAL, writes_prose=False)
