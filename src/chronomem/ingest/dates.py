"""Dates from model answers and episode text, resolved against the episode's reference time (docs/design.md §1).

The model is asked for ISO 8601; models do not always comply, so this also accepts a date without a
time or zone (read as UTC midnight), a bare year, and any expression :mod:`chronomem.text.timeparse`
reads ("tomorrow", "next Thursday", "in three days", "the week after next", "two weeks ago", "last
summer", "in March", "8 May 2023"), resolved against the reference time. When the model gives no
date at all, :func:`date_in_text` dates the fact from the words of its quote. Anything else is
``None``: an unreadable date is dropped, never guessed.

Resolution is to the day (midnight UTC), the precision such phrases carry. A bare expression ("in
March", "on Friday", "the summer") means the next one in a sentence about plans ("will", "going to",
"next", ...) and the latest one otherwise.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from datetime import UTC, datetime

from chronomem.ingest.grounding import is_named
from chronomem.text.timeparse import Lean, parse_time
from chronomem.text.words import LETTERS

__all__ = ["date_in_text", "lean_of", "only_date_in", "own_clause_date", "parse_model_datetime", "resolve_relative"]

_FUTURE = re.compile(
    r"\b(?:will|won't|shall|going\s+to|gonna|about\s+to|plan(?:s|ned|ning)?\s+to|intend(?:s)?\s+to|"
    r"upcoming|next|tomorrow|soon|looking\s+forward|can't\s+wait|scheduled|in\s+\w+\s+(?:days?|weeks?|months?|years?))\b"
    # what is rescheduled has not happened yet: "pushed back to the 23rd", "moved it to Thursday"
    r"|\b(?:(?:re-?scheduled|postponed|delayed|bumped)(?:\s+\w+){0,3}|(?:pushed|put)(?:\s+\w+){0,3}\s+back|"
    r"brought(?:\s+\w+){0,3}\s+forward|moved(?:\s+\w+){0,3})\s+(?:to|until|till)\s+(?:the\s+[0-3]?\d(?:st|nd|rd|th)\b|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day\b)"
    r"|'ll\b",
    re.IGNORECASE,
)


# The present progressive with a time is an arrangement, in the future ("I'm flying out on Friday",
# "we're moving in March") unless the sentence says it is over ("what happened on Friday").
_ARRANGEMENT = re.compile(
    r"\b(?:am|are|is|'m|'re|'s)\s+(?:(?:also|still|just|not|\w+ly)\s+)?(?P<verb>\w{2,}ing)\b", re.IGNORECASE)
_NOT_A_VERB = frozenset({"amazing", "interesting", "boring", "exciting", "annoying", "charming", "confusing",
                         "surprising", "disappointing", "relaxing", "tiring", "frightening", "embarrassing",
                         "fascinating", "satisfying", "refreshing", "depressing", "encouraging", "overwhelming",
                         "spring", "morning", "evening", "king", "ring", "wedding", "building", "ceiling",
                         "missing", "during", "pending", "outstanding", "willing", "lacking"})
_OVER = re.compile(r"\b(?:was|were|did|had|happened|ago|last|yesterday)\b", re.IGNORECASE)


def lean_of(text: str) -> Lean:
    """Whether a sentence speaks of the future (a plan, an arrangement) or of the past and present."""
    if _FUTURE.search(text):
        return "future"
    arranged = any(m["verb"].lower() not in _NOT_A_VERB and not m["verb"].lower().endswith("thing")
                   for m in _ARRANGEMENT.finditer(text))
    return "future" if arranged and not _OVER.search(text) else "past"


def resolve_relative(
    text: str, reference: datetime, *, lean: Lean | None = None, phrase: bool = False
) -> datetime | None:
    """The day the first time expression in ``text`` names, seen from ``reference``; ``None`` if none.
    ``lean``: whether a bare expression means the next one (default: what ``text`` says, :func:`lean_of`);
    ``phrase``: ``text`` is a date on its own, as a model answers one ("Christmas", "Friday", "now")."""
    parsed = parse_time(text, reference, lean=lean or lean_of(text), phrase=phrase)
    if not parsed.windows:
        return None
    moment = parsed.windows[0].moment
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def date_in_text(text: str | None, reference: datetime) -> datetime | None:
    """The date a quote states, for a fact the model left undated (``None`` if it states none),
    read as its own clause reads it: "January 12" in "I left St. Agnes on January 12 and start at
    Kingsbridge next month" is the past one, as :func:`parse_model_datetime` reads a model's date."""
    if not text:
        return None
    parsed = parse_time(text, reference, lean=lean_of(text))
    if not parsed.windows:
        return None
    phrase = parsed.windows[0].text
    clause = _clause_of(phrase, text)
    # a clause that is the date alone ("I'll be in Paris, on January 12") says nothing of its own
    said = LETTERS.findall(clause.lower().replace(phrase.lower(), " "))
    alone = all(word in _LINKING for word in said)
    return resolve_relative(text, reference, lean=lean_of(text if alone else clause))


