"""The control-plane port: its protocol, its records, API-key helpers and the lookup cache both
backends share.

The knowledge graph lives in the store; who may see which part of it lives in the control plane
(:class:`ControlPlane`, the protocol the service, the auth check and the CLI use):

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

The two lookups every request makes, :meth:`ControlPlane.authenticate` and
:meth:`ControlPlane.get_user`, are served from an :class:`AccessCache` for ``cache_ttl_s`` seconds
(default 2). It has one way out, :meth:`AccessCache.invalidate`: a backend calls it after its own
writes that can take access away, and the cache calls it itself when the backend's change marker
(something that moves whenever another process commits) has moved since the last lookup.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar, overload

from chronomem.domain import new_id
from chronomem.timeutil import from_epoch_ms, to_epoch_ms, utc_now

__all__ = [
    "AccessCache",
    "ApiKeyInfo",
    "ControlPlane",
    "DocumentRecord",
    "ExpiringCache",
    "GraphRecord",
    "Project",
    "TaskRecord",
    "ThreadRecord",
    "UserRecord",
    "from_ms",
    "key_matches",
    "mint_key",
    "new_group_id",
    "now_ms",
    "split_key",
]

_KEY_PREFIX = "cmk_"


# -- API keys and group ids ------------------------------------------------------------------------


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


def new_group_id(kind: str) -> str:
    """A fresh store group for a user's graph (``kind="user"``) or a named graph (``"graph"``)."""
    return f"{kind[0]}_{new_id()}"


# -- stored times ----------------------------------------------------------------------------------


def now_ms() -> int:
    """The current time as both backends store it: integer milliseconds since the epoch, UTC."""
    return to_epoch_ms(utc_now()) or 0


@overload
def from_ms(value: int) -> datetime: ...
@overload
def from_ms(value: None) -> None: ...
def from_ms(value: int | None) -> datetime | None:
    """A stored time as a UTC datetime; ``None`` stays ``None``.

    ``None`` is stored for one thing only, a key never revoked, and there it must read back as
    ``None``: a fallback to "now" would list an active key as revoked. Every other time is written
    with its record and never missing, so there is nothing to fall back for, and a made-up "now"
    would only give a damaged record a new creation time at every read."""
    return from_epoch_ms(value)


# -- records ---------------------------------------------------------------------------------------


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


# -- the protocol ----------------------------------------------------------------------------------


class ControlPlane(Protocol):
    """Who owns what, for the service (:class:`~chronomem.app.tenancy.ProjectSpace`), the auth
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


# -- the lookup cache ------------------------------------------------------------------------------

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ExpiringCache(Generic[K, V]):
    """Lookups kept ``ttl_s`` seconds, at most ``capacity`` of them (past that it starts over: a
    lookup is cheap, an unbounded dict is not). A failed load (an exception) is not kept, nor is
    one that a :meth:`clear` overtook: it may have read what the clear was for."""

    def __init__(self, ttl_s: float, capacity: int) -> None:
        self._ttl = ttl_s
        self._capacity = capacity
        self._entries: dict[K, tuple[float, V]] = {}
        self._clears = 0

    def lookup(self, key: K, load: Callable[[], V]) -> V:
        cached = self._entries.get(key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        clears = self._clears
        value = load()
        if clears != self._clears:
            return value
        if len(self._entries) > self._capacity:
            self._entries.clear()
        self._entries[key] = (time.monotonic() + self._ttl, value)
        return value

    def clear(self) -> None:
        self._clears += 1
        self._entries.clear()


class AccessCache:
    """The answers of :meth:`ControlPlane.authenticate` (by presented key) and
    :meth:`ControlPlane.get_user` (by project and user id), kept ``ttl_s`` seconds.

    ``changes`` returns the backend's change marker, read before every lookup: when it differs from
    the last one read, another process has committed, and the cache is dropped. The backend calls
    :meth:`invalidate` after each of its own writes that can take access away (a key created or
    revoked, a user changed or deleted), since its own commits may not move the marker. Both paths
    drop everything: such writes are rare, and a dropped answer costs one lookup."""

    def __init__(
        self,
        ttl_s: float,
        *,
        changes: Callable[[], object],
        load_project: Callable[[str], Project | None],
        load_user: Callable[[str, str], UserRecord],
    ) -> None:
        self._changes = changes
        self._load_project = load_project
        self._load_user = load_user
        self._projects: ExpiringCache[str, Project | None] = ExpiringCache(ttl_s, 10_000)
        self._users: ExpiringCache[tuple[str, str], UserRecord] = ExpiringCache(ttl_s, 100_000)
        self._seen: object = None  # the marker as the caches last saw it; None before any lookup

    def authenticate(self, presented: str) -> Project | None:
        self._notice_changes()
        return self._projects.lookup(presented, lambda: self._load_project(presented))

    def get_user(self, project_id: str, user_id: str) -> UserRecord:
        self._notice_changes()
        return self._users.lookup((project_id, user_id), lambda: self._load_user(project_id, user_id))

    def invalidate(self) -> None:
        """Forget every cached answer."""
        self._projects.clear()
        self._users.clear()

    def _notice_changes(self) -> None:
        marker = self._changes()
        if marker != self._seen:
            self.invalidate()
            self._seen = marker
