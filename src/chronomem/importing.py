"""Reading conversations from files into episodes, and feeding episodes to a memory in order.

Formats (``read_episodes(path, fmt, group_id=…)``):

- ``messages``: JSON Lines, one message per line: ``{"content": …, "role": "user", "name": "Ann",
  "created_at": "2024-05-01T10:00:00Z", "uuid": …, "group_id": …, "metadata": {…}}``; only
  ``content`` is required; ``group_id`` per line overrides the default group.
- ``locomo``: the LoCoMo file (``locomo10.json``): one group per sample (``<prefix><sample_id>``),
  one message episode per turn, at its session's date; a shared image becomes its caption.
- ``longmemeval``: a LongMemEval file (``.json`` or ``.json.gz``): one group per question
  (``<prefix><question_id>``), one message episode per turn of its haystack, at its session's date.

Every episode has a stable id, so importing a file twice adds nothing the second time: ``locomo``
and ``longmemeval`` ids are derived from the file's own ids; a ``messages`` line without ``uuid``
gets one derived from its group, its position among the file's messages and its content (a line
appended later gets a new id, a repeated "ok" on another line is another message).
``import_episodes`` feeds them to a memory and counts what was added and what was already there.
Whole-group export files are read by ``Chronomem.import_group`` (see ``chronomem.memory``), not here.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from chronomem.domain import Episode, EpisodeKind
from chronomem.errors import ConflictError, InvalidInputError
from chronomem.timeutil import parse_instant

__all__ = [
    "FORMATS",
    "ImportCounts",
    "ImportFormat",
    "import_episodes",
    "locomo_episodes",
    "longmemeval_episodes",
    "message_episodes",
    "read_episodes",
]

if TYPE_CHECKING:
    from chronomem.memory import Chronomem

ImportFormat = Literal["messages", "locomo", "longmemeval"]
FORMATS: tuple[str, ...] = ("messages", "locomo", "longmemeval")
_NAMESPACE = uuid.UUID("6f1c8a52-5d1e-4c39-9a55-2c7f0e0d6b11")


def _stable_id(*parts: str) -> str:
    return uuid.uuid5(_NAMESPACE, "\x1f".join(parts)).hex


def _line_episode(raw: Any, line: str, line_no: int, position: int, group_id: str | None) -> Episode:
    if not isinstance(raw, dict) or not isinstance(raw.get("content"), str):
        raise InvalidInputError(f"line {line_no}: expected an object with a string 'content'")
    group = raw.get("group_id") or group_id
    if not group:
        raise InvalidInputError(f"line {line_no}: no group_id on the line and no default group given")
    fields: dict[str, Any] = {
        "group_id": group, "kind": EpisodeKind.MESSAGE, "content": raw["content"],
        "role": raw.get("role", "user"), "speaker": raw.get("name") or raw.get("role", "user"),
        "metadata": raw.get("metadata") or {}, "source_description": "import",
    }
    if raw.get("created_at"):
        try:
            fields["reference_time"] = parse_instant(str(raw["created_at"]))
        except InvalidInputError as exc:
            raise InvalidInputError(f"line {line_no}: created_at {exc}") from None
    fields["id"] = str(raw["uuid"]) if raw.get("uuid") else _stable_id("messages", group, str(position), line)
    try:
        return Episode(**fields)
    except ValueError as exc:
        raise InvalidInputError(f"line {line_no}: {exc}") from exc


def message_episodes(lines: Iterable[str], *, group_id: str | None = None) -> list[Episode]:
    """Episodes from JSON Lines of messages (blank lines skipped)."""
    episodes: list[Episode] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError as exc:
            raise InvalidInputError(f"line {number}: not JSON ({exc})") from None
        episodes.append(_line_episode(raw, line.strip(), number, len(episodes), group_id))
    return episodes


def locomo_episodes(path: str | Path, *, prefix: str = "") -> list[Episode]:
    from chronomem.eval.locomo import load_locomo

    episodes = []
    for sample in load_locomo(path):
        group = f"{prefix}{sample.sample_id}"
        for turn in sample.turns:
            content = turn.text + (f" [shares an image: {turn.caption}]" if turn.caption else "")
            episodes.append(Episode(
                id=_stable_id("locomo", sample.sample_id, turn.dia_id), group_id=group, kind=EpisodeKind.MESSAGE,
                content=content, speaker=turn.speaker, role="user", reference_time=turn.date,
                source_description=f"LoCoMo session {turn.session}", metadata={"dia_id": turn.dia_id},
            ))
    return episodes


def longmemeval_episodes(path: str | Path, *, prefix: str = "") -> list[Episode]:
    from chronomem.eval.longmemeval import load_longmemeval

    episodes = []
    for question in load_longmemeval(path):
        group = f"{prefix}{question.question_id}"
        for session in question.sessions:
            for index, turn in enumerate(session.turns):
                episodes.append(Episode(
                    id=_stable_id("longmemeval", question.question_id, session.session_id, str(index)),
                    group_id=group, kind=EpisodeKind.MESSAGE, content=turn.content, speaker=turn.role,
                    role=turn.role, reference_time=session.date,
                    source_description=f"LongMemEval session {session.session_id}",
                    metadata={"session_id": session.session_id, "turn": index},
                ))
    return episodes


def read_episodes(path: str | Path, fmt: ImportFormat, *, group_id: str | None = None) -> list[Episode]:
    """Episodes from a file; ``group_id`` is the group (``messages``) or the group-id prefix."""
    if fmt == "messages":
        with open(path, encoding="utf-8") as handle:
            return message_episodes(handle, group_id=group_id)
    if fmt == "locomo":
        return locomo_episodes(path, prefix=group_id or "")
    if fmt == "longmemeval":
        return longmemeval_episodes(path, prefix=group_id or "")
    raise InvalidInputError(f"unknown import format {fmt!r}; known: {', '.join(FORMATS)}")


@dataclass(frozen=True, slots=True)
class ImportCounts:
    """What an import did: episodes new to the memory, and episodes it held already (skipped)."""

    added: int
    already_present: int
    groups: int


async def import_episodes(
    memory: Chronomem, episodes: Sequence[Episode], *, queue: bool = False, progress: bool = False
) -> ImportCounts:
    """Store the episodes the memory does not hold yet, and extract them now (or, with ``queue``,
    leave them ``pending`` for the workers). An id the memory holds with other content is a
    ``ConflictError`` raised before anything is stored."""
    fresh: list[Episode] = []
    by_group: dict[str, list[Episode]] = {}
    for episode in episodes:
        by_group.setdefault(episode.group_id, []).append(episode)
    for group_id, batch in by_group.items():
        stored = {e.id: e for e in await memory.store.get_episodes(group_id, [e.id for e in batch])}
        for episode in batch:
            old = stored.get(episode.id)
            if old is None:
                fresh.append(episode)
            elif old.content != episode.content:
                raise ConflictError(f"episode id {episode.id!r} of group {group_id!r} holds other content")
    if queue:
        for start in range(0, len(fresh), 100):
            await memory.enqueue(fresh[start:start + 100])
    elif fresh:
        await memory.add_episodes(fresh, progress=progress)
    return ImportCounts(added=len(fresh), already_present=len(episodes) - len(fresh), groups=len(by_group))
