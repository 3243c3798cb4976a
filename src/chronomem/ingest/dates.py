"""Dates from model answers, resolved against the episode's reference time (DESIGN §1).

The model is asked for ISO 8601; models do not always comply, so this also accepts a date without a
time or zone (read as UTC midnight), a bare year, and the common relative phrases ("two weeks ago",
"yesterday", "last year"), which it resolves against the reference time. Anything else is ``None``:
an unparseable date is dropped, never guessed.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = ["parse_model_datetime", "resolve_relative"]

_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3,
}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_AGO = re.compile(
    r"\b(\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+"
    r"(day|week|month|year)s?\s+ago\b",
    re.IGNORECASE,
)
_LAST = re.compile(r"\blast\s+(week|month|year|summer|winter|spring|fall|autumn|weekend|night)\b", re.IGNORECASE)
_SEASON_MONTH = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _months_back(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 - months
    return moment.replace(year=index // 12, month=index % 12 + 1, day=1)


def _last(unit: str, reference: datetime) -> datetime:
    unit = unit.lower()
    if unit in ("week", "weekend"):
        return _midnight(reference - timedelta(days=7))
    if unit == "night":
        return _midnight(reference - timedelta(days=1))
    if unit == "month":
        return _midnight(_months_back(reference, 1))
    if unit == "year":
        return _midnight(reference.replace(year=reference.year - 1, month=1, day=1))
    month = _SEASON_MONTH[unit]  # the most recent such season that has started
    year = reference.year if reference.month > month else reference.year - 1
    return datetime(year, month, 1, tzinfo=UTC)


def resolve_relative(text: str, reference: datetime) -> datetime | None:
    """The date a relative phrase in ``text`` points at, seen from ``reference``; ``None`` if none.

    Resolution is to the day (midnight UTC), the precision such phrases carry.
    """
    lowered = text.lower()
    if match := _AGO.search(lowered):
        count_text, unit = match.group(1), match.group(2)
        count = int(count_text) if count_text.isdigit() else _NUMBERS[count_text]
        if unit == "month":
            return _midnight(_months_back(reference, count).replace(day=min(reference.day, 28)))
        return _midnight(reference - timedelta(days=count * _UNIT_DAYS[unit]))
    if re.search(r"\byesterday\b", lowered):
        return _midnight(reference - timedelta(days=1))
    if re.search(r"\b(today|tonight|this morning)\b", lowered):
        return _midnight(reference)
    if match := _LAST.search(lowered):
        return _last(match.group(1), reference)
    return None


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


def parse_model_datetime(value: str | None, reference: datetime) -> datetime | None:
    """A timezone-aware UTC datetime from a model's date string, or ``None`` when absent or unreadable."""
    if value is None:
        return None
    text = str(value).strip()
    if not text or text.lower() in ("null", "none", "unknown", "n/a"):
        return None
    return _parse_iso(text) or resolve_relative(text, reference)
