"""LLM-free ingestion of benchmark conversations: raw episodes plus their vectors, no extraction.

The episodes are the benchmark's one mapping (:mod:`chronomem.datasets`: the same ones
``chronomem import`` builds) with each session also as one text document, stored with status
``unextracted`` and their real timestamps. What an episode is *embedded from* is decided here:

- LoCoMo: a turn's vector embeds ``"speaker: text"``, without the caption of a shared image that its
  content (and so its full-text index) carries. Measured on locomo10: adding the caption, or the
  previous turn, to the embedded text lowered recall. A session document embeds its content.
- LongMemEval: every episode embeds its content (a user turn's 120-word piece, a session's user text).

``metadata["unit"]`` names the unit the metrics count (a LoCoMo ``dia_id``, a LongMemEval session id).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chronomem.datasets.locomo import LocomoSample, locomo_episodes
from chronomem.datasets.longmemeval import LmeQuestion, lme_episodes
from chronomem.domain import Episode, EpisodeStatus
from chronomem.embed.base import Embedder
from chronomem.store.base import GraphWrite, Store

__all__ = ["IndexedEpisode", "indexed_lme", "indexed_locomo", "ingest"]


@dataclass(frozen=True, slots=True)
class IndexedEpisode:
    episode: Episode
    vector_text: str  # what its embedding is computed from


def _unextracted(episode: Episode) -> Episode:
    return episode.model_copy(update={"status": EpisodeStatus.UNEXTRACTED})


def indexed_locomo(sample: LocomoSample, *, session_documents: bool = True) -> list[IndexedEpisode]:
    """The conversation's episodes (turns, then session documents) with what each is embedded from."""
    episodes = locomo_episodes(sample, session_documents=session_documents)
    texts = [f"{turn.speaker}: {turn.text}" for turn in sample.turns]  # one episode per turn, in order
    texts += [episode.content for episode in episodes[len(texts):]]
    return [IndexedEpisode(_unextracted(e), text) for e, text in zip(episodes, texts, strict=True)]


def indexed_lme(question: LmeQuestion, *, session_documents: bool = True) -> list[IndexedEpisode]:
    """The question's haystack as episodes (user turns, each session's document after its turns)."""
    return [IndexedEpisode(_unextracted(e), e.content)
            for e in lme_episodes(question, session_documents=session_documents)]


async def ingest(store: Store, embedder: Embedder, group_id: str, indexed: Sequence[IndexedEpisode]) -> int:
    """Write the episodes the store does not hold yet, and their vectors, in one atomic batch;
    returns how many were new.

    Re-running against a persistent store writes nothing for a group already complete, and a group
    imported before (``chronomem import``: the same turn episodes, maybe extracted) keeps its
    episodes as they are; only what it lacks (the session documents) is added.
    """
    held = {e.id for e in await store.get_episodes(group_id, [i.episode.id for i in indexed])}
    missing = [i for i in indexed if i.episode.id not in held]
    if not missing:
        return 0
    vectors = await embedder.embed([i.vector_text for i in missing])
    await store.write(
        GraphWrite(
            group_id=group_id,
            episodes=[i.episode for i in missing],
            episode_vectors={i.episode.id: v for i, v in zip(missing, vectors, strict=True)},
        )
    )
    return len(missing)
