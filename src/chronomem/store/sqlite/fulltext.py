"""Per-group FTS5 tables and safe match expressions.

Why per group: with one shared FTS table, FTS5 ranks every group's matches before a group filter
can apply, so BM25 latency grows with the whole file (notes-storage.md: 109 ms p95 at 1M facts).
Each group gets its own four tables, named by a hash of the group id (never the id itself, which is
arbitrary text), so a query ranks only that group's rows and BM25 statistics are the group's own.
Each table's rowid is the rowid of the row it indexes in the main table.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3

from chronomem.store.base import Scope

__all__ = ["FTS_COLUMNS", "create_fts_tables", "drop_fts_tables", "fts_key", "fts_table", "match_expression"]

FTS_COLUMNS: dict[Scope, tuple[str, ...]] = {
    Scope.FACTS: ("fact",),
    Scope.ENTITIES: ("name", "summary"),
    Scope.EPISODES: ("content",),
    Scope.COMMUNITIES: ("name", "summary"),
}

_WORD = re.compile(r"[^\W_]+")
_MAX_TERMS = 64  # bounds the cost of a pasted essay used as a query


def fts_key(group_id: str) -> str:
    """A stable, identifier-safe key for a group's FTS tables (96 bits of SHA-256)."""
    return hashlib.sha256(group_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def fts_table(key: str, scope: Scope) -> str:
    return f"fts_{key}_{scope.value}"


def create_fts_tables(conn: sqlite3.Connection, key: str) -> None:
    for scope, columns in FTS_COLUMNS.items():
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {fts_table(key, scope)} "
            f"USING fts5({', '.join(columns)}, tokenize = 'unicode61 remove_diacritics 2')"
        )


def drop_fts_tables(conn: sqlite3.Connection, key: str) -> None:
    for scope in FTS_COLUMNS:
        conn.execute(f"DROP TABLE IF EXISTS {fts_table(key, scope)}")


def match_expression(query: str) -> str | None:
    """The words of ``query`` as quoted FTS5 strings, OR-ed (BM25 ranks rows matching more of them
    higher). Operators, quotes and punctuation are never passed through; ``None`` if no word."""
    words: list[str] = []
    seen: set[str] = set()
    for word in _WORD.findall(query):
        folded = word.casefold()
        if folded not in seen:
            seen.add(folded)
            words.append(word)
        if len(words) == _MAX_TERMS:
            break
    if not words:
        return None
    return " OR ".join(f'"{word}"' for word in words)
