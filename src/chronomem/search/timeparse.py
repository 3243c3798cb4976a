"""Time expressions in a query, resolved against a given "now" without an LLM.

``parse_time(query, now)`` finds dates and relative expressions — "in 2022", "last May",
"8 May 2023", "two weeks ago", "last weekend", "the past 3 months", "last summer", "tomorrow",
"next Thursday", "in three days", "the week after next" — and turns each into a half-open UTC window
``[start, end)``, with the day it names (``point``: "two weeks ago" is a day, its window is wider).
Bare expressions ("in March", "on Friday", "the summer") lean to the past by default, as questions
about memories do; ``lean="future"`` takes the next one (ingestion passes it for a sentence about
plans). Expressions anchored on an event ("two weeks before the
trip") cannot be dated from the text alone: they come back as an :class:`AnchoredOffset` (offset +
anchor phrase) for the searcher to resolve against the best hit for the anchor.

Pure: no I/O, no clock — "now" is always given (for benchmarks, the question's date).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from chronomem.timeutil import ensure_utc

__all__ = ["AnchoredOffset", "Lean", "ParsedTime", "TimeWindow", "parse_time", "strip_time"]

Lean = Literal["past", "future"]
"""Which occurrence a bare expression ("in March", "on Friday") means: the latest one or the next one."""


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """``start <= t < end`` in UTC; ``text`` is the expression it came from."""

    start: datetime
    end: datetime
    text: str
    point: datetime | None = None  # the day the expression names, when narrower than the window

    @property
    def moment(self) -> datetime:
        """The one instant to date an event by: ``point``, else the window's start."""
        return self.point or self.start

    def contains(self, value: datetime | None) -> bool:
        return value is not None and self.start <= value < self.end

    def overlaps(self, start: datetime | None, end: datetime | None) -> bool:
        """Does ``[start, end)`` (open where None) meet this window?"""
        return (start is None or start < self.end) and (end is None or self.start < end)


@dataclass(frozen=True, slots=True)
class AnchoredOffset:
    """"<amount> before/after <anchor>": ``offset`` is signed (before = negative)."""

    offset: timedelta
    anchor: str
    text: str
    tolerance: timedelta

    def window_around(self, anchor_time: datetime) -> TimeWindow:
        centre = anchor_time + self.offset
        return TimeWindow(centre - self.tolerance, centre + self.tolerance, self.text)


@dataclass(frozen=True, slots=True)
class ParsedTime:
    windows: tuple[TimeWindow, ...] = ()
    anchored: tuple[AnchoredOffset, ...] = ()
    remainder: str = ""  # the query without the time expressions

    def __bool__(self) -> bool:
        return bool(self.windows or self.anchored)

    def contains(self, value: datetime | None) -> bool:
        """Inside any of the windows."""
        return any(w.contains(value) for w in self.windows)


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAYS) + r")"
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3,
    "couple of": 2, "few": 3, "several": 3,
}
_AMOUNT = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + r")"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_SEASON = r"(?P<season>spring|summer|autumn|fall|winter)"


def _amount(text: str) -> int:
    text = text.lower()
    return int(text) if text.isdigit() else _NUMBERS[text]


def _add_months(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day)


