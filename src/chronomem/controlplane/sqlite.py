"""The control plane: projects, API keys, users, named graphs, threads and ingestion tasks.

The knowledge graph lives in the store; who may see which part of it lives in the control plane
(:class:`ControlPlane`, the protocol the service, the auth check and the CLI use), which
:func:`open_control_plane` picks by the store's traits:

- with an embedded store, a small SQLite file of its own (:class:`SQLiteControlPlane`,
  ``Settings.resolved_control_db``, by default ``<data_dir>/control.db``), so that the store stays
  a pure graph;
- with a server store (FalkorDB, a Redis server), plain Redis hashes beside the graphs on the same
  server (:class:`~chronomem.service.controlplane_redis.RedisControlPlane`), so that every API
  server and worker on every machine shares the same keys, users, threads and tasks.

- A **project** owns API keys, users and named graphs. Nothing crosses projects: every lookup below
  takes the project id and a miss in another project looks exactly like a miss.
- An **API key** is shown once when created (``cmk_<key id>_<secret>``); only the SHA-256 of its
  secret is kept (the secret is 256 random bits, so a slow hash buys nothing).
- A **user**'s graph and a **named graph** are store groups with a random id minted when the user
  or graph is created (``u_…``, ``g_…``) and kept here: no caller-chosen string ever becomes a group
  id, two projects can both have a user "alice" without sharing anything, and a user deleted and
  created again starts from an empty graph even if a late write reached the old one.
- A **thread** belongs to a user; its messages are episodes of the user's graph, and the thread
  keeps their ids in order.
- A **task** is one accepted write (a batch of episodes); its status is derived from theirs.
- A thread's new ids and their task are written here *before* the episodes are stored, and an id
  counts only once its episode exists: the episode write in the graph store is the single commit
  point of a message, its place in the thread and its task (docs/service.md, "Crash consistency").

Methods are synchronous: each is one short SQLite transaction (microseconds), cheaper than a thread
hop. The file is opened in WAL mode so the CLI can create keys while a server runs.

The two lookups every request makes, :meth:`ControlPlane.authenticate` and
:meth:`ControlPlane.get_user`, are served from a small in-process cache for ``cache_ttl_s`` seconds
(default 2). Changes made through the same object clear it at once. Changes committed by *another*
process (``chronomem keys revoke`` while a server runs, or another server process) clear it at the
next lookup: ``PRAGMA data_version`` tells when another connection has committed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from chronomem.domain import new_id
from chronomem.errors import ConflictError, InvalidInputError, NotFoundError
from chronomem.store.factory import store_traits
from chronomem.timeutil import from_epoch_ms, to_epoch_ms, utc_now

if TYPE_CHECKING:
    from chronomem.settings import Settings

__all__ = [
    "ApiKeyInfo",
    "ControlPlane",
    "DocumentRecord",
    "GraphRecord",
    "Project",
    "SQLiteControlPlane",
    "TaskRecord",
    "ThreadRecord",
    "UserRecord",
    "key_matches",
    "mint_key",
    "new_group_id",
    "open_control_plane",
    "split_key",
]

_KEY_PREFIX = "cmk_"

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


def mint_key(key_id: str | None = None) -> tuple[str, str, str]:
    """A new key: ``(key id, the secret form shown once, the SHA-256 of its secret to store)``."""
    key_id = key_id or secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    return key_id, f"{_KEY_PREFIX}{key_id}_{secret}", hashlib.sha256(secret.encode()).hexdigest()


def key_matches(presented: str, stored_sha256: str) -> bool:
    """Whether the secret of ``presented`` hashes to ``stored_sha256`` (in constant time)."""
    _, secret = split_key(presented) or ("", "")
    return hmac.compare_digest(hashlib.sha256(secret.encode()).hexdigest(), stored_sha256)


def split_key(presented: str) -> tuple[str, str] | None:
    """``(key id, secret)`` of a key in the ``cmk_<id>_<secret>`` form, ``None`` for anything else."""
    if not presented.startswith(_KEY_PREFIX):
        return None
    key_id, sep, secret = presented[len(_KEY_PREFIX) :].partition("_")
    return (key_id, secret) if sep and secret and key_id else None


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """A named JSON document a project keeps: a context template, a summary instruction, an
    ontology. ``scope`` says what it applies to ("" = the whole project, else a user's or graph's
    group id); ``kind`` keeps the families apart."""

    project_id: str
    kind: str
    scope: str
    name: str
    body: Any
    updated_at: datetime


def new_group_id(kind: str) -> str:
    """A fresh store group for a user's graph (``kind="user"``) or a named graph (``"graph"``)."""
    return f"{kind[0]}_{new_id()}"


