"""The control plane in one SQLite file, for an embedded store (``Settings.resolved_control_db``, by
default ``<data_dir>/control.db``), so that the store stays a pure graph.

Methods are synchronous: each is one short SQLite transaction (microseconds), cheaper than a thread
hop. The file is opened in WAL mode so the CLI can create keys while a server runs.

The lookup cache's change marker is ``PRAGMA data_version``, which moves when *another* connection
commits (``chronomem keys revoke`` while a server runs, or another server process); this
connection's own writes invalidate the cache themselves.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chronomem.controlplane.base import (
    AccessCache,
    ApiKeyInfo,
    DocumentRecord,
    GraphRecord,
    Project,
    TaskRecord,
    ThreadRecord,
    UserRecord,
    from_ms,
    key_matches,
    mint_key,
    new_group_id,
    now_ms,
    split_key,
)
from chronomem.domain import new_id
from chronomem.errors import ConflictError, InvalidInputError, NotFoundError

__all__ = ["SQLiteControlPlane"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS projects (
    id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES projects(id), name TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL, created_at INTEGER NOT NULL, revoked_at INTEGER);
CREATE TABLE IF NOT EXISTS users (
    project_id TEXT NOT NULL, user_id TEXT NOT NULL, group_id TEXT NOT NULL, email TEXT,
    first_name TEXT, last_name TEXT, metadata TEXT NOT NULL, created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL, PRIMARY KEY (project_id, user_id));
CREATE TABLE IF NOT EXISTS graphs (
    project_id TEXT NOT NULL, graph_id TEXT NOT NULL, group_id TEXT NOT NULL, name TEXT NOT NULL,
    description TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (project_id, graph_id));
CREATE TABLE IF NOT EXISTS threads (
    project_id TEXT NOT NULL, thread_id TEXT NOT NULL, user_id TEXT NOT NULL,
    created_at INTEGER NOT NULL, PRIMARY KEY (project_id, thread_id));
CREATE TABLE IF NOT EXISTS thread_messages (
    project_id TEXT NOT NULL, thread_id TEXT NOT NULL, seq INTEGER NOT NULL, episode_id TEXT NOT NULL,
    PRIMARY KEY (project_id, thread_id, seq));
CREATE TABLE IF NOT EXISTS tasks (
    project_id TEXT NOT NULL, task_id TEXT NOT NULL, group_id TEXT NOT NULL, episode_ids TEXT NOT NULL,
    created_at INTEGER NOT NULL, PRIMARY KEY (project_id, task_id));
CREATE TABLE IF NOT EXISTS project_documents (
    project_id TEXT NOT NULL, kind TEXT NOT NULL, scope TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL,
    updated_at INTEGER NOT NULL, PRIMARY KEY (project_id, kind, scope, name));
CREATE INDEX IF NOT EXISTS users_by_group ON users (group_id);
CREATE INDEX IF NOT EXISTS graphs_by_group ON graphs (group_id);
CREATE INDEX IF NOT EXISTS threads_by_user ON threads (project_id, user_id, created_at);
CREATE UNIQUE INDEX IF NOT EXISTS thread_message_once ON thread_messages (project_id, thread_id, episode_id);
"""


def _user(row: sqlite3.Row) -> UserRecord:
    return UserRecord(
        project_id=row["project_id"], user_id=row["user_id"], group_id=row["group_id"], email=row["email"],
        first_name=row["first_name"], last_name=row["last_name"], metadata=json.loads(row["metadata"]),
        created_at=from_ms(row["created_at"]), updated_at=from_ms(row["updated_at"]),
    )


