"""The embedded SQLite store backend (docs/design.md §5): ``SQLiteStore.open(path)`` or
``open_store("sqlite:///path.db")``."""

from chronomem.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
