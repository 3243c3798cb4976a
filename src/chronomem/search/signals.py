"""Extra rankings that nudge the fused order of a scope — pure functions over loaded objects.

Each returns candidate ids (a subset, or a reordering, of the fused order) that the searcher fuses
once more with RRF at a configurable weight, so a signal lifts candidates without erasing the
methods' evidence:

- :func:`dated_inside`: dated inside a time window the query named ("last May");
  :func:`dated_near`: the same, then those dated just outside it, nearest first (a window read from
  "two weeks before the trip" or "last weekend" is approximate, and so is when a thing was told).
- :func:`speaker_named`: episodes spoken by someone the query names ("what did Dave open?").
- :func:`by_conversation`: episodes ranked by the best candidate of their conversation (same source,
  same day): the turns around a strong hit are likelier to hold the answer than isolated matches.
- :func:`across_conversations`: each conversation's best candidate, then each one's second best, …
  — coverage across sessions, for questions whose evidence is spread over many ("all the …").
- :func:`reporting`: messages whose sentences report, in the first person and the past tense, an
  event the question asks about ("I just got back from a trip"; see :mod:`.reports`).
- :func:`unnamed_speakers_down`: not a ranking to fuse but a reorder of the fused one — when the
  query names a speaker, the others' messages move a fixed number of places down.
- :func:`replies_to_top`: messages replying (``metadata["reply_to"]``) to one of the best hits — the
  answer that follows a question which matched the query.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from chronomem.domain import Episode, Fact
from chronomem.search import reports
from chronomem.text.timeparse import TimeWindow

__all__ = [
    "across_conversations",
    "by_conversation",
    "conversation_key",
    "dated_inside",
    "dated_near",
    "is_dated_inside",
    "replies_to_top",
    "reporting",
    "speaker_named",
    "unnamed_speakers_down",
]


def is_dated_inside(obj: Any, windows: Sequence[TimeWindow]) -> bool:
    """Events (a fact's ``valid_at``, an episode's ``reference_time``) inside a window, or bounded
    fact intervals that overlap one. Undated objects are never inside."""
    if isinstance(obj, Episode):
        return any(w.contains(obj.reference_time) for w in windows)
    if isinstance(obj, Fact) and obj.valid_at is not None:
        if obj.invalid_at is not None:
            return any(w.overlaps(obj.valid_at, obj.invalid_at) for w in windows)
        return any(w.contains(obj.valid_at) for w in windows)
    return False


def dated_inside(ordered_ids: Sequence[str], objects: Mapping[str, Any], windows: Sequence[TimeWindow]) -> list[str]:
    return [i for i in ordered_ids if is_dated_inside(objects[i], windows)]


def _event_time(obj: Any) -> datetime | None:
    if isinstance(obj, Episode):
        return obj.reference_time
    if isinstance(obj, Fact):
        return obj.valid_at
    return None


def _distance(moment: datetime, window: TimeWindow) -> timedelta:
    if moment < window.start:
        return window.start - moment
    if moment >= window.end:
        return moment - window.end
    return timedelta(0)


def dated_near(
    ordered_ids: Sequence[str], objects: Mapping[str, Any], windows: Sequence[TimeWindow], *, margin: float
) -> list[str]:
    """Candidates dated inside a window (in the given order), then those within ``margin`` window
    lengths outside one, nearest first. ``margin`` 0 is :func:`dated_inside`."""
    inside = dated_inside(ordered_ids, objects, windows)
    if margin <= 0:
        return inside
    taken = set(inside)
    near: list[tuple[float, int, str]] = []
    for n, i in enumerate(ordered_ids):
        moment = _event_time(objects[i])
        if i in taken or moment is None:
            continue
        # how far outside, in window lengths, from the window it is nearest to
        relative = min(_distance(moment, w) / (w.end - w.start) for w in windows)
        if relative <= margin:
            near.append((relative, n, i))
    return inside + [i for _, _, i in sorted(near)]


def speaker_named(ordered_ids: Sequence[str], episodes: Mapping[str, Episode], query: str) -> list[str]:
    """Episodes whose speaker the query names, in the given order. Empty when every candidate's
    speaker is named (the signal would not discriminate) or none is."""
    speakers = {e.speaker for e in episodes.values() if e.speaker}
    folded = query.casefold()
    named = {s for s in speakers if re.search(rf"(?<!\w){re.escape(s.casefold())}(?!\w)", folded)}
    if not named or named == speakers:
        return []
    return [i for i in ordered_ids if episodes[i].speaker in named]


def unnamed_speakers_down(
    fused: Sequence[tuple[str, float]], episodes: Mapping[str, Episode], query: str, offset: int
) -> list[tuple[str, float]]:
    """``fused`` with each candidate not spoken by someone the query names (a document, which has no
    speaker, included) moved ``offset`` places down (ties: the named speaker's first), when the
    query names a speaker (as :func:`speaker_named` decides). Scores stay with the places.

    Why a shift and not one more RRF ranking: "What activities does Melanie partake in?" is
    answered by Melanie (on locomo10, 96% of the multi-hop evidence turns are spoken by a speaker
    the question names), yet the other speaker's replies ("Wow, pottery sounds fun!") echo the same
    words and filled 14% of the top 10. The speaker ranking fused at weight 1 lifts all of the named
    speaker's turns equally, relevant or not; a stronger weight traded single-hop for multi-hop
    (docs/retrieval.md). A shift keeps the order within each speaker and lets the other speaker's
    turn through only when it leads by ``offset`` places — a hard filter (a large ``offset``) lost
    single-hop evidence, which the other speaker states 6% of the time.
    """
    named = set(speaker_named([i for i, _ in fused], episodes, query))
    if not named or offset <= 0:
        return list(fused)
    key = {episode_id: (n, 0) if episode_id in named else (n + offset, 1) for n, (episode_id, _) in enumerate(fused)}
    order = sorted(key, key=key.__getitem__)
    return [(episode_id, score) for episode_id, (_, score) in zip(order, fused, strict=True)]


def conversation_key(episode: Episode) -> tuple[str, date]:
    """Episodes from one source on one day form a conversation (a chat thread's session)."""
    return episode.source_description, episode.reference_time.date()


def by_conversation(fused: Sequence[tuple[str, float]], episodes: Mapping[str, Episode]) -> list[str]:
    """Candidates reordered by the best fused score within their conversation (ties: fused order)."""
    best: dict[tuple[str, date], float] = {}
    for episode_id, score in fused:
        key = conversation_key(episodes[episode_id])
        best[key] = max(best.get(key, float("-inf")), score)
    position = {episode_id: n for n, (episode_id, _) in enumerate(fused)}
    return sorted(position, key=lambda i: (-best[conversation_key(episodes[i])], position[i]))


def across_conversations(fused: Sequence[tuple[str, float]], episodes: Mapping[str, Episode]) -> list[str]:
    """Candidates dealt round-robin over their conversations: the best of each conversation (in fused
    order), then the second best of each, and so on."""
    seen: dict[tuple[str, date], int] = {}
    depth = []
    for n, (episode_id, _) in enumerate(fused):
        key = conversation_key(episodes[episode_id])
        seen[key] = seen.get(key, 0) + 1
        depth.append((seen[key], n, episode_id))
    return [episode_id for _, _, episode_id in sorted(depth)]


def replies_to_top(fused: Sequence[tuple[str, float]], episodes: Mapping[str, Episode], *, top: int = 10) -> list[str]:
    """Candidates whose ``metadata["reply_to"]`` names one of the ``top`` fused hits, in the order
    of the hit they reply to."""
    rank = {episode_id: n for n, (episode_id, _) in enumerate(fused[:top])}
    replies = [
        (rank[parent], n, episode_id)
        for n, (episode_id, _) in enumerate(fused)
        if (parent := episodes[episode_id].metadata.get("reply_to")) in rank
    ]
    return [episode_id for _, _, episode_id in sorted(replies)]


def reporting(ordered_ids: Sequence[str], episodes: Mapping[str, Episode], question: str) -> list[str]:
    """Episodes (not the assistant's) that report the event a question about what the user did
    asks for, in the given order; empty for other questions."""
    if not reports.asks_what_was_done(question):
        return []
    words = reports.done_words(question)
    return [
        i for i in ordered_ids
        if episodes[i].role != "assistant" and reports.reports_event(episodes[i].content, words)
    ]
