"""Cursor pages of the v4 lists: ``?page_size=&cursor=``, answered ``{items, next_cursor,
total_size}``; the SDK asks again with ``next_cursor`` while it is not empty. Cursors are the
application core's opaque offsets (:func:`chronomem.app.groups.encode_cursor`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, TypeVar

from fastapi import Query

from chronomem.app.groups import decode_cursor, encode_cursor
from chronomem.service.compat.v4.models import Page

__all__ = ["DEFAULT_PAGE", "Cursor", "PageSize", "page_of", "window"]

DEFAULT_PAGE = 50
PageSize = Annotated[int, Query(ge=1, le=1_000)]
Cursor = Annotated[str | None, Query(max_length=200)]
T = TypeVar("T")


def window(cursor: str | None) -> int:
    """The offset a cursor stands for (400 for one this server did not issue)."""
    return decode_cursor(cursor)


def page_of(items: Sequence[T], offset: int, page_size: int, total: int | None = None) -> Page[T]:
    """A page from ``items`` (the page and possibly one more, read from ``offset``)."""
    more = len(items) > page_size if total is None else offset + page_size < total
    return Page[T](items=list(items[:page_size]), next_cursor=encode_cursor(offset + page_size) if more else None,
                   total_size=total)
