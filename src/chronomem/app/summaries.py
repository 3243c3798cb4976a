"""Zep's user and thread summaries: a persistent picture of a user, and of what a thread covered.

Both are **incremental**: one model call folds what is new since the last summary (new facts about
the user; new messages of the thread) into the previous text, so the cost grows with what changed,
never with the history. The caller decides when to refresh and keeps the result with its watermark
(:class:`StoredSummary`). The user summary follows the project's and the user's *summary
instructions* (Zep's ``add_user_summary_instructions``): short statements of what to keep.

Without a model, or when the model fails, the summary is what the graph says, deterministically,
and says so (:func:`graph_summary`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from chronomem.errors import ModelError
from chronomem.llm.base import LanguageModel, Message, Prompt
from chronomem.llm.budget import text_bound

__all__ = [
    "THREAD_SUMMARY",
    "USER_SUMMARY",
    "StoredSummary",
    "SummaryUpdate",
    "WrittenSummary",
    "folded",
    "graph_summary",
    "write_summary",
]

MAX_SUMMARY_CHARS = 1_500
_MAX_NEW_LINES = 60  # one call folds in at most this many new lines; the rest wait for the next one
_JSON_ONLY = "Answer with one JSON object and nothing else."


@dataclass(frozen=True, slots=True)
class SummaryUpdate:
    """What one call sees: the subject, its previous summary, what is new, and the instructions."""

    subject: str  # "the user Ada Lovelace", "the thread support-42"
    previous: str
    new_lines: tuple[str, ...]
    instructions: tuple[str, ...] = ()
    max_chars: int = MAX_SUMMARY_CHARS


class WrittenSummary(BaseModel):
    # bounded in the schema (llm/budget.py); each prompt tightens it to twice the length it asks for
    summary: Annotated[str, text_bound(4 * MAX_SUMMARY_CHARS)] = Field(
        default="", description="the whole updated summary"
    )


# The instructions are the system message, the same for every subject and call (a provider's prompt
# cache reads them once); the subject, the texts and the length bound follow in the user message.
_USER_SYSTEM = (
    "You keep a persistent summary of a user for an assistant: who they are, what they want, what "
    "matters to them now. Update the previous summary with the new facts; where a new fact contradicts "
    "the previous summary, the new fact wins. Follow the instructions, if any, on what to keep. Use only "
    'the previous summary and the facts, within the length given. Schema: {"summary": str}. ' + _JSON_ONLY
)
_THREAD_SYSTEM = (
    "You keep a running summary of a conversation: what was discussed, decided and left open, with names "
    "and dates. Update the previous summary with the new messages. Use only the previous summary and the "
    'messages, within the length given. Schema: {"summary": str}. ' + _JSON_ONLY
)


def _build_user_summary(ctx: SummaryUpdate) -> list[Message]:
    steer = "".join(f"- {i}\n" for i in ctx.instructions)
    user = (
        f"Subject: {ctx.subject}. At most {ctx.max_chars} characters.\n"
        f"<PREVIOUS_SUMMARY>\n{ctx.previous or '(none yet)'}\n</PREVIOUS_SUMMARY>\n"
        f"<NEW_FACTS>\n" + "\n".join(ctx.new_lines) + "\n</NEW_FACTS>\n"
        + (f"<INSTRUCTIONS>\n{steer}</INSTRUCTIONS>\n" if steer else "")
        + "Where a new fact contradicts the previous summary, the new fact wins.\n"  # restated after the data
    )
    return [Message("system", _USER_SYSTEM), Message("user", user)]


def _build_thread_summary(ctx: SummaryUpdate) -> list[Message]:
    user = (
        f"Subject: {ctx.subject}. At most {ctx.max_chars} characters.\n"
        f"<PREVIOUS_SUMMARY>\n{ctx.previous or '(none yet)'}\n</PREVIOUS_SUMMARY>\n"
        f"<NEW_MESSAGES>\n" + "\n".join(ctx.new_lines) + "\n</NEW_MESSAGES>\n"
    )
    return [Message("system", _THREAD_SYSTEM), Message("user", user)]


USER_SUMMARY: Prompt[SummaryUpdate, WrittenSummary] = Prompt(
    name="user_summary", answer=WrittenSummary, build=_build_user_summary, max_output_tokens=600, role="summary",
    limits=lambda ctx: {"WrittenSummary.summary": 2 * ctx.max_chars},
)
THREAD_SUMMARY: Prompt[SummaryUpdate, WrittenSummary] = Prompt(
    name="thread_summary", answer=WrittenSummary, build=_build_thread_summary, max_output_tokens=600,
    role="summary", limits=lambda ctx: {"WrittenSummary.summary": 2 * ctx.max_chars},
)


@dataclass(frozen=True, slots=True)
class StoredSummary:
    """A model-written summary and how far it got: ``covered`` is the watermark (the number of
    facts or messages folded in, in their stable order)."""

    text: str
    covered: int
    updated_at: datetime


async def write_summary(
    llm: LanguageModel, prompt: Prompt[SummaryUpdate, WrittenSummary], update: SummaryUpdate
) -> str | None:
    """One call folding ``update.new_lines`` (the first ``_MAX_NEW_LINES``) into the previous
    summary; ``None`` when the model fails or answers nothing, so the caller keeps what it had."""
    bounded = SummaryUpdate(update.subject, update.previous, update.new_lines[:_MAX_NEW_LINES],
                            update.instructions, update.max_chars)
    try:
        answer = (await llm.complete(prompt, bounded)).output
    except ModelError:
        return None
    text = " ".join(answer.summary.split())
    return text[: update.max_chars] or None


def folded(update: SummaryUpdate) -> int:
    """How many of the new lines one call folds in."""
    return min(len(update.new_lines), _MAX_NEW_LINES)


def graph_summary(subject: str, sentences: Sequence[str], *, limit: int = 20) -> str:
    """A summary without a model: the graph's own sentences, deduplicated, capped, and labelled."""
    kept = list(dict.fromkeys(" ".join(t.split()) for t in sentences if t.strip()))[:limit]
    if not kept:
        return f"[no model summary] The graph holds no facts about {subject} yet."
    return f"[no model summary; facts the graph holds about {subject}] " + " ".join(
        t if t.endswith((".", "!", "?")) else t + "." for t in kept
    )
