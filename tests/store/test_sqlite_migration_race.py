"""Two processes opening one new SQLite file at once both find it unmigrated; the one that takes
the write lock second must skip what the first applied, not fail on it (bench/soak.py saw
"duplicate column name: sources")."""

from __future__ import annotations

import sqlite3

from chronomem.store.sqlite import connection
from chronomem.store.sqlite.connection import SCHEMA_VERSION, apply_migrations


def test_a_migration_another_process_applied_meanwhile_is_skipped(tmp_path, monkeypatch):
    path = tmp_path / "new.db"
    mine, theirs = sqlite3.connect(path, isolation_level=None), sqlite3.connect(path, isolation_level=None)
    scripts = connection.migration_scripts

    def the_other_process_wins_the_race() -> list[tuple[int, str]]:
        # called after `mine` read which versions the file had (none): the other process now
        # applies every migration before `mine` takes the write lock
        monkeypatch.setattr(connection, "migration_scripts", scripts)
        assert apply_migrations(theirs) == SCHEMA_VERSION
        return scripts()

    monkeypatch.setattr(connection, "migration_scripts", the_other_process_wins_the_race)
    try:
        assert apply_migrations(mine) == SCHEMA_VERSION
        versions = [row[0] for row in mine.execute("SELECT version FROM schema_migrations ORDER BY version")]
        assert versions == list(range(1, SCHEMA_VERSION + 1))
    finally:
        mine.close()
        theirs.close()
