"""Time expressions in queries, resolved against a given "now"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chronomem.errors import InvalidInputError
from chronomem.text.timeparse import parse_time, strip_time

NOW = datetime(2023, 5, 30, 23, 40, tzinfo=UTC)  # a Tuesday


def _days(query: str, now: datetime = NOW) -> list[tuple[str, str]]:
    return [(w.start.date().isoformat(), w.end.date().isoformat()) for w in parse_time(query, now).windows]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did I buy last May?", [("2022-05-01", "2022-06-01")]),
        ("where did she go in 2022", [("2022-01-01", "2023-01-01")]),
        ("What happened on 8 May, 2023?", [("2023-05-08", "2023-05-09")]),
        ("what about May 8th 2023", [("2023-05-08", "2023-05-09")]),
        ("the meeting on 2023/05/08", [("2023-05-08", "2023-05-09")]),
        ("what did we do in May 2022", [("2022-05-01", "2022-06-01")]),
        ("the trip in June", [("2022-06-01", "2022-07-01")]),  # June has not come yet this year
        ("what did I do yesterday", [("2023-05-29", "2023-05-30")]),
        ("names a new COO, effective immediately", [("2023-05-30", "2023-05-31")]),  # the announcement's day
        ("resigned with immediate effect", [("2023-05-30", "2023-05-31")]),
        ("last Saturday", [("2023-05-27", "2023-05-28")]),
        ("last weekend", [("2023-05-27", "2023-05-29")]),
        ("last week", [("2023-05-22", "2023-05-29")]),
        ("next month", [("2023-06-01", "2023-07-01")]),
        ("last summer", [("2022-06-01", "2022-09-01")]),
        ("during the past 3 months", [("2023-02-28", "2023-05-31")]),
    ],
)
def test_windows(query: str, expected: list[tuple[str, str]]):
    assert _days(query) == expected


def test_last_may_in_june_is_this_years_may():
    assert _days("last May", datetime(2023, 6, 10, tzinfo=UTC)) == [("2023-05-01", "2023-06-01")]


def test_weeks_ago_covers_that_week_with_slack():
    (window,) = parse_time("I started two weeks ago", NOW).windows
    assert window.contains(NOW - timedelta(days=14))
    assert not window.contains(NOW - timedelta(days=30))
    assert not window.contains(NOW)


def test_a_month_and_year_is_one_window_not_two():
    parsed = parse_time("in May of 2022 and in 2021", NOW)
    assert [w.text for w in parsed.windows] == ["May of 2022", "in 2021"]


def test_no_time_expression_means_nothing_to_narrow():
    parsed = parse_time("How many days ago did I attend the gym? I may go 4 times", NOW)
    assert not parsed
    assert parsed.remainder.startswith("How many days ago")


def test_anchored_offsets_carry_the_event_phrase():
    parsed = parse_time("What did I do two weeks before the trip to Paris?", NOW)
    (anchored,) = parsed.anchored
    assert anchored.offset == timedelta(days=-14)
    assert anchored.anchor == "the trip to Paris"
    window = anchored.window_around(datetime(2023, 3, 20, tzinfo=UTC))
    assert window.contains(datetime(2023, 3, 6, tzinfo=UTC))
    assert not window.contains(datetime(2023, 3, 20, tzinfo=UTC))
    assert parsed.windows == ()


def test_remainder_drops_the_time_words():
    assert parse_time("what did I cook last May?", NOW).remainder == "what did I cook ?"


def test_now_must_be_aware():
    with pytest.raises(InvalidInputError):
        parse_time("in 2022", datetime(2023, 1, 1))


def test_strip_time_leaves_the_words_that_are_not_time():
    assert strip_time("How many trips did I take in the past three months?") == "How many trips did I take in ?"
    assert strip_time("What breed is my dog?") == "What breed is my dog?"


@pytest.mark.parametrize(
    ("text", "lean", "expected"),
    [
        # a weekday beside a day of the month says which month's day it is, and is no date of its own
        ("the flight has been moved to Thursday the 8th", "past", [("2023-06-08", "2023-06-09")]),
        ("on Friday, the 19th", "future", [("2023-05-19", "2023-05-20")]),
        ("see you on Thursday 8 June", "future", [("2023-06-08", "2023-06-09")]),
        # a day of the month after the words that put one there, not a noun's ordinal
        ("they pushed it back to the 12th", "future", [("2023-06-12", "2023-06-13")]),
        ("off sick since the 3rd", "past", [("2023-05-03", "2023-05-04")]),
        ("we live on the 15th floor", "past", []),
        ("for the 3rd time", "past", []),
        # a range of days of one month: from the first day to the end of the last
        ("staying from the 3rd to the 7th of June", "future", [("2023-06-03", "2023-06-08")]),
        ("the conference runs June 12-14", "future", [("2023-06-12", "2023-06-15")]),
        # "last"/"next" of something else than now: a final day, a story's next day, a month's last week
        ("July 18 is my last day at Westcombe", "past", [("2023-07-18", "2023-07-19")]),
        ("the next day we drove home", "past", []),
        ("in the last week of June", "future", []),
        ("I moved here last week", "past", [("2023-05-22", "2023-05-29")]),
    ],
)
def test_days_of_the_month_in_running_text(text: str, lean: str, expected: list[tuple[str, str]]):
    windows = parse_time(text, NOW, lean="future" if lean == "future" else "past").windows
    assert [(w.start.date().isoformat(), w.end.date().isoformat()) for w in windows] == expected
