"""LongMemEval (Wu et al., ICLR 2025): one haystack of chat sessions per question.

Official LLM-free retrieval metrics index user-side text only and skip abstention questions
(``question_id`` ending in ``_abs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from chronomem.eval.loaders import read_json

__all__ = ["LmeQuestion", "LmeSession", "LmeTurn", "load_longmemeval", "parse_lme_date"]


@dataclass(frozen=True, slots=True)
class LmeTurn:
    role: str
    content: str
    has_answer: bool


@dataclass(frozen=True, slots=True)
class LmeSession:
    session_id: str
    date: datetime
    turns: tuple[LmeTurn, ...]

    @property
    def user_text(self) -> str:
        return "\n".join(t.content for t in self.turns if t.role == "user")


@dataclass(frozen=True, slots=True)
class LmeQuestion:
    question_id: str
    question_type: str
    question: str
    answer: str
    question_date: datetime
    sessions: tuple[LmeSession, ...]
    answer_session_ids: tuple[str, ...]

    @property
    def is_abstention(self) -> bool:
        return self.question_id.endswith("_abs")


def parse_lme_date(text: str) -> datetime:
    """``"2023/05/30 (Tue) 23:40"`` → an aware UTC datetime."""
    return datetime.strptime(text.strip(), "%Y/%m/%d (%a) %H:%M").replace(tzinfo=UTC)


def load_longmemeval(path: str | Path) -> list[LmeQuestion]:
    """Every question of a LongMemEval file (``longmemeval_s*.json``, maybe gzipped)."""
    questions = []
    for raw in read_json(path):
        sessions = tuple(
            LmeSession(
                session_id=sid,
                date=parse_lme_date(date),
                turns=tuple(LmeTurn(t["role"], t["content"], bool(t.get("has_answer"))) for t in turns),
            )
            for sid, date, turns in zip(
                raw["haystack_session_ids"], raw["haystack_dates"], raw["haystack_sessions"], strict=True
            )
        )
        questions.append(
            LmeQuestion(
                question_id=raw["question_id"],
                question_type=raw["question_type"],
                question=raw["question"],
                answer=str(raw["answer"]),
                question_date=parse_lme_date(raw["question_date"]),
                sessions=sessions,
                answer_session_ids=tuple(raw["answer_session_ids"]),
            )
        )
    return questions