@dataclass(frozen=True, slots=True)
class Project:
    id: str
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ApiKeyInfo:
    id: str
    project_id: str
    name: str
    created_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True, slots=True)
class UserRecord:
    project_id: str
    user_id: str
    group_id: str
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: datetime = field(default_factory=utc_now)
    updated_at: datetime = field(default_factory=utc_now)


@dataclass(frozen=True, slots=True)
class GraphRecord:
    project_id: str
    graph_id: str
    group_id: str
    name: str
    description: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ThreadRecord:
    project_id: str
    thread_id: str
    user_id: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class TaskRecord:
    project_id: str
    task_id: str
    group_id: str
    episode_ids: tuple[str, ...]
    created_at: datetime


def _ms() -> int:
    return to_epoch_ms(utc_now()) or 0


def _dt(value: int | None) -> datetime | None:
    return from_epoch_ms(value)


def _user(row: sqlite3.Row) -> UserRecord:
    return UserRecord(
        project_id=row["project_id"], user_id=row["user_id"], group_id=row["group_id"], email=row["email"],
        first_name=row["first_name"], last_name=row["last_name"], metadata=json.loads(row["metadata"]),
        created_at=_dt(row["created_at"]) or utc_now(), updated_at=_dt(row["updated_at"]) or utc_now(),
    )


class ControlPlane(Protocol):
    """Who owns what, for the service (:class:`~chronomem.service.tenancy.ProjectSpace`), the auth
    check and the CLI. Every lookup takes the project id, and a miss in another project looks
    exactly like a miss. Methods are synchronous: each is one short transaction (SQLite) or one
    round trip or two (Redis). Misses raise ``NotFoundError``, duplicates ``ConflictError``."""

    def close(self) -> None: ...

    # projects and keys (the CLI; ``authenticate`` on every request)
    def ensure_project(self, name: str) -> Project:
        """The project called ``name``, created if it does not exist."""
    def get_project(self, name: str) -> Project: ...
    def list_projects(self) -> list[Project]: ...
    def create_key(self, project: str, *, name: str = "") -> tuple[ApiKeyInfo, str]:
        """A new key of the project named ``project`` (created if needed) and its secret form,
        which is never stored."""
    def revoke_key(self, key_id: str) -> ApiKeyInfo:
        """Revoke at once, in every process that shares this control plane."""
    def list_keys(self, project: str | None = None) -> list[ApiKeyInfo]: ...
    def authenticate(self, presented: str) -> Project | None:
        """The project of a valid, unrevoked key; ``None`` for anything else."""

    # users and named graphs
    def create_user(self, project_id: str, user_id: str, *, email: str | None = None,
                    first_name: str | None = None, last_name: str | None = None,
                    metadata: dict[str, Any] | None = None) -> UserRecord: ...
    def get_user(self, project_id: str, user_id: str) -> UserRecord:
        """Cached briefly; a user deleted anywhere is gone here at the next lookup."""
    def update_user(self, project_id: str, user_id: str, **changes: Any) -> UserRecord:
        """Change ``email``, ``first_name``, ``last_name`` or ``metadata`` (replaced whole)."""
    def delete_user(self, project_id: str, user_id: str) -> UserRecord:
        """Forget the user, their threads, tasks and documents; the caller deletes their graph."""
    def list_users(self, project_id: str, *, limit: int = 50, offset: int = 0) -> list[UserRecord]: ...
    def count_users(self, project_id: str) -> int: ...
    def create_graph(self, project_id: str, graph_id: str, *, name: str = "", description: str = "") -> GraphRecord: ...
    def get_graph(self, project_id: str, graph_id: str) -> GraphRecord: ...
    def list_graphs(self, project_id: str, *, limit: int = 50, offset: int = 0) -> list[GraphRecord]: ...
    def delete_graph(self, project_id: str, graph_id: str) -> GraphRecord:
        """Forget the graph, its tasks and its documents; the caller deletes the group."""
    def update_graph(self, project_id: str, graph_id: str, *, name: str | None = None,
                     description: str | None = None) -> GraphRecord: ...
    def count_graphs(self, project_id: str) -> int: ...
    def project_of_group(self, group_id: str) -> str | None:
        """The project a store group belongs to; ``None`` for a group no project owns."""
    def owned_groups(self, project_id: str) -> list[tuple[str, str, str]]:
        """Every store group of the project as ``(kind, name, group_id)``: its users' graphs
        (``"user"``), then its named graphs (``"graph"``)."""

    # threads and tasks
    def create_thread(self, project_id: str, thread_id: str, user_id: str) -> ThreadRecord: ...
    def get_thread(self, project_id: str, thread_id: str) -> ThreadRecord: ...
    def list_threads(self, project_id: str, *, user_id: str | None = None, limit: int = 50,
                     offset: int = 0) -> list[ThreadRecord]: ...
    def delete_thread(self, project_id: str, thread_id: str) -> ThreadRecord:
        """Forget the thread and its message list; the messages stay in the user's graph."""
    def append_messages(self, project_id: str, thread_id: str, group_id: str,
                        episode_ids: Sequence[str]) -> TaskRecord:
        """Append these ids to the thread (an id already there keeps its first place) and create
        their task, atomically, *before* the episodes are stored (see module docstring)."""
    def message_ids(self, project_id: str, thread_id: str, *, last: int | None = None) -> list[str]:
        """The thread's message ids, oldest first; ``last`` keeps the newest n."""
    def create_task(self, project_id: str, group_id: str, episode_ids: Sequence[str]) -> TaskRecord: ...
    def get_task(self, project_id: str, task_id: str) -> TaskRecord: ...
    def count_threads(self, project_id: str, *, user_id: str | None = None) -> int: ...

    # project documents (context templates, instructions, ontologies; see DocumentRecord)
    def put_document(self, project_id: str, kind: str, scope: str, name: str, body: Any) -> DocumentRecord:
        """Create or replace a named document."""
    def get_document(self, project_id: str, kind: str, scope: str, name: str) -> DocumentRecord: ...
    def list_documents(self, project_id: str, kind: str, *, scope: str | None = None) -> list[DocumentRecord]:
        """A kind's documents ordered by (scope, name); ``scope`` narrows to one scope."""
    def delete_document(self, project_id: str, kind: str, scope: str, name: str) -> bool:
        """Forget a document; ``False`` when there was none."""


