"""LLM-free ingestion of benchmark conversations: raw episodes plus their vectors, no extraction.

Each episode is stored with status ``unextracted`` and its real timestamp. What an episode is
*indexed by* matters more than anything else for LLM-free recall, so it is decided here:

- LoCoMo: one episode per turn (full text indexes ``"speaker: text"`` plus the caption of a shared
  image, ``[shares a photo of …]``); its vector embeds ``"speaker: text"``. Measured on
  locomo10: adding the caption, or the previous turn, to the embedded text lowered recall. Each
  session is also written as one text document with no unit of its own (see
  :func:`_session_document`).
- LongMemEval: one episode per user turn (the official metric indexes user-side text only), at its
  session's date, cut into 120-word pieces so the embedder reads all of it; plus the session's whole
  user text as one document, whose unit is the session.

``metadata["unit"]`` names the unit the metrics count (a LoCoMo ``dia_id``, a LongMemEval session id).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from chronomem.domain import Episode, EpisodeKind, EpisodeStatus
from chronomem.embed.base import Embedder
from chronomem.eval.locomo import LocomoSample
from chronomem.eval.longmemeval import LmeQuestion
from chronomem.store.base import GraphWrite, Store

__all__ = ["IndexedEpisode", "ingest", "lme_episodes", "lme_group", "locomo_episodes", "locomo_group"]


@dataclass(frozen=True, slots=True)
class IndexedEpisode:
    episode: Episode
    vector_text: str  # what its embedding is computed from


def locomo_group(sample: LocomoSample) -> str:
    return f"locomo-{sample.sample_id}"


def lme_group(question: LmeQuestion) -> str:
    return f"lme-{question.question_id}"


def _session_document(
    group: str, source: str, session_key: str, when: datetime, lines: list[str], unit: str | None = None
) -> IndexedEpisode:
    """The whole session as one text episode: it lets the conversation signal see a session that
    matches the question as a whole though no single turn does. It counts as a unit only when the
    metric's unit is the session itself (LongMemEval)."""
    metadata: dict[str, object] = {"session_document": True}
    if unit is not None:
        metadata["unit"] = unit
    episode = Episode(
        id=f"{group}:session:{session_key}", group_id=group, kind=EpisodeKind.TEXT, content="\n".join(lines),
        reference_time=when, created_at=when, source_description=source, metadata=metadata,
        status=EpisodeStatus.UNEXTRACTED,
    )
    return IndexedEpisode(episode, episode.content)


def locomo_episodes(sample: LocomoSample, *, session_documents: bool = True) -> list[IndexedEpisode]:
    group = locomo_group(sample)
    indexed: list[IndexedEpisode] = []
    sessions: dict[int, list[str]] = {}
    previous: dict[int, str] = {}  # session -> id of its latest turn, what the next turn replies to
    for turn in sample.turns:
        lines = sessions.setdefault(turn.session, [])
        when = turn.date + timedelta(seconds=len(lines))  # turns of a session share its date: keep their order
        photo = f" [shares a photo of {turn.caption}]" if turn.caption else ""
        episode = Episode(
            id=f"{group}:{turn.dia_id}", group_id=group, kind=EpisodeKind.MESSAGE, content=turn.text + photo,
            speaker=turn.speaker, role="user", reference_time=when, created_at=when,
            source_description=f"LoCoMo session {turn.session}",
            metadata={"unit": turn.dia_id, "session": turn.session, "reply_to": previous.get(turn.session)},
            status=EpisodeStatus.UNEXTRACTED,
        )
        indexed.append(IndexedEpisode(episode, f"{turn.speaker}: {turn.text}"))
        previous[turn.session] = episode.id
        lines.append(f"{turn.speaker}: {turn.text}{photo}")
    if session_documents:
        first = {t.session: t.date for t in reversed(sample.turns)}
        for number, lines in sessions.items():
            indexed.append(_session_document(group, f"LoCoMo session {number}", str(number), first[number], lines))
    return indexed


def _chunks(text: str, words: int = 120) -> list[str]:
    """Long messages in pieces the embedder reads whole (MiniLM stops at 256 word pieces)."""
    tokens = text.split()
    return [" ".join(tokens[i : i + words]) for i in range(0, len(tokens), words)] or [text]


def lme_episodes(question: LmeQuestion, *, session_documents: bool = True) -> list[IndexedEpisode]:
    group = lme_group(question)
    indexed = []
    for session in question.sessions:
        source = f"LongMemEval session {session.session_id}"
        for position, turn in enumerate(session.turns):
            if turn.role != "user" or not turn.content.strip():
                continue
            for part, chunk in enumerate(_chunks(turn.content)):
                when = session.date + timedelta(seconds=position)
                episode = Episode(
                    id=f"{group}:{session.session_id}:{position}:{part}", group_id=group, kind=EpisodeKind.MESSAGE,
                    content=chunk, speaker="user", role="user", reference_time=when, created_at=when,
                    source_description=source, metadata={"unit": session.session_id},
                    status=EpisodeStatus.UNEXTRACTED,
                )
                indexed.append(IndexedEpisode(episode, chunk))
        if session_documents and session.user_text.strip():
            indexed.append(
                _session_document(group, source, session.session_id, session.date, [session.user_text],
                                  unit=session.session_id)
            )
    return indexed


async def ingest(store: Store, embedder: Embedder, group_id: str, indexed: Sequence[IndexedEpisode]) -> int:
    """Write the episodes and their vectors in one atomic batch; returns how many were new.

    Re-running against a persistent store writes nothing for a group already complete.
    """
    existing = await store.get_episodes(group_id, [i.episode.id for i in indexed])
    if len(existing) == len(indexed):
        return 0
    vectors = await embedder.embed([i.vector_text for i in indexed])
    await store.write(
        GraphWrite(
            group_id=group_id,
            episodes=[i.episode for i in indexed],
            episode_vectors={i.episode.id: v for i, v in zip(indexed, vectors, strict=True)},
        )
    )
    return len(indexed) - len(existing)
