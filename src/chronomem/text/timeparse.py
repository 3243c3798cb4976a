"""Time expressions in a query, resolved against a given "now" without an LLM.

``parse_time(query, now)`` finds dates and relative expressions — "in 2022", "last May",
"8 May 2023", "two weeks ago", "last weekend", "the past 3 months", "last summer", "tomorrow",
"next Thursday", "in three days", "the week after next", "a fortnight ago", "in 2 hrs", "mid-March",
"the end of next month", "Q3", "last Christmas", "Thanksgiving", "the 2010s", "13/02/2024" — and
turns each into a half-open UTC window ``[start, end)``, with the day it names (``point``: "two
weeks ago" is a day, its window is wider; "mid-March" the 15th of its month). A numeric date that
reads both ways ("04/02/2024") is none: it is never guessed.
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
_WEEKDAYS |= {name.lower(): i for i, name in enumerate(calendar.day_abbr)}  # "next Tue", "on Fri"
_WEEKDAYS |= {"tues": 1, "weds": 2, "thur": 3, "thurs": 3}
_WEEKDAY = r"(?P<weekday>" + "|".join(sorted(_WEEKDAYS, key=len, reverse=True)) + r")\b"
_WEEKDAY_PLURAL = r"(?P<weekday>" + "|".join(name.lower() for name in calendar.day_name) + r")s"
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3,
    "couple of": 2, "few": 3, "several": 3,
}


def _amount_of(group: str) -> str:
    return rf"(?P<{group}>\d{{1,3}}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + r")"


_AMOUNT = _amount_of("n")
# A unit as written, and what it is: a fortnight is two weeks; "hrs", "mins", "wks", "mos", "yrs".
_UNIT_WORDS = {"day": ("day", 1), "week": ("week", 1), "wk": ("week", 1), "fortnight": ("week", 2),
               "month": ("month", 1), "mo": ("month", 1), "quarter": ("quarter", 1), "year": ("year", 1),
               "yr": ("year", 1), "hour": ("hour", 1), "hr": ("hour", 1), "minute": ("minute", 1),
               "min": ("minute", 1)}
_UNIT = r"(?P<unit>" + "|".join(sorted(_UNIT_WORDS, key=len, reverse=True)) + r")s?\b"
_CALENDAR_UNIT = r"(?P<unit>day|week|month|quarter|year)s?"  # "this month", "the end of the quarter"
# "in 30 minutes" and "in an hour" in running text are more often how long than when ("a recipe I
# can make in 30 minutes"): ahead, hours and minutes date only a phrase on its own
_DATE_UNIT = r"(?P<unit>" + "|".join(sorted((w for w, (u, _) in _UNIT_WORDS.items() if u not in ("hour", "minute")),
                                            key=len, reverse=True)) + r")s?\b"


def _halves(unit: str) -> str:
    """"half a <unit>", "<n> <unit> and a half", "<n> and a half <unit>"."""
    return rf"(?:(?P<half>half)\s+an?|{_AMOUNT}(?P<h1>\s+and\s+a\s+half)?)\s+{unit}(?P<h2>\s+and\s+a\s+half)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_ORDINAL_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)"
# words that may follow a day of the month ("on the 15th at noon"); any other lower-case word is
# the noun the ordinal counts ("on the 15th floor")
_AFTER_A_DAY = ("(?:of|at|in|on|by|and|or|then|we|i|you|he|she|they|it|is|was|will|too|so|when|before|after|"
                "around|from|until|till|for|with|but|if|because)")
# the words that put a day of the month after them ("on the 15th", "moved to the 23rd"), and those
# that join the two days of a range ("the 3rd to the 7th", "3-7")
_BEFORE_A_DAY = r"(?:on|to|until|till|by|from|since|before|after|for)"
_UNTIL = r"(?:-|–|to|until|till|through|thru)"
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_SEASON = r"(?P<season>spring|summer|autumn|fall|winter)"


def _amount(text: str) -> int:
    text = text.lower()
    return int(text) if text.isdigit() else _NUMBERS[" ".join(text.split())]


def _span(m: re.Match[str]) -> tuple[str, int]:
    """The unit and signed-less amount of "<amount> <unit>": "a fortnight" is ("week", 2)."""
    unit, times = _UNIT_WORDS[m["unit"].lower()]
    return unit, _amount(m["n"]) * times


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
    if unit in ("minute", "hour", "day", "week"):
        return now + timedelta(**{f"{unit}s": amount})
    return _add_months(now, amount * {"month": 1, "quarter": 3, "year": 12}[unit])


def _quarter(year: int, quarter: int) -> tuple[datetime, datetime]:
    start = datetime(year, 3 * quarter - 2, 1, tzinfo=UTC)
    return start, _add_months(start, 3)


def _unit_window(moment: datetime, unit: str) -> tuple[datetime, datetime]:
    """The calendar day, week, month, quarter or year holding ``moment`` (for an hour or a minute:
    its day, the precision a date has here)."""
    if unit in ("minute", "hour", "day"):
        return _day(moment.year, moment.month, moment.day)
    if unit == "week":
        return _week_of(moment)
    if unit == "month":
        return _month(moment.year, moment.month)
    if unit == "quarter":
        return _quarter(moment.year, (moment.month + 2) // 3)
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


# What the words before a weekday say of which one it is: the latest before today, the first after
# it, this week's or next week's.
_WEEKDAY_WHICH = {"last": "latest", "previous": "latest", "the previous": "latest", "this past": "latest",
                  "past": "latest", "since": "latest", "this coming": "upcoming", "coming": "upcoming",
                  "by": "upcoming", "until": "upcoming", "till": "upcoming", "before": "upcoming",
                  "this": "this", "next": "next", "on": "", "": ""}
_WEEKDAY_WORDS = "|".join(w.replace(" ", r"\s+") for w in sorted(_WEEKDAY_WHICH, key=len, reverse=True) if w)


def _weekday_from(target: int, which: str, now: datetime, lean: Lean) -> datetime:
    today = _day_start(now)
    if which in ("this", "next"):
        return today + timedelta(days=target - now.weekday() + (7 if which == "next" else 0))
    if which == "upcoming" or (which == "" and lean == "future"):
        return today + timedelta(days=(target - now.weekday()) % 7 or 7)
    return today - timedelta(days=(now.weekday() - target) % 7 or 7)


def _weekday(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"last Friday" / "on Friday": the latest such day before today; "on Friday" leaning to the
    future, the first after; "this Friday" the Friday of this week and "next Friday" that of next week
    (weeks run Monday to Sunday: said on a Wednesday, "next Thursday" is eight days away); "this
    coming Friday", "by Friday" the first after today, "this past Friday", "since Friday" the latest
    before it."""
    which = _WEEKDAY_WHICH[" ".join(m["which"].lower().split())]
    start = _weekday_from(_WEEKDAYS[m["weekday"].lower()], which, now, lean)
    return start, start + timedelta(days=1)


