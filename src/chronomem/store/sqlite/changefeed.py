"""Keeping the in-memory indexes of several processes in step with one database file.

Vector and BM25 search run on indexes held in the memory of each process that has the file open
(see store.py). A process learns of its own writes directly; to learn of another process's (an API
server and a separate ingestion worker, say), every write transaction also appends to ``index_log``
what it changed: (group, kind, scope, id), never the value. A process that finds the log ahead of
what it has applied re-reads the current value of each logged object and applies it.

- Catching up happens on the writer thread, in a read transaction, or inside the process's own
  next write transaction (which holds SQLite's write lock, so no other process can commit in
  between): changes reach an index in commit order, and re-reading current values makes applying
  the same entry twice harmless.
- Checking costs one indexed ``max(seq)`` read before a search.
- The log is pruned to its newest ``RETAINED`` entries. A process that fell further behind than
  that (idle for a long time beside a busy writer) drops its indexes; they are rebuilt from the
  database at their next search.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from chronomem.store.base import Scope
from chronomem.store.sqlite.indexes import IndexChange, IndexRegistry
from chronomem.store.sqlite.timemask import time_row
from chronomem.store.sqlite.writes import TEXT_SQL, find_group

__all__ = ["RETAINED", "ChangeFeed"]

RETAINED = 200_000  # log entries kept; at ~10 per ingested episode, the last ~20,000 episodes
_PRUNE_EVERY = 1_000  # entries written between prunes

_TEXT_BY_ID = {scope: sql + " AND id = ?" for scope, sql in TEXT_SQL.items()}


def head(conn: sqlite3.Connection) -> int:
    """The sequence number of the newest log entry (0 for an empty log)."""
    row = conn.execute("SELECT max(seq) FROM index_log").fetchone()
    return row[0] or 0


class ChangeFeed:
    """The log as one process sees it: what it has applied so far and how to catch up."""

    def __init__(self, registry: IndexRegistry, applied: int) -> None:
        self._registry = registry
        self.applied = applied  # every entry up to here is reflected in this process's indexes
        self._since_prune = 0

    def behind(self, conn: sqlite3.Connection) -> bool:
        """Has another process written since this one last caught up? (any thread's connection)"""
        return head(conn) > self.applied

    def catch_up(self, conn: sqlite3.Connection) -> None:
        """Apply every entry this process has not seen (on the writer thread, outside a write)."""
        conn.execute("BEGIN")  # one snapshot for the log and the values it points to
        try:
            changes, newest = self._foreign(conn)
        finally:
            conn.execute("COMMIT")
        self._registry.apply(changes)
        self.applied = newest

    def before_commit(self, conn: sqlite3.Connection, own: Sequence[IndexChange]) -> tuple[list[IndexChange], int]:
        """Inside a write transaction: log this write's changes, and collect the other processes'
        changes it has not applied yet. Returns what to apply after the commit, in order, and the
        head to record then (see :meth:`after_commit`)."""
        foreign, _ = self._foreign(conn)
        if own:
            conn.executemany(
                "INSERT INTO index_log (grp, kind, scope, id) VALUES (?, ?, ?, ?)",
                [(c.group_id, c.kind, c.scope, c.id) for c in own],
            )
            self._since_prune += len(own)
            if self._since_prune >= _PRUNE_EVERY:
                self._since_prune = 0
                conn.execute("DELETE FROM index_log WHERE seq <= (SELECT max(seq) FROM index_log) - ?", (RETAINED,))
        return [*foreign, *own], head(conn)

    def after_commit(self, changes: Sequence[IndexChange], newest: int) -> None:
        self._registry.apply(changes)
        self.applied = newest

    def _foreign(self, conn: sqlite3.Connection) -> tuple[list[IndexChange], int]:
        newest = head(conn)
        if newest <= self.applied:
            return [], newest
        oldest = conn.execute("SELECT min(seq) FROM index_log").fetchone()[0]
        if oldest is None or oldest > self.applied + 1:  # entries we never saw were pruned
            self._registry.clear()
            return [], newest
        rows = conn.execute(
            "SELECT DISTINCT grp, kind, scope, id FROM index_log WHERE seq > ? AND seq <= ?", (self.applied, newest)
        ).fetchall()
        changes: list[IndexChange] = []
        gids: dict[str, int | None] = {}
        for group_id, kind, scope, object_id in rows:
            if kind == "group":
                changes.append(IndexChange("group", group_id, scope, object_id, None))
            elif self._registry.holds(group_id, scope):  # unloaded indexes are built from the database
                if group_id not in gids:
                    gids[group_id] = find_group(conn, group_id)
                changes.extend(_current(conn, gids[group_id], group_id, kind, Scope(scope), object_id))
        return changes, newest


def _current(
    conn: sqlite3.Connection, gid: int | None, group_id: str, kind: str, scope: Scope, object_id: str
) -> list[IndexChange]:
    """The change that brings an index to this object's current state (empty if nothing to do)."""
    if kind == "text":
        row = None if gid is None else conn.execute(_TEXT_BY_ID[scope], (gid, object_id)).fetchone()
        return [IndexChange("text", group_id, scope.value, object_id, None if row is None else row[1])]
    times = _fact_times(conn, gid, object_id) if scope is Scope.FACTS and gid is not None else None
    if kind == "times":
        return [] if times is None else [IndexChange("times", group_id, scope.value, object_id, None, times=times)]
    row = None if gid is None else conn.execute(
        "SELECT vec FROM vectors WHERE gid = ? AND scope = ? AND id = ?", (gid, scope.value, object_id)
    ).fetchone()
    vector = None if row is None else np.frombuffer(row[0], dtype=np.float32)
    return [IndexChange("vector", group_id, scope.value, object_id, vector, times)]


def _fact_times(conn: sqlite3.Connection, gid: int, fact_id: str) -> np.ndarray | None:
    row = conn.execute(
        "SELECT valid_at, invalid_at, created_at, expired_at FROM facts WHERE gid = ? AND id = ?", (gid, fact_id)
    ).fetchone()
    return None if row is None else time_row(*row)
