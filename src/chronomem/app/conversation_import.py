"""Reading conversations from files into episodes, and feeding episodes to a memory in order.

Formats (``read_episodes(path, fmt, group_id=…)``):

- ``messages``: JSON Lines, one message per line: ``{"content": …, "role": "user", "name": "Ann",
  "created_at": "2024-05-01T10:00:00Z", "uuid": …, "group_id": …, "metadata": {…}}``; only
  ``content`` is required; ``group_id`` per line overrides the default group.
- ``locomo``: the LoCoMo file (``locomo10.json``): one group per sample (``<prefix><sample_id>``,
  prefix ``locomo-`` by default), one message episode per turn, at its session's date; a shared
  image becomes its caption.
- ``longmemeval``: a LongMemEval file (``.json`` or ``.json.gz``): one group per question
  (``<prefix><question_id>``, prefix ``lme-`` by default), one message episode per user turn of its
  haystack (long turns in 120-word pieces), at its session's date.

The two benchmarks' episodes are their one mapping in :mod:`chronomem.datasets`, the episodes the
retrieval evaluation (:mod:`chronomem.eval`) measures (without its session documents, which a
model would extract a second time).

Every episode has a stable id, so importing a file twice adds nothing the second time: ``locomo``
and ``longmemeval`` ids are derived from the group and the file's own ids; a ``messages`` line
without ``uuid`` gets one derived from its group, its position among the file's messages and its
content (a line appended later gets a new id, a repeated "ok" on another line is another message).
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

from chronomem.datasets.locomo import LOCOMO_PREFIX, load_locomo, locomo_episodes
from chronomem.datasets.longmemeval import LME_PREFIX, lme_episodes, load_longmemeval
from chronomem.domain import Episode, EpisodeKind
from chronomem.errors import ConflictError, InvalidInputError
from chronomem.timeutil import parse_instant

__all__ = [
    "FORMATS",
    "ImportCounts",
    "ImportFormat",
    "import_episodes",
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


def read_episodes(path: str | Path, fmt: ImportFormat, *, group_id: str | None = None) -> list[Episode]:
    """Episodes from a file; ``group_id`` is the group (``messages``) or the group-id prefix
    (``locomo``, ``longmemeval``; default ``locomo-``, ``lme-``: the evaluation's groups)."""
    if fmt == "messages":
        with open(path, encoding="utf-8") as handle:
            return message_episodes(handle, group_id=group_id)
    if fmt == "locomo":
        prefix = LOCOMO_PREFIX if group_id is None else group_id
        return [e for sample in load_locomo(path) for e in locomo_episodes(sample, prefix=prefix)]
    if fmt == "longmemeval":
        prefix = LME_PREFIX if group_id is None else group_id
        return [e for question in load_longmemeval(path)
                for e in lme_episodes(question, prefix=prefix, assistant_turns=True)]
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
