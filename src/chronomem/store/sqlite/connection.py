"""Connections, pragmas and schema migrations.

Migrations are the numbered ``migrations/NNNN_*.sql`` files beside this module; ``schema_migrations``
records which ran. Each runs in its own transaction when the store opens, so a file is always at
one known version.
"""

from __future__ import annotations

import sqlite3
from importlib import resources

from chronomem.errors import StoreError

__all__ = ["SCHEMA_VERSION", "apply_migrations", "connect", "migration_scripts"]


def migration_scripts() -> list[tuple[int, str]]:
    """(version, SQL) of every migration, in order."""
    folder = resources.files("chronomem.store.sqlite").joinpath("migrations")
    scripts = [
        (int(item.name.split("_", 1)[0]), item.read_text(encoding="utf-8"))
        for item in folder.iterdir()
        if item.name.endswith(".sql")
    ]
    return sorted(scripts)


SCHEMA_VERSION = 4


def connect(path: str, *, reader: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) shared across threads by its owner.

    WAL lets readers run beside the single writer; ``synchronous=FULL`` makes a commit durable when
    it returns; ``busy_timeout`` covers a checkpoint or another process holding the lock briefly.
    """
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30.0)
        conn.execute("PRAGMA busy_timeout = 30000")
        if path != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA cache_size = -65536")  # 64 MiB page cache per connection
        conn.execute("PRAGMA temp_store = MEMORY")
        if reader:
            conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open SQLite database {path!r}: {exc}") from exc
    return conn


def apply_migrations(conn: sqlite3.Connection) -> int:
    """Run the migrations this file lacks; returns the schema version it is now at."""
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
        for version, script in migration_scripts():
            if version in done:
                continue
            conn.execute("BEGIN IMMEDIATE")
            try:
                # another process opening the same new file may have applied it since we looked
                # (bench/soak.py: "duplicate column name"); under the write lock we know for sure
                if conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (version,)).fetchone():
                    conn.execute("COMMIT")
                    continue
                for statement in _statements(script):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, datetime('now'))", (version,)
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        newest = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
    except sqlite3.Error as exc:
        raise StoreError(f"cannot migrate the SQLite schema: {exc}") from exc
    if newest is not None and newest > SCHEMA_VERSION:
        raise StoreError(f"the database is at schema version {newest}, newer than this chronomem ({SCHEMA_VERSION})")
    return newest or 0


def _statements(script: str) -> list[str]:
    """Split a migration into statements (``executescript`` would commit our transaction)."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip() and not all(ln.strip().startswith("--") or not ln.strip() for ln in buffer.splitlines()):
        statements.append(buffer.strip())
    return statements
