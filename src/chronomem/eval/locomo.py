"""LoCoMo (Maharana et al., ACL 2024): long two-person conversations with evidence-annotated questions.

Categories (checked against the official evaluation code; several public harnesses get them wrong):
1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial. Evidence strings are cleaned:
split on ``;`` and whitespace, the known typos fixed, ids that name no turn dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chronomem.eval.loaders import read_json

__all__ = [
    "CATEGORY_NAMES",
    "LocomoQuestion",
    "LocomoSample",
    "LocomoTurn",
    "clean_evidence",
    "load_locomo",
    "parse_locomo_date",
]

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
