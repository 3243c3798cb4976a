"""LoCoMo (Maharana et al., ACL 2024): long two-person conversations with evidence-annotated questions.

Reading (``load_locomo``). Categories (checked against the official evaluation code; several public
harnesses get them wrong): 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
Evidence strings are cleaned: split on ``;`` and whitespace, the known typos fixed, ids that name no
turn dropped.

The mapping to episodes (``locomo_episodes``), the one ``chronomem import --format locomo`` and the
evaluation harness both use, and the one the published recall figures were measured on: one group
per conversation (``locomo-<sample_id>``), one message episode per turn:

- id ``<group>:<dia_id>``; speaker the turn's speaker, role ``user``;
- content the turn's text, plus ``[shares a photo of <caption>]`` when it shares an image;
- at its session's date plus one second per earlier turn of the session (the turns of a session
  share one date: this keeps their order), ``created_at`` the same;
- ``metadata``: ``unit`` (the dia_id, what the recall metric counts), ``session`` (its number) and
  ``reply_to`` (the id of the session's previous turn, ``None`` for the first).

With ``session_documents``, each session also becomes one text episode (see
:func:`~chronomem.datasets.common.session_document`; no unit of its own), after all the turns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from chronomem.datasets.common import read_json, session_document
from chronomem.domain import Episode, EpisodeKind

__all__ = [
    "CATEGORY_NAMES",
    "LOCOMO_PREFIX",
    "LocomoQuestion",
    "LocomoSample",
    "LocomoTurn",
    "clean_evidence",
    "load_locomo",
    "locomo_episodes",
    "locomo_group",
    "parse_locomo_date",
]

LOCOMO_PREFIX = "locomo-"  # a conversation's group is this prefix and its sample_id

CATEGORY_NAMES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_TYPOS = {"D:11:26": "D11:26", "D30:05": "D30:5"}


@dataclass(frozen=True, slots=True)
class LocomoTurn:
    dia_id: str  # "D<session>:<turn>"
    session: int
    speaker: str
    text: str
    caption: str | None  # what a shared image shows (BLIP caption), when one was shared
    date: datetime  # the session's date and time


@dataclass(frozen=True, slots=True)
class LocomoQuestion:
    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True, slots=True)
class LocomoSample:
    sample_id: str
    turns: tuple[LocomoTurn, ...]
    questions: tuple[LocomoQuestion, ...]

    @property
    def last_date(self) -> datetime:
        """When the conversation ends: the "now" its questions are asked at."""
        return max(t.date for t in self.turns)


def parse_locomo_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → an aware UTC datetime."""
    return datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def clean_evidence(raw: list[str], known_ids: set[str]) -> tuple[str, ...]:
    ids: list[str] = []
    for item in raw:
        for part in re.split(r"[;\s]+", item.strip()):
            part = _TYPOS.get(part, part)
            if part in known_ids and part not in ids:
                ids.append(part)
    return tuple(ids)


def _turns(conversation: dict[str, Any]) -> list[LocomoTurn]:
    turns = []
    sessions = sorted(int(m[1]) for key in conversation if (m := _SESSION_KEY.match(key)))
    for number in sessions:
        date = parse_locomo_date(conversation[f"session_{number}_date_time"])
        for turn in conversation[f"session_{number}"]:
            turns.append(
                LocomoTurn(
                    dia_id=turn["dia_id"], session=number, speaker=turn["speaker"], text=turn.get("text", ""),
                    caption=turn.get("blip_caption"), date=date,
                )
            )
    return turns


def load_locomo(path: str | Path) -> list[LocomoSample]:
    """Every sample of a LoCoMo file (``locomo10.json`` or any file in its format, maybe gzipped)."""
    samples = []
    for raw in read_json(path):
        turns = _turns(raw["conversation"])
        known = {t.dia_id for t in turns}
        questions = tuple(
            LocomoQuestion(
                question=q["question"],
                answer=str(q.get("answer", q.get("adversarial_answer", ""))),
                evidence=clean_evidence(q.get("evidence", []), known),
                category=int(q["category"]),
            )
            for q in raw["qa"]
        )
        samples.append(LocomoSample(str(raw["sample_id"]), tuple(turns), questions))
    return samples


# -- the mapping to episodes ------------------------------------------------------------------------


def locomo_group(sample: LocomoSample, prefix: str = LOCOMO_PREFIX) -> str:
    return f"{prefix}{sample.sample_id}"


def _content(turn: LocomoTurn) -> str:
    return turn.text + (f" [shares a photo of {turn.caption}]" if turn.caption else "")


def locomo_episodes(
    sample: LocomoSample, *, prefix: str = LOCOMO_PREFIX, session_documents: bool = False
) -> list[Episode]:
    """The conversation's turns as message episodes, in order (see the module docstring); with
    ``session_documents``, each session as one text episode after them."""
    group = locomo_group(sample, prefix)
    episodes: list[Episode] = []
    sessions: dict[int, list[str]] = {}  # session -> its lines so far ("speaker: content")
    previous: dict[int, str] = {}  # session -> id of its latest turn, what the next turn replies to
    for turn in sample.turns:
        lines = sessions.setdefault(turn.session, [])
        when = turn.date + timedelta(seconds=len(lines))  # turns of a session share its date: keep their order
        episode = Episode(
            id=f"{group}:{turn.dia_id}", group_id=group, kind=EpisodeKind.MESSAGE, content=_content(turn),
            speaker=turn.speaker, role="user", reference_time=when, created_at=when,
            source_description=f"LoCoMo session {turn.session}",
            metadata={"unit": turn.dia_id, "session": turn.session, "reply_to": previous.get(turn.session)},
        )
        episodes.append(episode)
        previous[turn.session] = episode.id
        lines.append(f"{turn.speaker}: {episode.content}")
    if session_documents:
        first = {t.session: t.date for t in reversed(sample.turns)}
        for number, lines in sessions.items():
            episodes.append(session_document(group, f"LoCoMo session {number}", str(number), first[number], lines))
    return episodes
