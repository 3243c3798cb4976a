"""Which of an episode's entities each sentence names together: the fact call's checklist.

A fact joins two entities that one sentence relates, so the pairs a sentence names are where facts
are to be found. Shown to the model beside the message, they turn "extract every fact" into a list
to work through: a small model that would answer one fact for a sentence stating three (who, where,
for whom) answers one per pair, and a large one loses nothing by the reminder.

- A message's speaker is named by every sentence that says I, me or my.
- A sentence with a pronoun (he, she, they, his, her, their) refers back: it names, besides its own,
  the first entity the sentence before it named, the speaker aside ("My brother Sam moved to Denver.
  He quit Brightway" relates Sam and Brightway).
- Clauses a semicolon joins count as sentences of their own.

Pure functions over strings, like :mod:`chronomem.ingest.grounding`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chronomem.ingest.grounding import REFERS_BACK, is_named, sentences
from chronomem.ingest.voice import FIRST_PERSON

__all__ = ["NamedTogether", "named_together"]


@dataclass(frozen=True, slots=True)
class NamedTogether:
    """Two entities (their names as listed to the model) that sentence ``sentence`` (1 = first) names."""

    first: str
    second: str
    sentence: int


def named_together(
    text: str, names: Sequence[Sequence[str]], speaker: str | None = None, *, limit: int
) -> list[NamedTogether]:
    """The pairs of entities the sentences of ``text`` name together, in reading order, at most ``limit``.

    ``names`` holds each entity's spellings, the name listed to the model first (its aliases after).
    A pair is listed once, at the first sentence that names both.
    """
    listed = [spellings[0] for spellings in names]
    pairs: list[NamedTogether] = []
    seen: set[frozenset[str]] = set()
    subject: str | None = None  # the first entity the sentence before named, the speaker aside
    clauses = [c for sentence in sentences(text) for c in sentence.split(";") if c.strip()]
    for number, clause in enumerate(clauses, start=1):
        here = sorted((name for name, spellings in zip(listed, names, strict=True)
                       if any(is_named(s, [clause]) for s in spellings)),
                      key=lambda name: _position(name, clause))
        if speaker and speaker in listed and speaker not in here and FIRST_PERSON.search(clause):
            here.insert(0, speaker)
        if subject and subject not in here and REFERS_BACK.search(clause):
            here.append(subject)
        for i, first in enumerate(here):
            for second in here[i + 1:]:
                if (key := frozenset((first, second))) not in seen:
                    seen.add(key)
                    pairs.append(NamedTogether(first, second, number))
        subject = next((name for name in here if name != speaker), subject)
    return pairs[:limit]


def _position(name: str, clause: str) -> int:
    """Where in ``clause`` the name's first word stands (its end when it is only an alias that stands)."""
    words = name.split()
    found = clause.lower().find(words[0].lower()) if words else -1
    return found if found >= 0 else len(clause)
