"""LongMemEval (Wu et al., ICLR 2025): one haystack of chat sessions per question.

Reading (``load_longmemeval``). The official LLM-free retrieval metrics index user-side text only
and skip abstention questions (``question_id`` ending in ``_abs``).

The mapping to episodes (``lme_episodes``), the one ``chronomem import --format longmemeval`` and
the evaluation harness both use, and the one the published recall figures were measured on: one
group per question (``lme-<question_id>``), holding its haystack:

- one message episode per *user* turn with text, speaker and role ``user`` (the assistant's turns,
  speaker and role ``assistant``, only with ``assistant_turns``: the import brings them, the harness
  leaves them out, as the official metric indexes user-side text only);
- a turn longer than 120 words is cut into 120-word pieces, one episode each, so an embedder that
  stops at 256 word pieces (MiniLM) reads all of it; id ``<group>:<session_id>:<position>:<piece>``;
- at its session's date plus one second per earlier turn of the session, ``created_at`` the same;
- ``metadata["unit"]``: the session id (the metric's unit).

With ``session_documents``, each session's whole user text also becomes one text episode right
after its turns (see :func:`~chronomem.datasets.common.session_document`), whose unit is the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from chronomem.datasets.common import read_json, session_document
from chronomem.domain import Episode, EpisodeKind

__all__ = [
    "LME_PREFIX",
    "LmeQuestion",
    "LmeSession",
    "LmeTurn",
    "lme_episodes",
    "lme_group",
    "load_longmemeval",
    "parse_lme_date",
]

LME_PREFIX = "lme-"  # a question's group is this prefix and its question_id
CHUNK_WORDS = 120


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


# -- the mapping to episodes ------------------------------------------------------------------------


def lme_group(question: LmeQuestion, prefix: str = LME_PREFIX) -> str:
    return f"{prefix}{question.question_id}"


def _chunks(text: str, words: int = CHUNK_WORDS) -> list[str]:
    """Long messages in pieces the embedder reads whole (MiniLM stops at 256 word pieces)."""
    tokens = text.split()
    return [" ".join(tokens[i : i + words]) for i in range(0, len(tokens), words)] or [text]


def lme_episodes(
    question: LmeQuestion, *, prefix: str = LME_PREFIX, session_documents: bool = False, assistant_turns: bool = False
) -> list[Episode]:
    """The haystack's user turns as message episodes, session by session (see the module
    docstring); with ``session_documents``, each session's user text as one text episode after its
    turns; with ``assistant_turns``, the assistant's turns too, in their place (an import for a
    memory a model reads; the retrieval metric indexes user text only, so the harness leaves them
    out). A turn's id is its place in the session either way."""
    group = lme_group(question, prefix)
    roles = ("user", "assistant") if assistant_turns else ("user",)
    episodes: list[Episode] = []
    for session in question.sessions:
        source = f"LongMemEval session {session.session_id}"
        for position, turn in enumerate(session.turns):
            if turn.role not in roles or not turn.content.strip():
                continue
            when = session.date + timedelta(seconds=position)
            for part, chunk in enumerate(_chunks(turn.content)):
                episodes.append(Episode(
                    id=f"{group}:{session.session_id}:{position}:{part}", group_id=group, kind=EpisodeKind.MESSAGE,
                    content=chunk, speaker=turn.role, role=turn.role, reference_time=when, created_at=when,
                    source_description=source, metadata={"unit": session.session_id},
                ))
        if session_documents and session.user_text.strip():
            episodes.append(session_document(group, source, session.session_id, session.date, [session.user_text],
                                             unit=session.session_id))
    return episodes
