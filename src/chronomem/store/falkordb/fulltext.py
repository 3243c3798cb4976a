"""User text → a RediSearch query that can only match words.

FalkorDB's full-text indexes are RediSearch indexes and the query string is RediSearch syntax, where
``-``, ``|``, ``@field:``, ``*``, ``%``, quotes and brackets are operators. We keep the words of the
user's text (unicode letters, digits, underscore), escape what RediSearch treats specially inside a
word, and join them with ``|`` (any word may match; relevance ranks documents matching more words
first). Nothing else of the input reaches the engine, and no group id is ever part of the query
(one graph per group makes a group filter unnecessary).
"""

from __future__ import annotations

import unicodedata

from chronomem.text.words import WORD

__all__ = ["MAX_TERMS", "fold", "fulltext_query", "fulltext_words"]

MAX_TERMS = 32  # bounds the cost of one query; longer inputs keep their first distinct words


def fold(text: str) -> str:
    """Case- and accent-insensitive form ("Café" → "cafe"): what the full-text indexes hold and what
    queries are matched in. RediSearch folds case but keeps accents, so the backend indexes a folded
    copy of every searchable text."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def _escape(word: str) -> str:
    return "".join(ch if ch.isalnum() else "\\" + ch for ch in word)


def fulltext_words(text: str) -> list[str]:
    """The distinct words of ``text`` (folded, escaped for RediSearch), at most :data:`MAX_TERMS`."""
    seen: dict[str, None] = {}
    for word in WORD.findall(fold(text)):
        seen.setdefault(word, None)
        if len(seen) == MAX_TERMS:
            break
    return [_escape(w) for w in seen]


def fulltext_query(text: str, *, every_word: bool = False) -> str | None:
    """The RediSearch query for ``text`` — any word (``a|b``) or, with ``every_word``, all of them
    (``a b``) — or None when it holds no word."""
    words = fulltext_words(text)
    return (" " if every_word else "|").join(words) or None