def _day_start(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _day(year: int, month: int, day: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, day, tzinfo=UTC)
    return start, start + timedelta(days=1)


def _month(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    return start, _add_months(start, 1)


def _year(year: int) -> tuple[datetime, datetime]:
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


def _week_of(moment: datetime) -> tuple[datetime, datetime]:
    start = _day_start(moment) - timedelta(days=moment.weekday())  # weeks start on Monday
    return start, start + timedelta(days=7)


def _shift(now: datetime, unit: str, amount: int) -> datetime:
    if unit == "day":
        return now + timedelta(days=amount)
    if unit == "week":
        return now + timedelta(weeks=amount)
    if unit == "month":
        return _add_months(now, amount)
    return _add_months(now, 12 * amount)


def _unit_window(moment: datetime, unit: str) -> tuple[datetime, datetime]:
    """The calendar day, week, month or year holding ``moment``."""
    if unit == "day":
        return _day(moment.year, moment.month, moment.day)
    if unit == "week":
        return _week_of(moment)
    if unit == "month":
        return _month(moment.year, moment.month)
    return _year(moment.year)


# -- rules: (pattern, resolver(match, now) -> window | None) ----------------------------------------


def _explicit_day(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime] | None:
    year = int(m["year"]) if m["year"] else now.year
    try:
        window = _day(year, _MONTHS[m["month"].lower()], int(m["day"]))
        if not m["year"] and lean == "future" and window[1] <= _day_start(now):
            window = _day(year + 1, _MONTHS[m["month"].lower()], int(m["day"]))  # "on January 5", said in December
    except ValueError:
        return None
    return window


def _iso_day(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime] | None:
    try:
        return _day(int(m["year"]), int(m["mon"]), int(m["day"]))
    except ValueError:
        return None


def _month_year(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    return _month(int(m["year"]), _MONTHS[m["month"].lower()])


def _relative_month(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"last May" is the latest May before this month; "next May" the first after; bare "May" the
    latest May up to and including this month."""
    month = _MONTHS[m["month"].lower()]
    which = (m["which"] or "").lower()
    year = now.year
    if which == "next":
        year += 1 if month <= now.month else 0
    elif which == "last":
        year -= 1 if month >= now.month else 0
    elif which != "this" and lean == "future":
        year += 1 if month < now.month else 0  # "in March", said of a plan: the next March
    elif which != "this":
        year -= 1 if month > now.month else 0
    return _month(year, month)


def _weekday(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"last Friday" / "on Friday": the latest such day before today; "on Friday" leaning to the
    future, the first after; "this Friday" the Friday of this week and "next Friday" that of next week
    (weeks run Monday to Sunday: said on a Wednesday, "next Thursday" is eight days away)."""
    target = _WEEKDAYS[m["weekday"].lower()]
    today = _day_start(now)
    which = (m["which"] or "").lower()
    if which in ("this", "next"):
        start = today + timedelta(days=target - now.weekday() + (7 if which == "next" else 0))
    elif which != "last" and lean == "future":
        ahead = (target - now.weekday()) % 7 or 7
        start = today + timedelta(days=ahead)
    else:
        back = (now.weekday() - target) % 7 or 7
        start = today - timedelta(days=back)
    return start, start + timedelta(days=1)


def _season(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"last summer" is the summer before the latest one begun (or that one, if it is over);
    "next summer" the first still to begin; "this summer" this year's (in January and February,
    "this winter" began in December); a bare "the summer" the latest begun, or leaning to the future
    the current or next one."""
    first_month = _SEASONS[m["season"].lower()]
    which = (m["which"] or "").lower()
    begun = now.year if datetime(now.year, first_month, 1, tzinfo=UTC) <= now else now.year - 1
    ongoing = now < _add_months(datetime(begun, first_month, 1, tzinfo=UTC), 3)
    if m["year"]:
        year = int(m["year"])
    elif which == "this":
        year = now.year - 1 if first_month == 12 and now.month < 3 else now.year
    elif which == "last":
        year = begun - 1 if ongoing else begun
    elif which == "next":
        year = begun + 1
    else:
        year = begun + 1 if lean == "future" and not ongoing else begun
    start = datetime(year, first_month, 1, tzinfo=UTC)
    return start, _add_months(start, 3)


def _ago(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime, datetime]:
    """"two weeks ago": the calendar unit holding that moment, widened by one unit each side; the
    day it names is exactly that long before."""
    return _around(now, m["unit"].lower(), -_amount(m["n"]))


def _ahead(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime, datetime]:
    """"in three days", "two weeks from now": as "ago", forward."""
    return _around(now, m["unit"].lower(), _amount(m["n"]))


def _around(now: datetime, unit: str, amount: int) -> tuple[datetime, datetime, datetime]:
    moment = _shift(now, unit, amount)
    start, end = _unit_window(moment, unit)
    pad = timedelta(days=1) if unit in ("day", "week") else timedelta(days=0)
    return start - pad, end + pad, _day_start(moment)


def _week_after_next(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"the week after next" / "the week before last": two calendar weeks away."""
    return _week_of(now + timedelta(weeks=2 if m["dir"].lower() == "after next" else -2))


def _past_span(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"the past 3 months": from that long ago until the end of today."""
    return _shift(_day_start(now), m["unit"].lower(), -_amount(m["n"])), _day_start(now) + timedelta(days=1)


def _named_span(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    unit = m["unit"].lower()
    which = m["which"].lower()
    step = {"last": -1, "previous": -1, "this": 0, "next": 1}[which]
    return _unit_window(_shift(now, unit, step), unit)


def _weekend(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    which = (m["which"] or "last").lower()
    today = _day_start(now)
    if which in ("this", "next"):  # the weekend of this week, or of next week
        start = today + timedelta(days=5 - now.weekday() + (7 if which == "next" else 0))
    else:  # the latest Saturday strictly before today's weekend began
        start = today - timedelta(days=(now.weekday() - 5) % 7 or 7)
    return start, start + timedelta(days=2)


_DAY_WORDS = {"the day before yesterday": -2, "yesterday": -1, "last night": -1, "today": 0, "tonight": 0,
              "this morning": 0, "this afternoon": 0, "this evening": 0, "tomorrow": 1, "the day after tomorrow": 2}


def _yesterday_today(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    start = _day_start(now) + timedelta(days=_DAY_WORDS[" ".join(m[0].lower().split())])
    return start, start + timedelta(days=1)


def _bare_year(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    return _year(int(m["year"]))


_Window = tuple[datetime, datetime] | tuple[datetime, datetime, datetime]  # start, end[, point]
_Resolver = Callable[[re.Match[str], datetime, Lean], "_Window | None"]
_I = re.IGNORECASE
_RULES: list[tuple[re.Pattern[str], _Resolver]] = [
    (re.compile(rf"\b{_YEAR}[-/](?P<mon>[01]?\d)[-/]{_DAY}\b"), _iso_day),
    (re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH}(?:,?\s+{_YEAR})?\b", _I), _explicit_day),
    (re.compile(rf"\b{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?\b(?!\s*(?:days?|weeks?|months?|years?))", _I), _explicit_day),
    (re.compile(rf"\b{_MONTH}(?:,?\s+of)?,?\s+{_YEAR}\b", _I), _month_year),
    (re.compile(rf"\b(?:(?P<which>last|this|next)\s+|the\s+)?{_SEASON}(?:\s+of\s+{_YEAR})?\b", _I), _season),
    (re.compile(rf"\b(?:(?P<which>last|this|next)\s+|(?:in|during|since)\s+){_MONTH}\b", _I), _relative_month),
    (re.compile(rf"\b(?:(?P<which>last|next|this)\s+|on\s+){_WEEKDAY}\b", _I), _weekday),
    (re.compile(rf"\b{_AMOUNT}\s+{_UNIT}\s+ago\b", _I), _ago),
    (re.compile(rf"\bin\s+{_AMOUNT}\s+{_UNIT}\b", _I), _ahead),
    (re.compile(rf"\b{_AMOUNT}\s+{_UNIT}\s+from\s+(?:now|today)\b", _I), _ahead),
    (re.compile(r"\bthe\s+week\s+(?P<dir>after\s+next|before\s+last)\b", _I), _week_after_next),
    (re.compile(rf"\b(?:the\s+)?(?:past|last|previous)\s+{_AMOUNT}\s+{_UNIT}\b", _I), _past_span),
    (re.compile(rf"\b(?P<which>last|previous|this|next)\s+{_UNIT}\b", _I), _named_span),
    (re.compile(r"\b(?:(?P<which>last|this|next)\s+|the\s+)weekend\b", _I), _weekend),
    (re.compile(r"\b(?:the\s+day\s+(?:before\s+yesterday|after\s+tomorrow)|yesterday|last\s+night|today|"
                r"tonight|this\s+(?:morning|afternoon|evening)|tomorrow)\b", _I), _yesterday_today),
    (re.compile(rf"(?<![\d/-])\b(?:in|during|since|of|from)?\s*{_YEAR}\b(?![\d/-])", _I), _bare_year),
]

_ANCHORED = re.compile(
    rf"\b{_AMOUNT}\s+{_UNIT}\s+(?P<dir>before|after|prior\s+to|following)\s+(?P<anchor>[^?.!,;]+)", _I
)
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def _anchored(query: str) -> tuple[list[AnchoredOffset], list[tuple[int, int]]]:
    found, spans = [], []
    for m in _ANCHORED.finditer(query):
        days = _amount(m["n"]) * _UNIT_DAYS[m["unit"].lower()]
        sign = -1 if m["dir"].lower() in ("before", "prior to") else 1
        anchor = m["anchor"].strip()
        tolerance = timedelta(days=max(1, days // 7))
        found.append(AnchoredOffset(timedelta(days=sign * days), anchor, m[0].strip(), tolerance))
        spans.append(m.span())
    return found, spans


def parse_time(query: str, now: datetime, *, lean: Lean = "past") -> ParsedTime:
    """Every time expression in ``query``, resolved against ``now`` (an aware datetime).

    Rules run from the most specific ("8 May 2023") to the least ("2023"); text matched by one rule
    is not matched again by a later one, so "May 2023" yields one month, not a month and a year.
    """
    now = ensure_utc(now)
    anchored, taken = _anchored(query)
    windows: list[TimeWindow] = []
    for pattern, resolve in _RULES:
        for m in pattern.finditer(query):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            window = resolve(m, now, lean)
            if window is not None:
                point = window[2] if len(window) == 3 else None
                windows.append(TimeWindow(window[0], window[1], m[0].strip(), point))
                taken.append(m.span())
    remainder = query
    for start, end in sorted(taken, reverse=True):
        remainder = remainder[:start] + " " + remainder[end:]
    windows.sort(key=lambda w: query.lower().find(w.text.lower()))
    return ParsedTime(tuple(windows), tuple(anchored), " ".join(remainder.split()))



def strip_time(text: str) -> str:
    """``text`` without its time expressions (any "now" will do: only where they are matters)."""
    return parse_time(text, datetime(2000, 1, 1, tzinfo=UTC)).remainder or text
