"""Time helpers: every timestamp in chronomem is timezone-aware UTC.

Naive datetimes are refused at the boundary (``ensure_utc``) rather than compared silently;
callers who mean UTC say so with ``assume_utc``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator

from chronomem.errors import InvalidInputError

__all__ = ["UTCDateTime", "assume_utc", "ensure_utc", "from_epoch_ms", "to_epoch_ms", "utc_now"]


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def ensure_utc(value: datetime) -> datetime:
    """Return ``value`` converted to UTC; refuse a naive datetime."""
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise InvalidInputError(
            f"naive datetime {value.isoformat()} refused: give a timezone (use assume_utc() if it is UTC)"
        )
    return value.astimezone(UTC)


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