def open_control_plane(settings: Settings) -> ControlPlane:
    """The control plane the settings' store calls for: beside the graphs on a server store (shared
    by every process on every machine), else the SQLite file ``settings.resolved_control_db``."""
    if store_traits(settings.resolved_store_url).shared_control_plane:
        from chronomem.service.controlplane_redis import RedisControlPlane

        return RedisControlPlane.connect(settings.resolved_store_url)
    return SQLiteControlPlane.open(settings.resolved_control_db)


K = TypeVar("K")
V = TypeVar("V")


class ExpiringCache(Generic[K, V]):
    """Lookups kept ``ttl_s`` seconds, at most ``capacity`` of them (past that it starts over: a
    lookup is cheap, an unbounded dict is not). A failed load (an exception) is not kept."""

    def __init__(self, ttl_s: float, capacity: int) -> None:
        self._ttl = ttl_s
        self._capacity = capacity
        self._entries: dict[K, tuple[float, V]] = {}

    def lookup(self, key: K, load: Callable[[], V]) -> V:
        cached = self._entries.get(key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        value = load()
        if len(self._entries) > self._capacity:
            self._entries.clear()
        self._entries[key] = (time.monotonic() + self._ttl, value)
        return value

    def pop(self, key: K) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()


class SQLiteControlPlane:
    """Projects, keys, users, graphs, threads and tasks in one SQLite file."""

    def __init__(self, connection: sqlite3.Connection, *, cache_ttl_s: float = 2.0) -> None:
        self._db = connection
        self._lock = threading.Lock()
        self._keys: ExpiringCache[str, Project | None] = ExpiringCache(cache_ttl_s, 10_000)
        self._users: ExpiringCache[tuple[str, str], UserRecord] = ExpiringCache(cache_ttl_s, 100_000)
        self._data_version: int | None = None  # the file as the caches saw it

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
                db.execute("INSERT INTO projects VALUES (?, ?, ?)", (new_id(), name, _ms()))
                row = db.execute("SELECT * FROM projects WHERE name = ?", (name,)).fetchone()
        return Project(row["id"], row["name"], _dt(row["created_at"]) or utc_now())

    def get_project(self, name: str) -> Project:
        row = self._one("SELECT * FROM projects WHERE name = ?", (name,))
        if row is None:
            raise NotFoundError(f"no project named {name!r}")
        return Project(row["id"], row["name"], _dt(row["created_at"]) or utc_now())

    def list_projects(self) -> list[Project]:
        rows = self._all("SELECT * FROM projects ORDER BY name", ())
        return [Project(r["id"], r["name"], _dt(r["created_at"]) or utc_now()) for r in rows]

    # -- API keys ----------------------------------------------------------------------------------

    def create_key(self, project: str, *, name: str = "") -> tuple[ApiKeyInfo, str]:
        """A new key for the project named ``project`` (created if needed). Returns the key's
        record and its secret form, which is never stored and cannot be shown again."""
        owner = self.ensure_project(project)
        key_id, shown, digest = mint_key()
        now = _ms()
        with self._tx() as db:
            db.execute("INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, NULL)", (key_id, owner.id, name, digest, now))
        info = ApiKeyInfo(key_id, owner.id, name, _dt(now) or utc_now(), None)
        return info, shown

    def revoke_key(self, key_id: str) -> ApiKeyInfo:
        self._keys.clear()
        with self._tx() as db:
            updated = db.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (_ms(), key_id)
            ).rowcount
            row = db.execute("SELECT * FROM api_keys WHERE id = ?", (key_id,)).fetchone()
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
            row["id"], row["project_id"], row["name"], _dt(row["created_at"]) or utc_now(), _dt(row["revoked_at"])
        )

    def _drop_caches_if_changed_elsewhere(self) -> None:
        with self._lock:
            version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            self._keys.clear()
            self._users.clear()
            self._data_version = version

    def authenticate(self, presented: str) -> Project | None:
        """The project of a valid, unrevoked key; ``None`` for anything else."""
        self._drop_caches_if_changed_elsewhere()
        return self._keys.lookup(presented, lambda: self._authenticate(presented))

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
        return Project(row["id"], row["name"], _dt(row["created_at"]) or utc_now())

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
        now = _ms()
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
        self._drop_caches_if_changed_elsewhere()
        return self._users.lookup((project_id, user_id), lambda: self._load_user(project_id, user_id))

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
        current = self.get_user(project_id, user_id)
        self._users.pop((project_id, user_id))
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
                (*values.values(), _ms(), project_id, user_id),
            )
        self._users.pop((project_id, user_id))
        return self.get_user(project_id, user_id)

    def delete_user(self, project_id: str, user_id: str) -> UserRecord:
        """Forget the user, their threads and their tasks; the caller deletes their graph."""
        user = self.get_user(project_id, user_id)
        self._users.pop((project_id, user_id))
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
                    (project_id, graph_id, group_id, name, description, _ms()),
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
            _dt(row["created_at"]) or utc_now(),
        )

    # -- threads -----------------------------------------------------------------------------------

    def create_thread(self, project_id: str, thread_id: str, user_id: str) -> ThreadRecord:
        self.get_user(project_id, user_id)
        try:
            with self._tx() as db:
                db.execute("INSERT INTO threads VALUES (?, ?, ?, ?)", (project_id, thread_id, user_id, _ms()))
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
        return ThreadRecord(row["project_id"], row["thread_id"], row["user_id"], _dt(row["created_at"]) or utc_now())

    # -- tasks -------------------------------------------------------------------------------------

    def create_task(self, project_id: str, group_id: str, episode_ids: Sequence[str]) -> TaskRecord:
        """A task for a write of these episodes, created before they are stored (as above)."""
        with self._tx() as db:
            return self._insert_task(db, project_id, group_id, episode_ids)

    @staticmethod
    def _insert_task(db: sqlite3.Connection, project_id: str, group_id: str, episode_ids: Sequence[str]) -> TaskRecord:
        task_id = new_id()
        now = _ms()
        db.execute("INSERT INTO tasks VALUES (?, ?, ?, ?, ?)",
                   (project_id, task_id, group_id, json.dumps(list(episode_ids)), now))
        return TaskRecord(project_id, task_id, group_id, tuple(episode_ids), _dt(now) or utc_now())

    def get_task(self, project_id: str, task_id: str) -> TaskRecord:
        row = self._one("SELECT * FROM tasks WHERE project_id = ? AND task_id = ?", (project_id, task_id))
        if row is None:
            raise NotFoundError(f"task {task_id!r} not found")
        return TaskRecord(
            row["project_id"], row["task_id"], row["group_id"], tuple(json.loads(row["episode_ids"])),
            _dt(row["created_at"]) or utc_now(),
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
                (project_id, kind, scope, name, json.dumps(body), _ms()),
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
                              _dt(row["updated_at"]) or utc_now())
