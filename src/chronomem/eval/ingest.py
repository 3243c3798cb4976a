"""LLM-free ingestion of benchmark conversations: raw episodes plus their vectors, no extraction.

Each episode is stored with status ``unextracted`` and its real timestamp. What an episode is
*indexed by* matters more than anything else for LLM-free recall, so it is decided here:

- LoCoMo: one episode per turn (full text indexes ``"speaker: text"`` plus the caption of a shared
  image, ``[shares a photo of …]``); its vector embeds ``"speaker: text"``. Measured on
  locomo10: adding the caption, or the previous turn, to the embedded text lowered recall.
- LongMemEval: one episode per user turn (the official metric indexes user-side text only), at its
  session's date; its vector embeds the turn itself.

``metadata["unit"]`` names the unit the metrics count (a LoCoMo ``dia_id``, a LongMemEval session id).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

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


def locomo_episodes(sample: LocomoSample) -> list[IndexedEpisode]:
    group = locomo_group(sample)
    indexed = []
    for position, turn in enumerate(sample.turns):
        # turns of one session share its date: a second apart keeps them in order
        when = turn.date + timedelta(seconds=position % 10_000)
        content = turn.text + (f" [shares a photo of {turn.caption}]" if turn.caption else "")
        episode = Episode(
            id=f"{group}:{turn.dia_id}", group_id=group, kind=EpisodeKind.MESSAGE, content=content,
            speaker=turn.speaker, role="user", reference_time=when, created_at=when,
            source_description=f"LoCoMo session {turn.session}",
            metadata={"unit": turn.dia_id, "session": turn.session},
            status=EpisodeStatus.UNEXTRACTED,
        )
        indexed.append(IndexedEpisode(episode, f"{turn.speaker}: {turn.text}"))
    return indexed


def lme_episodes(question: LmeQuestion) -> list[IndexedEpisode]:
    group = lme_group(question)
    indexed = []
    for session in question.sessions:
        for position, turn in enumerate(session.turns):
            if turn.role != "user" or not turn.content.strip():
                continue
            when = session.date + timedelta(seconds=position)
            episode = Episode(
                id=f"{group}:{session.session_id}:{position}", group_id=group, kind=EpisodeKind.MESSAGE,
                content=turn.content, speaker="user", role="user", reference_time=when, created_at=when,
                source_description=f"LongMemEval session {session.session_id}", metadata={"unit": session.session_id},
                status=EpisodeStatus.UNEXTRACTED,
            )
            indexed.append(IndexedEpisode(episode, turn.content))
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
