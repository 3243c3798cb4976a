"""Questions whose answer is a list gathered over many conversations, found by rules.

"What activities does Melanie partake in?", "Where has Melanie camped?", "What books has Melanie
read?": the answer is pottery in one session, camping in another, swimming in a third. The
conversation signal (lift the turns around the strongest hit) is right for most questions and
wrong for these — it fills the top of the ranking with one session. For a list question the
searcher adds the coverage signal instead (each conversation's best candidate, then each one's
second best, see :func:`chronomem.search.signals.across_conversations`) at
``SearchConfig.list_coverage_boost``.

Two rules, either suffices:

- a question that asks what/where/which/who … *has/have* … ("What has Melanie painted?",
  "Which city have both Jean and John visited?") — the perfect tense sums up over time; "have to"
  and "have got" are not it;
- a question naming a plural of things or a quantifier ("some", "all", "both", "activities",
  "events", "books", "ways", "kinds", …).

Measured on locomo10 (categories 1–4, 1,536 questions; bench/eval_hops.py prints it as
``list_rule_*``): the rules fire on 217 questions, 148 of which have more than one evidence turn
(precision 0.68), and find 148 of the 413 questions with several evidence turns (recall 0.36);
among them 134 of the 282 multi-hop questions and 67 of the 841 single-hop ones.
"""

from __future__ import annotations

import re

__all__ = ["is_list_question"]

_PERFECT = re.compile(r"^\s*(?:what|where|which|who|in what)\b.*\b(?:has|have)\b(?!\s+(?:to|got)\b)", re.I)
_PLURAL = re.compile(
    r"\b(?:some|all|both|ways|things|activities|events|places|items|books|types|kinds|hobbies|pets|"
    r"names|instruments|artists|symbols|changes)\b",
    re.I,
)


def is_list_question(question: str) -> bool:
    """Does the question ask for a list gathered over time (see the module docstring's rules)?"""
    return bool(_PERFECT.search(question) or _PLURAL.search(question))
