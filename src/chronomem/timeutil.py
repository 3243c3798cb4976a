"""Time helpers: every timestamp in chronomem is timezone-aware UTC.

Naive datetimes are refused at the boundary (``ensure_utc``) rather than compared silently;
callers who mean UTC say so with ``assume_utc``. So are moments outside ``SUPPORTED_RANGE``
(years 100 to 9899): Python's datetime ends at years 1 and 9999, and a moment near either end
overflows when its offset is applied or when a relative date ("a week later") is computed from it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator

from chronomem.errors import InvalidInputError

__all__ = [
    "SUPPORTED_RANGE",
    "NaiveDateTimeError",
    "UTCDateTime",
    "assume_utc",
    "ensure_utc",
    "from_epoch_ms",
    "parse_instant",
    "to_epoch_ms",
    "utc_now",
]

SUPPORTED_RANGE: tuple[datetime, datetime] = (datetime(100, 1, 1, tzinfo=UTC), datetime(9900, 1, 1, tzinfo=UTC))
"""Every timestamp chronomem accepts is in ``[start, end)``."""


class NaiveDateTimeError(InvalidInputError):
    """A datetime without a timezone where an instant is needed."""


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def ensure_utc(value: datetime) -> datetime:
    """Return ``value`` converted to UTC; refuse a naive datetime."""
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise NaiveDateTimeError(
            f"naive datetime {value.isoformat()} refused: give a timezone (use assume_utc() if it is UTC)"
        )
    start, end = SUPPORTED_RANGE
    try:
        converted = value.astimezone(UTC)
    except OverflowError:
        converted = None
    if converted is None or not start <= converted < end:
        raise InvalidInputError(
            f"{value.isoformat()} is outside the supported range "
            f"[{start.isoformat()}, {end.isoformat()})"
        )
    return converted


def parse_instant(text: str) -> datetime:
    """An ISO 8601 date and time with a timezone, typed by a person (CLI options, import files),
    refused with a message that says how to write it rather than which function to call."""
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InvalidInputError(f"{text!r} is not an ISO 8601 date and time (e.g. 2024-05-01T10:00:00Z)") from None
    if value.tzinfo is None:
        example = value.isoformat()
        raise NaiveDateTimeError(f"{text!r} has no timezone: write {example}Z for UTC, or an offset "
                                 f"such as {example}+02:00")
    return ensure_utc(value)


def assume_utc(value: datetime) -> datetime:
    """Explicitly treat a naive datetime as UTC (aware ones are converted)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def to_epoch_ms(value: datetime | None) -> int | None:
    """Milliseconds since the epoch, the storage form of timestamps (None stays None)."""
    return None if value is None else int(ensure_utc(value).timestamp() * 1000)


def from_epoch_ms(value: int | None) -> datetime | None:
    """Inverse of :func:`to_epoch_ms`."""
    return None if value is None else datetime.fromtimestamp(value / 1000, UTC)


def _validate_utc(value: datetime) -> datetime:
    try:
        return ensure_utc(value)
    except InvalidInputError as exc:  # pydantic wants ValueError; InvalidInputError is one
        raise ValueError(str(exc)) from exc


UTCDateTime = Annotated[datetime, AfterValidator(_validate_utc)]
"""A pydantic field type: aware datetimes are converted to UTC, naive ones are a validation error."""