def only_date_in(sentence: str, reference: datetime, names: Sequence[str] = ()) -> datetime | None:
    """The day ``sentence`` names, when it names exactly one ("I started at Globex last Monday");
    ``None`` when it names none. Of a sentence that names several, the one of the clauses that name
    one of ``names`` (a fact's entities), when those name exactly one: "July 18 is my last day at
    Westcombe, and on September 1 I start at Kingsmead" starts Kingsmead on September 1. Else
    ``None``: which day a fact means is then the model's call."""
    parsed = parse_time(sentence, reference, lean=lean_of(sentence))
    if len(parsed.windows) == 1:
        return parsed.windows[0].moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if not parsed.windows or not names:
        return None
    own = " ".join(c for c in _clauses(sentence) if any(is_named(name, [c]) for name in names))
    stated = parse_time(own, reference, lean=lean_of(own)).windows if own else ()
    if len(stated) != 1:
        return None
    return stated[0].moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _parse_iso(value: str) -> datetime | None:
    text = value.strip().replace("z", "Z")
    if re.fullmatch(r"\d{4}", text):
        return datetime(int(text), 1, 1, tzinfo=UTC)
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def parse_model_datetime(value: str | None, reference: datetime, *, context: str | None = None) -> datetime | None:
    """A timezone-aware UTC datetime from a model's date string, or ``None`` when absent or unreadable.

    ``context`` (the quote that states the fact) says whether a bare phrase is a plan: "Friday" in
    "I'm flying out Friday" is the coming one."""
    if value is None:
        return None
    text = str(value).strip()
    if not text or text.lower() in ("null", "none", "unknown", "n/a"):
        return None
    return _parse_iso(text) or resolve_relative(text, reference, lean=lean_of(_clause_of(text, context)), phrase=True)


# where one clause of a sentence ends and the next begins: "I left on January 12 | and start next month"
# (a full stop after a title or an initial, "St. Agnes", "Dr. Keller", "J. Smith", ends none)
_CLAUSE_BREAK = re.compile(
    r"[,;:!?]|(?<!\b[A-Z])(?<!\b[A-Z][a-z])(?<!\bMrs)\.|(?i:\b(?:and|but|so|then|while|because|though|although)\b)")


_LINKING = frozenset({"on", "in", "at", "by", "from", "since", "until", "till", "the", "of", "and", "but", "so",
                      "then"})


def _clause_of(phrase: str, context: str | None) -> str:
    """The clause of ``context`` that holds ``phrase``, which says whether the phrase is a plan: in "I
    left St. Agnes on January 12 and start at Kingsbridge next month", January 12 is the past one.
    Without the phrase in the context, the whole context with the phrase."""
    if context:
        found = context.lower().find(phrase.lower())
        if found >= 0:
            breaks = [m.start() for m in _CLAUSE_BREAK.finditer(context)]
            start = max((b for b in breaks if b < found), default=0)
            end = min((b for b in breaks if b >= found + len(phrase)), default=len(context))
            return context[start:end]
    return f"{context or ''} {phrase}"


def own_clause_date(
    valid_at: datetime, quote: str, names: Sequence[str], message: str, reference: datetime
) -> datetime:
    """``valid_at`` as the model gave it, unless it is a date another clause of the message states
    while the fact's own clause states one of its own; then that one.

    A small model dates every fact of a message with the first date it reads: "I left St. Agnes on
    January 12 and start at Kingsbridge next month" gave the new job January 12. The fact's own
    clause is the clause of its quote that names one of ``names`` (its entities), or the whole quote
    when none does; a year it names ("since 2019") counts, a day another clause names, read without
    its year (a model may put the wrong one), is the telltale."""
    clauses = _clauses(quote)
    own = " ".join(c for c in clauses if any(is_named(name, [c]) for name in names)) or quote
    stated = parse_time(own, reference, lean=lean_of(own)).windows
    if len(stated) != 1:
        return valid_at
    day = stated[0].moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if day.date() == valid_at.date():
        return valid_at
    elsewhere = [w for w in parse_time(message, reference, lean=lean_of(message)).windows
                 if w.text.lower() not in own.lower()]
    if any((w.moment.month, w.moment.day) == (valid_at.month, valid_at.day) for w in elsewhere):
        return day
    return valid_at


def _clauses(text: str) -> list[str]:
    """``text`` cut where one clause ends and the next begins (:data:`_CLAUSE_BREAK`)."""
    cuts = [0, *(m.start() for m in _CLAUSE_BREAK.finditer(text)), len(text)]
    return [piece for a, b in itertools.pairwise(cuts) if (piece := text[a:b].strip(" ,;:.!?"))]
