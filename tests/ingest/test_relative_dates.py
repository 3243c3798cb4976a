"""Relative dates in episode text resolve deterministically against the episode's reference time.

Two fixed reference times: Wednesday 2024-05-15 10:00 UTC (most rows) and Wednesday 2024-01-31 (month
ends, winter). Weeks run Monday to Sunday: "this Friday" is this week's, "next Friday" next week's.
A bare expression means the latest one, or the next one in a sentence about plans.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chronomem.ingest.dates import date_in_text, lean_of, parse_model_datetime, resolve_relative

MAY_15 = datetime(2024, 5, 15, 10, 0, tzinfo=UTC)  # a Wednesday
JAN_31 = datetime(2024, 1, 31, 18, 30, tzinfo=UTC)  # a Wednesday

TABLE = [
    ("today", MAY_15, "2024-05-15"),
    ("tonight", MAY_15, "2024-05-15"),
    ("this morning", MAY_15, "2024-05-15"),
    ("this evening", MAY_15, "2024-05-15"),
    ("yesterday", MAY_15, "2024-05-14"),
    ("last night", MAY_15, "2024-05-14"),
    ("the day before yesterday", MAY_15, "2024-05-13"),
    ("tomorrow", MAY_15, "2024-05-16"),
    ("the day after tomorrow", MAY_15, "2024-05-17"),
    ("in three days", MAY_15, "2024-05-18"),
    ("in 3 days", MAY_15, "2024-05-18"),
    ("in a day", MAY_15, "2024-05-16"),
    ("in a week", MAY_15, "2024-05-22"),
    ("in two weeks", MAY_15, "2024-05-29"),
    ("in a couple of weeks", MAY_15, "2024-05-29"),
    ("in a month", MAY_15, "2024-06-15"),
    ("in two months", MAY_15, "2024-07-15"),
    ("in a year", MAY_15, "2025-05-15"),
    ("three days from now", MAY_15, "2024-05-18"),
    ("two weeks from now", MAY_15, "2024-05-29"),
    ("a week from today", MAY_15, "2024-05-22"),
    ("two days ago", MAY_15, "2024-05-13"),
    ("a couple of days ago", MAY_15, "2024-05-13"),
    ("a week ago", MAY_15, "2024-05-08"),
    ("two weeks ago", MAY_15, "2024-05-01"),
    ("a few weeks ago", MAY_15, "2024-04-24"),
    ("a month ago", MAY_15, "2024-04-15"),
    ("three months ago", MAY_15, "2024-02-15"),
    ("a year ago", MAY_15, "2023-05-15"),
    ("two years ago", MAY_15, "2022-05-15"),
    ("next Thursday", MAY_15, "2024-05-23"),
    ("next Monday", MAY_15, "2024-05-20"),
    ("next Tuesday", MAY_15, "2024-05-21"),
    ("this Friday", MAY_15, "2024-05-17"),
    ("this Monday", MAY_15, "2024-05-13"),
    ("last Friday", MAY_15, "2024-05-10"),
    ("last Wednesday", MAY_15, "2024-05-08"),
    ("I saw her on Friday", MAY_15, "2024-05-10"),
    ("I will see her on Friday", MAY_15, "2024-05-17"),
    ("next week", MAY_15, "2024-05-20"),
    ("last week", MAY_15, "2024-05-06"),
    ("this week", MAY_15, "2024-05-13"),
    ("the week after next", MAY_15, "2024-05-27"),
    ("the week before last", MAY_15, "2024-04-29"),
    ("this weekend", MAY_15, "2024-05-18"),
    ("next weekend", MAY_15, "2024-05-25"),
    ("last weekend", MAY_15, "2024-05-11"),
    ("next month", MAY_15, "2024-06-01"),
    ("last month", MAY_15, "2024-04-01"),
    ("next year", MAY_15, "2025-01-01"),
    ("last year", MAY_15, "2023-01-01"),
    ("this year", MAY_15, "2024-01-01"),
    ("last summer", MAY_15, "2023-06-01"),
    ("this summer", MAY_15, "2024-06-01"),
    ("next summer", MAY_15, "2024-06-01"),
    ("last spring", MAY_15, "2023-03-01"),
    ("last winter", MAY_15, "2023-12-01"),
    ("we went camping in the summer", MAY_15, "2023-06-01"),
    ("we will go camping in the summer", MAY_15, "2024-06-01"),
    ("we met in March", MAY_15, "2024-03-01"),
    ("I'm going to Japan in March", MAY_15, "2025-03-01"),
    ("we met in June", MAY_15, "2023-06-01"),
    ("we will travel in June", MAY_15, "2024-06-01"),
    ("last March", MAY_15, "2024-03-01"),
    ("next March", MAY_15, "2025-03-01"),
    ("next May", MAY_15, "2025-05-01"),
    ("in 2022", MAY_15, "2022-01-01"),
    ("8 May 2023", MAY_15, "2023-05-08"),
    ("May 8, 2023", MAY_15, "2023-05-08"),
    ("on May 20", MAY_15, "2024-05-20"),
    ("I will fly out on January 5", MAY_15, "2025-01-05"),
    ("in a month", JAN_31, "2024-02-29"),
    ("a month ago", JAN_31, "2023-12-31"),
    ("next month", JAN_31, "2024-02-01"),
    ("last month", JAN_31, "2023-12-01"),
    ("this winter", JAN_31, "2023-12-01"),
    ("next winter", JAN_31, "2024-12-01"),
    ("last winter", JAN_31, "2022-12-01"),
    ("tomorrow", JAN_31, "2024-02-01"),
    ("in two days", JAN_31, "2024-02-02"),
]


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_the_table_is_large_and_without_repeats():
    assert len(TABLE) >= 60
    assert len({(text, ref) for text, ref, _ in TABLE}) == len(TABLE)


@pytest.mark.parametrize(("text", "reference", "expected"), TABLE)
def test_relative_expression_resolves_to_the_expected_day(text: str, reference: datetime, expected: str):
    assert resolve_relative(text, reference) == day(expected)


@pytest.mark.parametrize(("text", "reference", "expected"), TABLE[:20])
def test_a_model_that_returns_the_phrase_gets_the_same_day(text: str, reference: datetime, expected: str):
    assert parse_model_datetime(text, reference) == day(expected)


def test_an_undated_fact_is_dated_from_its_quote_and_an_unreadable_date_is_dropped():
    assert date_in_text("Alice: I start at Globex next Monday!", MAY_15) == day("2024-05-20")
    assert date_in_text("Alice: I love jazz.", MAY_15) is None and date_in_text(None, MAY_15) is None
    assert parse_model_datetime("at some point", MAY_15) is None


def test_plans_lean_to_the_future_and_memories_to_the_past():
    assert lean_of("I'll call you") == "future" and lean_of("We're going to move") == "future"
    assert lean_of("We moved to Lisbon") == "past"
