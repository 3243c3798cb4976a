"""The question-answering evaluation's prompts: the reader that answers from a context, and the
judges that grade its answer by each benchmark's rules.

Each prompt is a static system message (the same bytes on every call, so a provider's prompt cache
keeps it) followed by the question's data in the user message.

- :data:`READER` answers a question from a context: chronomem's context block, or the whole
  conversation (the full-context baseline). Both get the same instructions.
- :data:`LME_JUDGE` grades by LongMemEval's rules, which differ by question type (the benchmark's
  ``evaluate_qa``): the answer must hold the gold answer (every part of it, or the steps that lead
  to it); temporal questions forgive an off-by-one count of days, weeks or months; knowledge-update
  questions accept older information beside the updated answer as long as the updated one is
  given; preference questions are graded against a rubric of what a personal answer would use;
  abstention questions (``_abs``) are correct when the answer says the question cannot be answered
  from what it was told. Rephrased here, not copied.
- :data:`LOCOMO_JUDGE` grades LoCoMo answers the way the LLM-judge score commonly reported on LoCoMo
  does: generous on wording and detail as long as the answer is about the same thing as the gold
  one; for dates, right when it names the same day, month or period in any format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel

from chronomem.llm.base import Message, Prompt
from chronomem.llm.budget import text_bound

__all__ = [
    "JUDGE_VERSION",
    "LME_JUDGE",
    "LOCOMO_JUDGE",
    "READER",
    "READER_VERSION",
    "JudgeContext",
    "LmeRule",
    "ReaderAnswer",
    "ReaderContext",
    "Verdict",
    "lme_rule",
]

READER_VERSION = "reader-1"  # part of every cached answer's key: change it when the prompt changes
JUDGE_VERSION = "judge-1"

ANSWER_CHARS = 400
REASON_CHARS = 300


# -- the reader -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReaderContext:
    question: str
    asked_at: str  # when the question is asked, as the benchmark gives it
    context: str  # chronomem's context block, or the whole conversation
    full_conversation: bool = False


class ReaderAnswer(BaseModel):
    answer: Annotated[str, text_bound(ANSWER_CHARS)]


_READER_SYSTEM = """\
You answer a question about a user's past conversations, using only the memory given to you.

The memory is either a set of facts, entities and messages retrieved from the conversations (each \
with the date it happened or was said), or the conversations themselves, session by session with \
their dates.

Rules:
- Answer from the memory alone. Do not guess beyond what it says.
- Dates matter: work out relative times ("last week", "two days ago") from the date of the message \
that says them, and answer with an absolute date or period when the question asks when.
- When the question asks how many, how long or how often, count or compute from the memory and \
give the number.
- When facts disagree, the most recent one holds.
- If the memory does not contain the answer, say "No information available".
- Keep the answer short: the answer itself, in a phrase or a sentence, without an explanation.

Reply with JSON: {"answer": "<your answer>"}"""


def _reader_messages(ctx: ReaderContext) -> list[Message]:
    kind = "CONVERSATIONS" if ctx.full_conversation else "MEMORY"
    user = f"<{kind}>\n{ctx.context}\n</{kind}>\n\nThe question is asked on {ctx.asked_at}.\nQuestion: {ctx.question}"
    return [Message("system", _READER_SYSTEM), Message("user", user)]


READER: Prompt[ReaderContext, ReaderAnswer] = Prompt(
    name="qa_reader", answer=ReaderAnswer, build=_reader_messages, max_output_tokens=160
)


# -- the judges -------------------------------------------------------------------------------------

LmeRule = Literal["default", "temporal", "update", "preference", "abstention"]


def lme_rule(question_type: str, abstention: bool) -> LmeRule:
    """Which of LongMemEval's grading rules a question falls under."""
    if abstention:
        return "abstention"
    rules: dict[str, LmeRule] = {
        "temporal-reasoning": "temporal",
        "knowledge-update": "update",
        "single-session-preference": "preference",
    }
    return rules.get(question_type, "default")


@dataclass(frozen=True, slots=True)
class JudgeContext:
    question: str
    gold: str  # the gold answer; a rubric for preference questions; an explanation for abstention ones
    response: str
    rule: str = "default"  # an LmeRule for LongMemEval; unused by the LoCoMo judge


class Verdict(BaseModel):
    reason: Annotated[str, text_bound(REASON_CHARS)] = ""
    correct: bool


_JUDGE_FORMAT = 'Reply with JSON: {"reason": "<one short sentence>", "correct": true or false}'

_LME_SYSTEM = f"""\
You grade a model's response to a question about a user's chat history. You are given the \
question, the expected answer (or, for some questions, a rubric or an explanation) and the \
response. Judge whether the response is correct under the rule the question is marked with:

- default: correct when the response contains the expected answer, or is equivalent to it, or \
shows every intermediate step that leads to it. A response that gives only part of what the \
expected answer requires is not correct.
- temporal: as default, except that a count of days, weeks, months or years that is off by one \
(19 days where 18 is expected) is still correct.
- update: as default; a response that mentions earlier information as well is correct as long as \
the updated answer it gives is the expected one.
- preference: the expected answer is a rubric of what a personalised response would take into \
account. Correct when the response recalls and uses the user's personal information as the rubric \
describes; it need not cover every point of the rubric.
- abstention: the question cannot be answered from the history; the explanation says why. Correct \
when the response identifies the question as unanswerable, for instance by saying the information \
is missing or incomplete, or that something else was mentioned but not what was asked.

{_JUDGE_FORMAT}"""


def _lme_messages(ctx: JudgeContext) -> list[Message]:
    label = {"preference": "Rubric", "abstention": "Explanation"}.get(ctx.rule, "Expected answer")
    user = f"Rule: {ctx.rule}\nQuestion: {ctx.question}\n{label}: {ctx.gold}\nResponse: {ctx.response}"
    return [Message("system", _LME_SYSTEM), Message("user", user)]


LME_JUDGE: Prompt[JudgeContext, Verdict] = Prompt(
    name="qa_judge_longmemeval", answer=Verdict, build=_lme_messages, max_output_tokens=120
)

_LOCOMO_SYSTEM = f"""\
You grade an answer to a question about a long conversation between two people, against the gold \
answer. Be generous: the answer is correct when it is about the same thing as the gold answer, \
even if it is longer, worded differently or adds detail. For questions about time, the gold answer \
names a date, month, year or period; the answer is correct when it refers to the same one, in any \
format ("May 7th" and "7 May" are the same day), or through a relative expression that lands on it. \
The answer is wrong when it names something else, contradicts the gold answer or says the \
information is not available.

{_JUDGE_FORMAT}"""


def _locomo_messages(ctx: JudgeContext) -> list[Message]:
    user = f"Question: {ctx.question}\nGold answer: {ctx.gold}\nAnswer: {ctx.response}"
    return [Message("system", _LOCOMO_SYSTEM), Message("user", user)]


LOCOMO_JUDGE: Prompt[JudgeContext, Verdict] = Prompt(
    name="qa_judge_locomo", answer=Verdict, build=_locomo_messages, max_output_tokens=120
)