class SQLiteControlPlane:
    """Projects, keys, users, graphs, threads and tasks in one SQLite file."""

    def __init__(self, connection: sqlite3.Connection, *, cache_ttl_s: float = 2.0) -> None:
        self._db = connection
        self._lock = threading.Lock()
        self._access = AccessCache(cache_ttl_s, changes=self._data_version, load_project=self._authenticate,
                                   load_user=self._load_user)

    @classmethod
    def open(cls, path: str | Path, *, cache_ttl_s: float = 2.0) -> SQLiteControlPlane:
        """Open (creating if needed) the control-plane file; ``":memory:"`` for a throwaway one."""
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=10.0)
        db.row_factory = sqlite3.Row
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        return cls(db, cache_ttl_s=cache_ttl_s)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _one(self, sql: str, params: Sequence[Any]) -> sqlite3.Row | None:
        with self._lock:
            row: sqlite3.Row | None = self._db.execute(sql, params).fetchone()
            return row

    def _all(self, sql: str, params: Sequence[Any]) -> list[sqlite3.Row]:
        with self._lock:
            return list(self._db.execute(sql, params).fetchall())

    # -- projects ----------------------------------------------------------------------------------

    def ensure_project(self, name: str) -> Project:
        """The project called ``name``, created if it does not exist."""
        if not name.strip():
            raise InvalidInputError("a project needs a non-empty name")
        with self._tx() as db:
            row = db.execute("SELECT * FROM projects WHERE name = ?", (name,)).fetchone()
            if row is None:
                db.execute("INSERT INTO projects VALUES (?, ?, ?)", (new_id(), name, now_ms()))
                row = db.execute("SELECT * FROM projects WHERE name = ?", (name,)).fetchone()
        return Project(row["id"], row["name"], from_ms(row["created_at"]))

    def get_project(self, name: str) -> Project:
        row = self._one("SELECT * FROM projects WHERE name = ?", (name,))
        if row is None:
            raise NotFoundError(f"no project named {name!r}")
        return Project(row["id"], row["name"], from_ms(row["created_at"]))

    def list_projects(self) -> list[Project]:
        rows = self._all("SELECT * FROM projects ORDER BY name", ())
        return [Project(r["id"], r["name"], from_ms(r["created_at"])) for r in rows]

    # -- API keys ----------------------------------------------------------------------------------

    def create_key(self, project: str, *, name: str = "") -> tuple[ApiKeyInfo, str]:
        """A new key for the project named ``project`` (created if needed). Returns the key's
        record and its secret form, which is never stored and cannot be shown again."""
        owner = self.ensure_project(project)
        key_id, shown, digest = mint_key()
        now = now_ms()
        with self._tx() as db:
            db.execute("INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, NULL)", (key_id, owner.id, name, digest, now))
        self._access.invalidate()  # a cached miss of this key (it cannot be guessed, but be exact)
        info = ApiKeyInfo(key_id, owner.id, name, from_ms(now), None)
        return info, shown

    def revoke_key(self, key_id: str) -> ApiKeyInfo:
        with self._tx() as db:
            updated = db.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (now_ms(), key_id)
            ).rowcount
            row = db.execute("SELECT * FROM api_keys WHERE id = ?", (key_id,)).fetchone()
        self._access.invalidate()
        if row is None:
            raise NotFoundError(f"no API key with id {key_id!r}")
        if not updated:
            raise ConflictError(f"API key {key_id!r} was already revoked")
        return self._key(row)

    def list_keys(self, project: str | None = None) -> list[ApiKeyInfo]:
        if project is None:
            rows = self._all("SELECT * FROM api_keys ORDER BY created_at, id", ())
        else:
            owner = self.get_project(project)
            rows = self._all("SELECT * FROM api_keys WHERE project_id = ? ORDER BY created_at, id", (owner.id,))
        return [self._key(r) for r in rows]

    @staticmethod
    def _key(row: sqlite3.Row) -> ApiKeyInfo:
        return ApiKeyInfo(
            row["id"], row["project_id"], row["name"], from_ms(row["created_at"]), from_ms(row["revoked_at"])
        )

    def _data_version(self) -> int:
        """The cache's change marker: it moves when another connection commits to the file."""
        with self._lock:
            return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def authenticate(self, presented: str) -> Project | None:
        """The project of a valid, unrevoked key; ``None`` for anything else."""
        return self._access.authenticate(presented)

    def _authenticate(self, presented: str) -> Project | None:
        parts = split_key(presented)
        if parts is None:
            return None
        key_id, _ = parts
        row = self._one(
            "SELECT k.secret_sha256, p.id, p.name, p.created_at FROM api_keys k "
            "JOIN projects p ON p.id = k.project_id WHERE k.id = ? AND k.revoked_at IS NULL",
            (key_id,),
        )
        if row is None:
            return None
        if not key_matches(presented, row["secret_sha256"]):
            return None
        return Project(row["id"], row["name"], from_ms(row["created_at"]))

    # -- users -------------------------------------------------------------------------------------

    def create_user(
        self,
        project_id: str,
        user_id: str,
        *,
        email: str | None = None,
        first_name: str | None = None,
        last_name: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> UserRecord:
        now = now_ms()
        group_id = new_group_id("user")
        try:
            with self._tx() as db:
                db.execute(
                    "INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (project_id, user_id, group_id, email, first_name, last_name,
                     json.dumps(metadata or {}), now, now),
                )
        except sqlite3.IntegrityError:
            raise ConflictError(f"user {user_id!r} already exists") from None
        return self.get_user(project_id, user_id)

    def get_user(self, project_id: str, user_id: str) -> UserRecord:
        return self._access.get_user(project_id, user_id)

    def _load_user(self, project_id: str, user_id: str) -> UserRecord:
        row = self._one("SELECT * FROM users WHERE project_id = ? AND user_id = ?", (project_id, user_id))
        if row is None:
            raise NotFoundError(f"user {user_id!r} not found")
        return _user(row)

    def update_user(self, project_id: str, user_id: str, **changes: Any) -> UserRecord:
        """Change ``email``, ``first_name``, ``last_name`` or ``metadata`` (replaced whole)."""
        allowed = {"email", "first_name", "last_name", "metadata"}
        unknown = set(changes) - allowed
        if unknown:
            raise InvalidInputError(f"cannot change {sorted(unknown)} of a user")
        current = self._load_user(project_id, user_id)
        values = {
            "email": changes.get("email", current.email),
            "first_name": changes.get("first_name", current.first_name),
            "last_name": changes.get("last_name", current.last_name),
            "metadata": json.dumps(changes.get("metadata", current.metadata)),
        }
        with self._tx() as db:
            db.execute(
                "UPDATE users SET email = ?, first_name = ?, last_name = ?, metadata = ?, updated_at = ? "
                "WHERE project_id = ? AND user_id = ?",
                (*values.values(), now_ms(), project_id, user_id),
            )
        self._access.invalidate()
        return self.get_user(project_id, user_id)

    def delete_user(self, project_id: str, user_id: str) -> UserRecord:
        """Forget the user, their threads and their tasks; the caller deletes their graph."""
        user = self._load_user(project_id, user_id)
        with self._tx() as db:
            db.execute(
                "DELETE FROM thread_messages WHERE project_id = ? AND thread_id IN "
                "(SELECT thread_id FROM threads WHERE project_id = ? AND user_id = ?)",
                (project_id, project_id, user_id),
            )
            db.execute("DELETE FROM threads WHERE project_id = ? AND user_id = ?", (project_id, user_id))
            db.execute("DELETE FROM tasks WHERE project_id = ? AND group_id = ?", (project_id, user.group_id))
            db.execute("DELETE FROM project_documents WHERE project_id = ? AND scope = ?", (project_id, user.group_id))
            db.execute("DELETE FROM users WHERE project_id = ? AND user_id = ?", (project_id, user_id))
        self._access.invalidate()
        return user

    def list_users(self, project_id: str, *, limit: int = 50, offset: int = 0) -> list[UserRecord]:
        rows = self._all(
            "SELECT * FROM users WHERE project_id = ? ORDER BY created_at, user_id LIMIT ? OFFSET ?",
            (project_id, limit, offset),
        )
        return [_user(r) for r in rows]

    def count_users(self, project_id: str) -> int:
        row = self._one("SELECT COUNT(*) AS n FROM users WHERE project_id = ?", (project_id,))
        return int(row["n"]) if row else 0

    # -- named graphs ------------------------------------------------------------------------------

    def create_graph(self, project_id: str, graph_id: str, *, name: str = "", description: str = "") -> GraphRecord:
        group_id = new_group_id("graph")
        try:
            with self._tx() as db:
                db.execute(
                    "INSERT INTO graphs VALUES (?, ?, ?, ?, ?, ?)",
                    (project_id, graph_id, group_id, name, description, now_ms()),
                )
        except sqlite3.IntegrityError:
            raise ConflictError(f"graph {graph_id!r} already exists") from None
        return self.get_graph(project_id, graph_id)

    def get_graph(self, project_id: str, graph_id: str) -> GraphRecord:
        row = self._one("SELECT * FROM graphs WHERE project_id = ? AND graph_id = ?", (project_id, graph_id))
        if row is None:
            raise NotFoundError(f"graph {graph_id!r} not found")
        return self._graph(row)

    def list_graphs(self, project_id: str, *, limit: int = 50, offset: int = 0) -> list[GraphRecord]:
        rows = self._all(
            "SELECT * FROM graphs WHERE project_id = ? ORDER BY created_at, graph_id LIMIT ? OFFSET ?",
            (project_id, limit, offset),
        )
        return [self._graph(r) for r in rows]

    def delete_graph(self, project_id: str, graph_id: str) -> GraphRecord:
        graph = self.get_graph(project_id, graph_id)
        with self._tx() as db:
            db.execute("DELETE FROM tasks WHERE project_id = ? AND group_id = ?", (project_id, graph.group_id))
            db.execute("DELETE FROM project_documents WHERE project_id = ? AND scope = ?", (project_id, graph.group_id))
            db.execute("DELETE FROM graphs WHERE project_id = ? AND graph_id = ?", (project_id, graph_id))
        return graph

    def update_graph(self, project_id: str, graph_id: str, *, name: str | None = None,
                     description: str | None = None) -> GraphRecord:
        current = self.get_graph(project_id, graph_id)
        with self._tx() as db:
            db.execute(
                "UPDATE graphs SET name = ?, description = ? WHERE project_id = ? AND graph_id = ?",
                (current.name if name is None else name, current.description if description is None else description,
                 project_id, graph_id),
            )
        return self.get_graph(project_id, graph_id)

    def count_graphs(self, project_id: str) -> int:
        row = self._one("SELECT COUNT(*) AS n FROM graphs WHERE project_id = ?", (project_id,))
        return int(row["n"]) if row else 0

    def project_of_group(self, group_id: str) -> str | None:
        """The project a store group (a user's or a named graph) belongs to; ``None`` for a group
        no project owns (made through the library or the MCP server)."""
        row = self._one(
            "SELECT project_id FROM users WHERE group_id = ? "
            "UNION ALL SELECT project_id FROM graphs WHERE group_id = ?",
            (group_id, group_id),
        )
        return None if row is None else str(row["project_id"])

    def owned_groups(self, project_id: str) -> list[tuple[str, str, str]]:
        """Every store group of the project as ``(kind, name, group_id)``: ``("user", user_id, …)``
        for its users' graphs, then ``("graph", graph_id, …)`` for its named graphs."""
        rows = self._all(
            "SELECT 'user' AS kind, user_id AS name, group_id FROM users WHERE project_id = ? "
            "UNION ALL SELECT 'graph', graph_id, group_id FROM graphs WHERE project_id = ?",
            (project_id, project_id),
        )
        return [(r["kind"], r["name"], r["group_id"]) for r in rows]

    @staticmethod
    def _graph(row: sqlite3.Row) -> GraphRecord:
        return GraphRecord(
            row["project_id"], row["graph_id"], row["group_id"], row["name"], row["description"],
            from_ms(row["created_at"]),
        )

    # -- threads -----------------------------------------------------------------------------------

    def create_thread(self, project_id: str, thread_id: str, user_id: str) -> ThreadRecord:
        self.get_user(project_id, user_id)
        try:
            with self._tx() as db:
                db.execute("INSERT INTO threads VALUES (?, ?, ?, ?)", (project_id, thread_id, user_id, now_ms()))
        except sqlite3.IntegrityError:
            raise ConflictError(f"thread {thread_id!r} already exists") from None
        return self.get_thread(project_id, thread_id)

    def get_thread(self, project_id: str, thread_id: str) -> ThreadRecord:
        row = self._one("SELECT * FROM threads WHERE project_id = ? AND thread_id = ?", (project_id, thread_id))
        if row is None:
            raise NotFoundError(f"thread {thread_id!r} not found")
        return self._thread(row)

    def list_threads(
        self, project_id: str, *, user_id: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[ThreadRecord]:
        if user_id is None:
            sql, params = "WHERE project_id = ?", [project_id]
        else:
            sql, params = "WHERE project_id = ? AND user_id = ?", [project_id, user_id]
        rows = self._all(
            f"SELECT * FROM threads {sql} ORDER BY created_at, thread_id LIMIT ? OFFSET ?", (*params, limit, offset)
        )
        return [self._thread(r) for r in rows]

    def delete_thread(self, project_id: str, thread_id: str) -> ThreadRecord:
        """Forget the thread and its message list; the messages stay in the user's graph."""
        thread = self.get_thread(project_id, thread_id)
        with self._tx() as db:
            db.execute("DELETE FROM thread_messages WHERE project_id = ? AND thread_id = ?", (project_id, thread_id))
            db.execute("DELETE FROM threads WHERE project_id = ? AND thread_id = ?", (project_id, thread_id))
        return thread

    def append_messages(self, project_id: str, thread_id: str, group_id: str, episode_ids: Sequence[str]) -> TaskRecord:
        """Add these message (episode) ids to the end of the thread and create their task, in one
        transaction. Called *before* the episodes are stored: the episode is the commit point, and
        an id whose episode was never stored (the process died in between) is read as no message
        (see :meth:`ProjectSpace.add_messages`). A message sent again keeps its first place."""
        with self._tx() as db:
            row = db.execute(
                "SELECT COALESCE(MAX(seq), -1) AS top FROM thread_messages WHERE project_id = ? AND thread_id = ?",
                (project_id, thread_id),
            ).fetchone()
            start = int(row["top"]) + 1
            db.executemany(
                "INSERT OR IGNORE INTO thread_messages VALUES (?, ?, ?, ?)",
                [(project_id, thread_id, start + i, eid) for i, eid in enumerate(episode_ids)],
            )
            return self._insert_task(db, project_id, group_id, episode_ids)

    def message_ids(self, project_id: str, thread_id: str, *, last: int | None = None) -> list[str]:
        """The thread's message (episode) ids, oldest first; ``last`` keeps only the newest n."""
        rows = self._all(
            "SELECT episode_id FROM thread_messages WHERE project_id = ? AND thread_id = ? ORDER BY seq DESC LIMIT ?",
            (project_id, thread_id, -1 if last is None else last),
        )
        return [r["episode_id"] for r in reversed(rows)]

    @staticmethod
    def _thread(row: sqlite3.Row) -> ThreadRecord:
        return ThreadRecord(row["project_id"], row["thread_id"], row["user_id"], from_ms(row["created_at"]))

    # -- tasks -------------------------------------------------------------------------------------

    def create_task(self, project_id: str, group_id: str, episode_ids: Sequence[str]) -> TaskRecord:
        """A task for a write of these episodes, created before they are stored (as above)."""
        with self._tx() as db:
            return self._insert_task(db, project_id, group_id, episode_ids)

    @staticmethod
    def _insert_task(db: sqlite3.Connection, project_id: str, group_id: str, episode_ids: Sequence[str]) -> TaskRecord:
        task_id = new_id()
        now = now_ms()
        db.execute("INSERT INTO tasks VALUES (?, ?, ?, ?, ?)",
                   (project_id, task_id, group_id, json.dumps(list(episode_ids)), now))
        return TaskRecord(project_id, task_id, group_id, tuple(episode_ids), from_ms(now))

    def get_task(self, project_id: str, task_id: str) -> TaskRecord:
        row = self._one("SELECT * FROM tasks WHERE project_id = ? AND task_id = ?", (project_id, task_id))
        if row is None:
            raise NotFoundError(f"task {task_id!r} not found")
        return TaskRecord(
            row["project_id"], row["task_id"], row["group_id"], tuple(json.loads(row["episode_ids"])),
            from_ms(row["created_at"]),
        )

    def count_threads(self, project_id: str, *, user_id: str | None = None) -> int:
        if user_id is None:
            row = self._one("SELECT COUNT(*) AS n FROM threads WHERE project_id = ?", (project_id,))
        else:
            row = self._one("SELECT COUNT(*) AS n FROM threads WHERE project_id = ? AND user_id = ?",
                            (project_id, user_id))
        return int(row["n"]) if row else 0

    # -- project documents -------------------------------------------------------------------------

    def put_document(self, project_id: str, kind: str, scope: str, name: str, body: Any) -> DocumentRecord:
        """Create or replace a named document (see :class:`DocumentRecord`)."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO project_documents VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, kind, scope, name) "
                "DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at",
                (project_id, kind, scope, name, json.dumps(body), now_ms()),
            )
        return self.get_document(project_id, kind, scope, name)

    def get_document(self, project_id: str, kind: str, scope: str, name: str) -> DocumentRecord:
        row = self._one(
            "SELECT * FROM project_documents WHERE project_id = ? AND kind = ? AND scope = ? AND name = ?",
            (project_id, kind, scope, name),
        )
        if row is None:
            raise NotFoundError(f"{kind.replace('_', ' ')} {name!r} not found")
        return self._document(row)

    def list_documents(self, project_id: str, kind: str, *, scope: str | None = None) -> list[DocumentRecord]:
        """A kind's documents, oldest name first; ``scope`` narrows to one scope."""
        if scope is None:
            rows = self._all("SELECT * FROM project_documents WHERE project_id = ? AND kind = ? ORDER BY scope, name",
                             (project_id, kind))
        else:
            rows = self._all(
                "SELECT * FROM project_documents WHERE project_id = ? AND kind = ? AND scope = ? ORDER BY name",
                (project_id, kind, scope),
            )
        return [self._document(r) for r in rows]

    def delete_document(self, project_id: str, kind: str, scope: str, name: str) -> bool:
        """Forget a document; ``False`` when there was none."""
        with self._tx() as db:
            deleted = db.execute(
                "DELETE FROM project_documents WHERE project_id = ? AND kind = ? AND scope = ? AND name = ?",
                (project_id, kind, scope, name),
            ).rowcount
        return bool(deleted)

    @staticmethod
    def _document(row: sqlite3.Row) -> DocumentRecord:
        return DocumentRecord(row["project_id"], row["kind"], row["scope"], row["name"], json.loads(row["body"]),
                              from_ms(row["updated_at"]))