def _weekday_of_week(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"Tuesday next week", "last week's Friday": that weekday of the calendar week named."""
    step = {"last": -1, "previous": -1, "this": 0, "next": 1}[m["which"].lower()]
    start = _week_of(now + timedelta(weeks=step))[0] + timedelta(days=_WEEKDAYS[m["weekday"].lower()])
    return start, start + timedelta(days=1)


def _day_of_month(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime] | None:
    """"on the 15th": the latest 15th up to today, or leaning to the future the next from today; "the
    3rd of next month" that month's. A month without the day ("the 31st" in April) is skipped."""
    day = int(m["day"])
    if not 1 <= day <= 31:
        return None
    which = (m["which"] or "").lower()
    if which:
        month = _add_months(now.replace(day=1), {"last": -1, "this": 0, "next": 1}[which])
        return _day(month.year, month.month, day) if day <= calendar.monthrange(month.year, month.month)[1] else None
    step = 1 if lean == "future" else -1
    month = now.replace(day=1)
    for _ in range(13):
        if day <= calendar.monthrange(month.year, month.month)[1]:
            candidate = datetime(month.year, month.month, day, tzinfo=UTC)
            if (candidate >= _day_start(now)) if lean == "future" else (candidate <= now):
                return candidate, candidate + timedelta(days=1)
        month = _add_months(month, step)
    return None


def _weekday_and_day(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime] | None:
    """"Thursday the 23rd": the 23rd nearest to now that falls on a Thursday (within a year), else the
    23rd the lean points to, as "on the 23rd" would be read."""
    day, weekday = int(m["day"]), _WEEKDAYS[m["weekday"].lower()]
    if not 1 <= day <= 31:
        return None
    today = _day_start(now)
    candidates = []
    for step in range(-12, 13):
        month = _add_months(today.replace(day=1), step)
        if day <= calendar.monthrange(month.year, month.month)[1]:
            candidate = month.replace(day=day)
            if candidate.weekday() == weekday:
                candidates.append(candidate)
    if not candidates:
        return _day_of_month(m, now, lean)
    # of two at the same distance, the one the sentence leans to
    nearest = min(candidates, key=lambda c: (abs(c - today), (c < today) == (lean == "future")))
    return nearest, nearest + timedelta(days=1)


def _day_range(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime] | None:
    """"the 3rd to the 7th of November", "November 3-7": from the first day to the end of the last,
    both of the month named once."""
    last = _explicit_day(m, now, lean)
    if last is None:
        return None
    try:
        first = last[0].replace(day=int(m["first"]))
    except ValueError:
        return None
    return (first, last[1]) if first < last[1] else None


def _weeks_from_weekday(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"a week from Friday": a week after the coming Friday ("a week from next Friday": after next's)."""
    which = {"this": "this", "next": "next"}.get((m["which"] or "").lower(), "upcoming")
    start = _weekday_from(_WEEKDAYS[m["weekday"].lower()], which, now, lean) + timedelta(weeks=_amount(m["weeks"]))
    return start, start + timedelta(days=1)


def _weekday_after_next(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"Friday after next": a week after next Friday."""
    start = _weekday_from(_WEEKDAYS[m["weekday"].lower()], "next", now, lean) + timedelta(weeks=1)
    return start, start + timedelta(days=1)


def _weekdays_ago(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"two Mondays ago": the Monday a week before last Monday."""
    start = _weekday_from(_WEEKDAYS[m["weekday"].lower()], "latest", now, lean) - timedelta(weeks=_amount(m["n"]) - 1)
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
    """"two weeks ago": the calendar unit holding that moment, widened by a day each side for days
    and weeks; the day it names is exactly that long before."""
    unit, amount = _span(m)
    return _around(now, unit, -amount)


def _ahead(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime, datetime]:
    """"in three days", "two weeks from now": as "ago", forward."""
    unit, amount = _span(m)
    return _around(now, unit, amount)


# "half a year" is six months, "a year and a half" eighteen: the half of each unit in a smaller one
_HALF = {"year": ("month", 6), "quarter": ("week", 6), "month": ("day", 15), "week": ("hour", 84),
         "day": ("hour", 12), "hour": ("minute", 30), "minute": ("minute", 0)}


def _half(m: re.Match[str], now: datetime, sign: int) -> tuple[datetime, datetime, datetime] | None:
    """"half a year", "a year and a half", "two and a half weeks", ``sign`` units away: the units and
    the half of one in a smaller unit; the day it names, in the window of that smaller unit."""
    if not (m["half"] or m["h1"] or m["h2"]):
        return None  # no half: "two years ago" is the rule after
    unit = _UNIT_WORDS[m["unit"].lower()][0]
    whole = 0 if m["half"] else _span(m)[1]
    smaller, half = _HALF[unit]
    moment = _shift(_shift(now, unit, sign * whole), smaller, sign * half)
    start, end = _unit_window(moment, smaller)
    return start, end, _day_start(moment)


def _half_ago(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime, datetime] | None:
    return _half(m, now, -1)


def _half_ahead(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime, datetime] | None:
    return _half(m, now, 1)


def _around(now: datetime, unit: str, amount: int) -> tuple[datetime, datetime, datetime]:
    moment = _shift(now, unit, amount)
    start, end = _unit_window(moment, unit)
    pad = timedelta(days=1) if unit in ("day", "week") else timedelta(days=0)
    return start - pad, end + pad, _day_start(moment)


def _after_next(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"the week after next" / "the month before last": two calendar weeks, months or years away."""
    unit = m["unit"].lower()
    return _unit_window(_shift(now, unit, 2 if " ".join(m["dir"].lower().split()) == "after next" else -2), unit)


def _past_span(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"the past 3 months": from that long ago until the end of today."""
    unit, amount = _span(m)
    return _shift(_day_start(now), unit, -amount), _day_start(now) + timedelta(days=1)


# "my last day", "the last week of October", "the next day": a possessive or "the" before, or "of"
# after, makes "last day" the final one of something and "next day" the one after a story's event
_NOT_FROM_NOW_BEFORE = re.compile(r"(?:\b(?:my|your|his|her|its|our|their)|['’]s)\s+$", re.IGNORECASE)
_THE_BEFORE = re.compile(r"\bthe\s+$", re.IGNORECASE)
_OF_AFTER = re.compile(r"\s+of\b", re.IGNORECASE)


def _named_span(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime] | None:
    """"last week", "next month": that calendar unit, counted from now."""
    before, after = m.string[:m.start()], m.string[m.end():]
    if _NOT_FROM_NOW_BEFORE.search(before) or _OF_AFTER.match(after):
        return None
    if m["unit"].lower() == "day" and _THE_BEFORE.search(before):
        return None
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
              "this morning": 0, "this afternoon": 0, "this evening": 0, "tomorrow": 1, "the day after tomorrow": 2,
              "effective immediately": 0, "with immediate effect": 0}  # an announcement's own day


def _yesterday_today(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    start = _day_start(now) + timedelta(days=_DAY_WORDS[" ".join(m[0].lower().split())])
    return start, start + timedelta(days=1)


def _bare_year(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    return _year(int(m["year"]))


def _which_year(which: str, lean: Lean, now: datetime, start_in: Callable[[int], datetime],
                end_in: Callable[[int], datetime]) -> int:
    """The year of an occurrence that comes once a year ("Q3", "Christmas"), whose start and end in
    a year are given: "last" the latest ended, "next" the first not begun, "this" this year's; bare,
    the latest begun (or, leaning to the future, the first not ended)."""
    year = now.year
    if which == "this":
        return year
    if which == "last":
        return year if end_in(year) <= now else year - 1
    if which == "next":
        return year if start_in(year) > now else year + 1
    if lean == "future":
        return year if end_in(year) > now else year + 1
    return year if start_in(year) <= now else year - 1


_PARTS = {"start": 1, "beginning": 1, "early": 1, "mid": 15, "middle": 15, "late": 21}  # the day each names


def _month_part(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime, datetime]:
    """"mid-March", "the end of May", "early June 2023": the month (as "in March" picks it), and the
    day: the 1st for its start, the 15th for its middle, the 21st (its last third) when late, its last
    day for its end."""
    start, end = (_month_year(m, now, lean) if m["year"] else _relative_month(m, now, lean))
    part = m["part"].lower()
    point = end - timedelta(days=1) if part == "end" else start.replace(day=_PARTS[part])
    return start, end, point


_EO_UNITS = {"d": "day", "w": "week", "m": "month", "q": "quarter", "y": "year"}


def _unit_edge(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime, datetime]:
    """"the end of the month", "the start of next week", "end of year", "EOY": that calendar unit,
    and its first or last day (the middle's for "the middle of"). Not "the end of the day", an idiom
    more often than a time ("EOD" is one: today)."""
    if m["abbr"]:  # "EOM": the end of this month
        unit, step, edge = _EO_UNITS[m["abbr"][2].lower()], 0, "end"
    else:
        unit, edge = m["unit"].lower(), m["edge"].lower()
        step = {"last": -1, "previous": -1, "next": 1}.get((m["which"] or "").lower(), 0)
    start, end = _unit_window(_shift(now, unit, step), unit)
    if edge == "end":
        point = end - timedelta(days=1)
    elif edge == "middle":
        point = _day_start(start + (end - start) / 2)
    else:
        point = start
    return start, end, point


_ORDINAL_QUARTERS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}


def _quarter_named(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"Q3", "Q3 2024", "the third quarter", "last Q4": a calendar quarter."""
    quarter = int(m["q"]) if m["q"] else _ORDINAL_QUARTERS[m["ord"].lower()]
    if m["year"]:
        return _quarter(int(m["year"]), quarter)
    year = _which_year((m["which"] or "").lower(), lean, now, lambda y: _quarter(y, quarter)[0],
                       lambda y: _quarter(y, quarter)[1])
    return _quarter(year, quarter)


def _easter(year: int) -> datetime:
    """Easter Sunday in the Gregorian calendar (the anonymous algorithm, as Meeus gives it)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    weekday = (32 + 2 * e + 2 * i - h - k) % 7
    month, day = divmod(h + weekday - 7 * ((a + 11 * h + 22 * weekday) // 451) + 114, 31)
    return datetime(year, month, day + 1, tzinfo=UTC)


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> datetime:
    """The ``n``-th such weekday of the month (``n`` = -1: the last)."""
    if n > 0:
        first = datetime(year, month, 1, tzinfo=UTC)
        return first + timedelta(days=(weekday - first.weekday()) % 7, weeks=n - 1)
    last = datetime(year, month, calendar.monthrange(year, month)[1], tzinfo=UTC)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def _on(month: int, day: int) -> Callable[[int], datetime]:
    return lambda year: datetime(year, month, day, tzinfo=UTC)


# Holidays by their day in a year: fixed, Easter's, or the n-th weekday of a month (US ones, as named).
_FIXED_HOLIDAYS = {
    "new year's day": (1, 1), "new year's eve": (12, 31), "valentine's day": (2, 14), "st patrick's day": (3, 17),
    "saint patrick's day": (3, 17), "independence day": (7, 4), "fourth of july": (7, 4), "halloween": (10, 31),
    "christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25), "xmas": (12, 25),
    "boxing day": (12, 26),
}
_HOLIDAYS: dict[str, Callable[[int], datetime]] = {name: _on(*day) for name, day in _FIXED_HOLIDAYS.items()} | {
    "easter sunday": _easter,
    "easter": _easter,
    "good friday": lambda y: _easter(y) - timedelta(days=2),
    "easter monday": lambda y: _easter(y) + timedelta(days=1),
    "mother's day": lambda y: _nth_weekday(y, 5, 6, 2),
    "father's day": lambda y: _nth_weekday(y, 6, 6, 3),
    "memorial day": lambda y: _nth_weekday(y, 5, 0, -1),
    "labor day": lambda y: _nth_weekday(y, 9, 0, 1),
    "thanksgiving day": lambda y: _nth_weekday(y, 11, 3, 4),
    "thanksgiving": lambda y: _nth_weekday(y, 11, 3, 4),
}
# as written: any apostrophe or none ("New Years Eve"), "St." or "St", any spacing, "the Fourth of July"
_HOLIDAY = r"(?:the\s+)?(?P<holiday>" + "|".join(
    re.sub(r"^st\\ ", r"st\\.?\\ ", re.escape(name)).replace("'", "['’]?").replace(r"\ ", r"\s+")
    for name in sorted(_HOLIDAYS, key=len, reverse=True)) + r")"


_HOLIDAY_KEYS = {name.replace("'", ""): name for name in _HOLIDAYS}  # as written, apostrophes or none


def _holiday_key(text: str) -> str:
    return _HOLIDAY_KEYS[" ".join(text.lower().replace("’", "").replace("'", "").replace("st.", "st").split())]


def _holiday(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"Christmas", "last Thanksgiving", "Easter 2023": the day, chosen as :func:`_which_year` says."""
    day_in = _HOLIDAYS[_holiday_key(m["holiday"])]
    if m.groupdict().get("year"):
        start = day_in(int(m["year"]))
    else:
        year = _which_year((m["which"] or "").lower(), lean, now, day_in, lambda y: day_in(y) + timedelta(days=1))
        start = day_in(year)
    return start, start + timedelta(days=1)


def _decade(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    """"the 2010s", "the '90s", "the 90s" (the latest such decade begun: "the '20s" said in 2024 are
    the 2020s)."""
    if m["century"]:
        first = int(m["century"] + m["tens"] + "0")
    else:  # "the '90s"
        first = 2000 + 10 * int(m["tens"])
        first -= 100 if first > now.year else 0
    return _year(first)[0], _year(first + 10)[0]


def _numeric_day(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime] | None:
    """"13/02/2024" or "02/13/2024": the one reading that is a date. One that reads both ways
    ("04/02/2024": the 4th of February or April the 2nd) is not guessed."""
    first, second, year = int(m["a"]), int(m["b"]), int(m["year"])
    readings = set()
    for month, day in ((first, second), (second, first)):
        try:
            readings.add(_day(year, month, day))
        except ValueError:
            continue
    return readings.pop() if len(readings) == 1 else None


_Window = tuple[datetime, datetime] | tuple[datetime, datetime, datetime]  # start, end[, point]
_Resolver = Callable[[re.Match[str], datetime, Lean], "_Window | None"]
_I = re.IGNORECASE
_RULES: list[tuple[re.Pattern[str], _Resolver]] = [
    (re.compile(rf"\b{_YEAR}[-/](?P<mon>[01]?\d)[-/]{_DAY}\b"), _iso_day),
    (re.compile(rf"(?<![\d/.-])\b(?P<a>[0-3]?\d)([/.])(?P<b>[0-3]?\d)\2{_YEAR}\b(?![/.-]?\d)"), _numeric_day),
    # a holiday only with "last", "this", "next", a year or "on": "we love Halloween" says no date,
    # "we got engaged on Christmas Eve" does (the one the tense leans to)
    (re.compile(rf"\b(?P<which>last|this|next)\s+{_HOLIDAY}\b", _I), _holiday),
    (re.compile(rf"\b(?P<which>){_HOLIDAY},?\s+(?:of\s+)?{_YEAR}\b", _I), _holiday),
    (re.compile(rf"\bon\s+(?P<which>){_HOLIDAY}\b", _I), _holiday),
    (re.compile(rf"\b(?:(?:the|at\s+the)\s+)?(?P<part>start|beginning|middle|end)\s+of\s+(?:(?P<which>last|this|next)\s+)?"
                rf"{_MONTH}(?:,?\s+{_YEAR})?\b", _I), _month_part),
    (re.compile(rf"\b(?P<part>early|mid|late)[-\s]+(?:(?P<which>last|this|next)\s+)?{_MONTH}(?:,?\s+{_YEAR})?\b", _I),
     _month_part),
    (re.compile(r"\b(?:(?:the|at\s+the|by\s+the)\s+)?(?P<edge>start|beginning|middle|end)\s+of\s+"
                r"(?:the\s+|this\s+|(?P<which>last|previous|next)\s+)?(?P<unit>week|month|quarter|year)\b"
                r"|\b(?P<abbr>EO[DWMQY])\b", _I), _unit_edge),
    (re.compile(rf"\b(?:(?P<which>last|this|next)\s+)?(?:Q(?P<q>[1-4])|the\s+(?P<ord>first|second|third|fourth|1st|2nd|3rd|4th)"
                rf"\s+quarter)(?:,?\s+(?:of\s+)?{_YEAR})?\b", _I), _quarter_named),
    (re.compile(rf"\b(?:(?:from\s+)?the\s+)?(?P<first>[0-3]?\d)(?:st|nd|rd|th)?\s*{_UNTIL}\s*(?:the\s+)?{_DAY}"
                rf"(?:\s+of)?\s+{_MONTH}(?:,?\s+{_YEAR})?\b", _I), _day_range),
    (re.compile(rf"\b{_MONTH}\s+(?P<first>[0-3]?\d)(?:st|nd|rd|th)?\s*{_UNTIL}\s*{_DAY}(?:,?\s+{_YEAR})?\b"
                rf"(?!\s*(?:days?|weeks?|months?|years?))", _I), _day_range),
    (re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH}(?:,?\s+{_YEAR})?\b", _I), _explicit_day),
    (re.compile(rf"\b{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?\b(?!\s*(?:days?|weeks?|months?|years?))", _I), _explicit_day),
    (re.compile(rf"\b{_MONTH}(?:,?\s+of)?,?\s+{_YEAR}\b", _I), _month_year),
    (re.compile(rf"\b(?:(?P<which>last|this|next)\s+|the\s+)?{_SEASON}(?:\s+of\s+{_YEAR})?\b", _I), _season),
    (re.compile(rf"\b(?:(?P<which>last|this|next)\s+|(?:in|during|since|from|until|till|starting|beginning)\s+)"
                rf"{_MONTH}\b", _I), _relative_month),
    (re.compile(rf"\b(?:on\s+)?{_WEEKDAY}\s+(?P<which>last|previous|this|next)\s+week\b", _I), _weekday_of_week),
    (re.compile(rf"\b(?P<which>last|previous|this|next)\s+week(?:['’]s)?\s+(?:on\s+)?{_WEEKDAY}", _I),
     _weekday_of_week),
    # "Thursday the 23rd": the weekday says which month's 23rd
    (re.compile(rf"\b(?:on\s+)?{_WEEKDAY},?\s+(?:the\s+)?{_ORDINAL_DAY}(?P<which>)\b"
                rf"(?!\s+(?!{_AFTER_A_DAY}\b)[a-z])", _I), _weekday_and_day),
    # "on the 15th", "moved to the 23rd" is a day of a month, unless a noun follows ("on the 15th
    # floor", "the 15th century")
    (re.compile(rf"\b{_BEFORE_A_DAY}\s+the\s+{_ORDINAL_DAY}(?P<which>)(?!\s+(?!{_AFTER_A_DAY}\b)[a-z])", _I),
     _day_of_month),
    (re.compile(rf"\bthe\s+{_ORDINAL_DAY}\s+of\s+(?P<which>last|this|next)\s+month\b", _I), _day_of_month),
    (re.compile(rf"\b{_amount_of('weeks')}\s+weeks?\s+from\s+(?:(?P<which>this|next|on)\s+)?{_WEEKDAY}", _I),
     _weeks_from_weekday),
    (re.compile(rf"\b{_WEEKDAY}\s+after\s+next\b", _I), _weekday_after_next),
    (re.compile(rf"\b(?P<which>{_WEEKDAY_WORDS})\s+{_WEEKDAY}(?!,?\s+(?:the\s+)?\d)", _I), _weekday),
    (re.compile(rf"\b{_AMOUNT}\s+{_WEEKDAY_PLURAL}\s+ago\b", _I), _weekdays_ago),
    (re.compile(rf"\b{_halves(_UNIT)}\s+ago\b", _I), _half_ago),
    (re.compile(rf"\bin\s+{_halves(_DATE_UNIT)}", _I), _half_ahead),
    (re.compile(rf"\b{_AMOUNT}\s+{_UNIT}\s+ago\b", _I), _ago),
    (re.compile(rf"\bin\s+{_AMOUNT}\s+{_DATE_UNIT}", _I), _ahead),
    (re.compile(rf"\b{_AMOUNT}\s+{_UNIT}\s+from\s+(?:now|today)\b", _I), _ahead),
    (re.compile(r"\bthe\s+(?P<unit>week|month|year)\s+(?P<dir>after\s+next|before\s+last)\b", _I), _after_next),
    (re.compile(rf"\b(?:the\s+)?(?:past|last|previous)\s+{_AMOUNT}\s+{_UNIT}\b", _I), _past_span),
    (re.compile(rf"\b(?P<which>last|previous|this|next)\s+{_CALENDAR_UNIT}\b", _I), _named_span),
    (re.compile(r"\b(?:(?P<which>last|this|next)\s+|the\s+)weekend\b", _I), _weekend),
    (re.compile(r"\b(?:the\s+day\s+(?:before\s+yesterday|after\s+tomorrow)|yesterday|last\s+night|today|"
                r"tonight|this\s+(?:morning|afternoon|evening)|tomorrow|effective\s+immediately|"
                r"with\s+immediate\s+effect)\b", _I), _yesterday_today),
    (re.compile(rf"(?<![\d/-])\b(?:in|during|since|of|from)?\s*{_YEAR}\b(?![\d/-])", _I), _bare_year),
]


def _now(m: re.Match[str], now: datetime, lean: Lean) -> tuple[datetime, datetime]:
    return _unit_window(now, "day")


# What dates only a phrase on its own, as a model answers a date: in running text a holiday or a
# decade is more often the topic than the time ("we love Halloween", "music of the 1960s"), a bare
# month or weekday a word ("may", "sun"), and "now" the present tense.
_PHRASE_RULES: list[tuple[re.Pattern[str], _Resolver]] = [
    (re.compile(rf"in\s+{_AMOUNT}\s+{_UNIT}", _I), _ahead),  # "in 2 hours", as a whole answer
    (re.compile(rf"in\s+{_halves(_UNIT)}", _I), _half_ahead),
    (re.compile(rf"(?P<which>)(?:on\s+)?{_HOLIDAY}", _I), _holiday),
    (re.compile(r"(?:the\s+)?(?:(?P<century>19|20)|['’])?(?P<tens>\d)0s", _I), _decade),
    (re.compile(rf"(?P<which>){_WEEKDAY}", _I), _weekday),
    (re.compile(rf"(?P<which>){_MONTH}", _I), _relative_month),
    (re.compile(r"(?:right\s+)?now|currently|presently|at\s+present|at\s+the\s+moment|as\s+of\s+(?:now|today)", _I),
     _now),
]

# "<amount> <unit> before <anchor>", not in hours or minutes: "an hour before bedtime" is advice, not a date
_ANCHORED = re.compile(
    rf"\b{_AMOUNT}\s+{_DATE_UNIT}\s+(?P<dir>before|after|prior\s+to|following)\s+(?P<anchor>[^?.!,;]+)", _I
)
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "quarter": 91, "year": 365}


def _anchored(query: str) -> tuple[list[AnchoredOffset], list[tuple[int, int]]]:
    found, spans = [], []
    for m in _ANCHORED.finditer(query):
        unit, amount = _span(m)
        days = amount * _UNIT_DAYS[unit]
        sign = -1 if m["dir"].lower() in ("before", "prior to") else 1
        anchor = m["anchor"].strip()
        tolerance = timedelta(days=max(1, days // 7))
        found.append(AnchoredOffset(timedelta(days=sign * days), anchor, m[0].strip(), tolerance))
        spans.append(m.span())
    return found, spans


def _time_window(window: _Window, text: str) -> TimeWindow:
    return TimeWindow(window[0], window[1], text, window[2] if len(window) == 3 else None)


def parse_time(query: str, now: datetime, *, lean: Lean = "past", phrase: bool = False) -> ParsedTime:
    """Every time expression in ``query``, resolved against ``now`` (an aware datetime).

    Rules run from the most specific ("8 May 2023") to the least ("2023"); text matched by one rule
    is not matched again by a later one, so "May 2023" yields one month, not a month and a year.
    ``phrase``: ``query`` is a date phrase on its own (a model's answer), which may also be a bare
    holiday ("Christmas"), decade ("the 90s"), weekday, month or "now".
    """
    now = ensure_utc(now)
    if phrase:
        text = query.strip().rstrip(".!")
        for pattern, resolve in _PHRASE_RULES:
            if (m := pattern.fullmatch(text)) and (window := resolve(m, now, lean)) is not None:
                return ParsedTime((_time_window(window, text),))
    anchored, taken = _anchored(query)
    windows: list[TimeWindow] = []
    for pattern, resolve in _RULES:
        for m in pattern.finditer(query):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            window = resolve(m, now, lean)
            if window is not None:
                windows.append(_time_window(window, m[0].strip()))
                taken.append(m.span())
    remainder = query
    for start, end in sorted(taken, reverse=True):
        remainder = remainder[:start] + " " + remainder[end:]
    windows.sort(key=lambda w: query.lower().find(w.text.lower()))
    return ParsedTime(tuple(windows), tuple(anchored), " ".join(remainder.split()))



def strip_time(text: str) -> str:
    """``text`` without its time expressions (any "now" will do: only where they are matters)."""
    return parse_time(text, datetime(2000, 1, 1, tzinfo=UTC)).remainder or text
