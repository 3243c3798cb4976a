"""The UUID of each user, graph and thread of a project, and back: Zep v4 addresses them so (the
compatibility API at ``/api/v4``), while chronomem's control plane names them by id; the native
API's ``/lookup`` and the MCP server's ``lookup`` tool go from one to the other for every shell.

- A user's or a named graph's UUID is its store group's (``u_<hex>`` / ``g_<hex>``, minted when it was
  made, so a user deleted and made again gets a new one); a user's graph is addressed by the user's
  UUID, as on Zep. A thread's UUID is derived from its project, id and creation time.
- An object made through ``/api/v4`` without an external id (``user_id``, ``thread_id``) gets a
  control-plane id of the form ``zep4~<hex>``, shown as no external id; objects made through
  ``/api/v2`` or ``/api/v3`` keep theirs, which ``lookup`` resolves.
- Going back from a UUID uses an index in the control plane (project documents of kind
  ``zep_v4_address``, written when ``/api/v4`` makes an object): one keyed read. A UUID the index
  lacks (an object made through another API) is searched among the project's users, graphs or
  threads once, then indexed. Every hit is checked against the object found, so an entry of a
  deleted object answers 404.
- Episodes, nodes and edges already have UUID4 ids (stored as hex): they are shown in the
  canonical form and read back in either.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Literal

from chronomem.app.tenancy import GraphRef, ProjectSpace
from chronomem.controlplane import ControlPlane, GraphRecord, ThreadRecord, UserRecord
from chronomem.errors import NotFoundError

__all__ = [
    "MINTED_PREFIX",
    "Addresses",
    "Target",
    "external_id",
    "minted_id",
    "object_id",
    "wire_id",
]

MINTED_PREFIX = "zep4~"
INDEX = "zep_v4_address"  # project document kind: name = UUID, body = {"kind", "id"}
_NAMESPACE = uuid.UUID("5d0c6f61-8a43-4d4b-9d3e-6a1c1c2f0b4e")
_SCAN = 1_000
Kind = Literal["user", "graph", "thread"]


def minted_id() -> str:
    """A control-plane id for an object made without an external id."""
    return MINTED_PREFIX + uuid.uuid4().hex


def external_id(control_id: str) -> str | None:
    """The external id a control-plane id stands for (``None`` for a minted one)."""
    return None if control_id.startswith(MINTED_PREFIX) else control_id


def wire_id(stored: str) -> str:
    """A chronomem object id as v4 shows it: a UUID4 hex in the canonical form, anything else as is."""
    try:
        return str(uuid.UUID(hex=stored)) if len(stored) == 32 else stored
    except ValueError:
        return stored


def object_id(given: str) -> str:
    """A v4 address of an episode, node, edge or task as chronomem stores it."""
    try:
        return uuid.UUID(given).hex
    except ValueError:
        return given


def _canonical(given: str) -> str | None:
    try:
        return str(uuid.UUID(given))
    except ValueError:
        return None


def group_uuid(group_id: str) -> str:
    """The UUID of a store group (a user's or named graph)."""
    _, _, tail = group_id.partition("_")
    try:
        return str(uuid.UUID(hex=tail))
    except ValueError:
        return str(uuid.uuid5(_NAMESPACE, f"group\0{group_id}"))


@dataclass(frozen=True, slots=True)
class Target:
    """A graph of the project: a user's (``user`` set) or a named one (``graph`` set)."""

    uuid: str
    group_id: str
    user: UserRecord | None = None
    graph: GraphRecord | None = None

    @property
    def ref(self) -> GraphRef:
        if self.user is not None:
            return GraphRef(user_id=self.user.user_id)
        assert self.graph is not None
        return GraphRef(graph_id=self.graph.graph_id)

    @property
    def user_uuid(self) -> str | None:
        return self.uuid if self.user is not None else None


class Addresses:
    """The v4 addresses of one project's users, graphs and threads, both ways."""

    def __init__(self, space: ProjectSpace, control: ControlPlane) -> None:
        self._space = space
        self._control = control
        self._pid = space.project.id

    # -- forward -----------------------------------------------------------------------------------

    @staticmethod
    def user_uuid(user: UserRecord) -> str:
        return group_uuid(user.group_id)

    @staticmethod
    def graph_uuid(graph: GraphRecord) -> str:
        return group_uuid(graph.group_id)

    def thread_uuid(self, thread: ThreadRecord) -> str:
        stamp = round(thread.created_at.timestamp() * 1000)  # as stored: milliseconds
        return str(uuid.uuid5(_NAMESPACE, f"thread\0{self._pid}\0{thread.thread_id}\0{stamp}"))

    def index(self, kind: Kind, address: str, control_id: str) -> None:
        """Record where ``address`` points (called when ``/api/v4`` makes an object)."""
        self._control.put_document(self._pid, INDEX, "", address, {"kind": kind, "id": control_id})

    # -- back --------------------------------------------------------------------------------------

    def user(self, address: str) -> UserRecord:
        found = self._resolve("user", address, self._scan_users)
        assert isinstance(found, UserRecord)
        return found

    def thread(self, address: str) -> ThreadRecord:
        found = self._resolve("thread", address, self._scan_threads)
        assert isinstance(found, ThreadRecord)
        return found

    def graph(self, address: str) -> Target:
        """A user's graph (by the user's UUID) or a named graph."""
        wanted = _canonical(address)
        if wanted is not None:
            hit = self._indexed(wanted)
            if hit is None:
                hit = self._scan_users(wanted) or self._scan_graphs(wanted)
            if isinstance(hit, UserRecord):
                return Target(wanted, hit.group_id, user=hit)
            if isinstance(hit, GraphRecord):
                return Target(wanted, hit.group_id, graph=hit)
        raise NotFoundError(f"graph {address!r} not found")

    def find(self, address: str) -> UserRecord | GraphRecord | ThreadRecord:
        """Whatever of the project ``address`` is the UUID of (``NotFoundError`` else)."""
        wanted = _canonical(address)
        if wanted is not None:
            hit = self._indexed(wanted) or self._scan_users(wanted) or self._scan_graphs(wanted)
            hit = hit or self._scan_threads(wanted)
            if hit is not None:
                return hit
        raise NotFoundError(f"{address!r} is the UUID of no user, graph or thread of this project")

    def target_of_user(self, user: UserRecord) -> Target:
        return Target(self.user_uuid(user), user.group_id, user=user)

    def target_of_graph(self, graph: GraphRecord) -> Target:
        return Target(self.graph_uuid(graph), graph.group_id, graph=graph)

    def _resolve(self, kind: Kind, address: str, scan: object) -> UserRecord | GraphRecord | ThreadRecord:
        wanted = _canonical(address)
        if wanted is not None:
            hit = self._indexed(wanted)
            if hit is None:
                assert callable(scan)
                hit = scan(wanted)
            if hit is not None and _kind(hit) == kind:
                return hit
        raise NotFoundError(f"{kind} {address!r} not found")

    def _indexed(self, wanted: str) -> UserRecord | GraphRecord | ThreadRecord | None:
        try:
            entry = self._control.get_document(self._pid, INDEX, "", wanted).body
        except NotFoundError:
            return None
        try:
            match entry["kind"]:
                case "user":
                    user = self._control.get_user(self._pid, entry["id"])
                    return user if self.user_uuid(user) == wanted else None
                case "graph":
                    graph = self._control.get_graph(self._pid, entry["id"])
                    return graph if self.graph_uuid(graph) == wanted else None
                case "thread":
                    thread = self._control.get_thread(self._pid, entry["id"])
                    return thread if self.thread_uuid(thread) == wanted else None
        except NotFoundError:
            return None
        return None

    def _scan_users(self, wanted: str) -> UserRecord | None:
        for kind, name, group_id in self._control.owned_groups(self._pid):
            if kind == "user" and group_uuid(group_id) == wanted:
                self.index("user", wanted, name)
                return self._control.get_user(self._pid, name)
        return None

    def _scan_graphs(self, wanted: str) -> GraphRecord | None:
        for kind, name, group_id in self._control.owned_groups(self._pid):
            if kind == "graph" and group_uuid(group_id) == wanted:
                self.index("graph", wanted, name)
                return self._control.get_graph(self._pid, name)
        return None

    def _scan_threads(self, wanted: str) -> ThreadRecord | None:
        offset = 0
        while True:
            threads = self._control.list_threads(self._pid, limit=_SCAN, offset=offset)
            for thread in threads:
                if self.thread_uuid(thread) == wanted:
                    self.index("thread", wanted, thread.thread_id)
                    return thread
            if len(threads) < _SCAN:
                return None
            offset += _SCAN


def _kind(record: UserRecord | GraphRecord | ThreadRecord) -> Kind:
    if isinstance(record, UserRecord):
        return "user"
    return "graph" if isinstance(record, GraphRecord) else "thread"
