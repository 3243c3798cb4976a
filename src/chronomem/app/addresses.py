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
  ``zep_v4_address``), written when a user, graph or thread is made, through any API
  (:class:`~chronomem.app.tenancy.ProjectSpace` calls :meth:`Addresses.remember`): one keyed read.
  Objects made before there was an index are indexed by one pass over the project's users, graphs
  or threads, the first time a UUID is not found (a marker document records it was done). Every
  hit is checked against the object found, so the entry of a deleted object answers 404.
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
_SCANNED = "scanned:"  # an index document named so says the objects of a kind made before are indexed
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
        """Record where ``address`` points."""
        self._control.put_document(self._pid, INDEX, "", address, {"kind": kind, "id": control_id})

    def remember(self, record: UserRecord | GraphRecord | ThreadRecord) -> str:
        """Index a user, graph or thread just made (``ProjectSpace`` does, whichever API made it);
        its UUID."""
        address = self.uuid_of(record)
        self.index(_kind(record), address, _control_id(record))
        return address

    def uuid_of(self, record: UserRecord | GraphRecord | ThreadRecord) -> str:
        if isinstance(record, UserRecord):
            return self.user_uuid(record)
        return self.graph_uuid(record) if isinstance(record, GraphRecord) else self.thread_uuid(record)

    # -- back --------------------------------------------------------------------------------------

    def user(self, address: str) -> UserRecord:
        found = self._resolve(address, ("user",))
        assert isinstance(found, UserRecord)
        return found

    def thread(self, address: str) -> ThreadRecord:
        found = self._resolve(address, ("thread",))
        assert isinstance(found, ThreadRecord)
        return found

    def graph(self, address: str) -> Target:
        """A user's graph (by the user's UUID) or a named graph."""
        found = self._resolve(address, ("user", "graph"), what="graph")
        if isinstance(found, UserRecord):
            return self.target_of_user(found)
        assert isinstance(found, GraphRecord)
        return self.target_of_graph(found)

    def find(self, address: str) -> UserRecord | GraphRecord | ThreadRecord:
        """Whatever of the project ``address`` is the UUID of (``NotFoundError`` else)."""
        return self._resolve(address, ("user", "graph", "thread"), what="user, graph or thread")

    def target_of_user(self, user: UserRecord) -> Target:
        return Target(self.user_uuid(user), user.group_id, user=user)

    def target_of_graph(self, graph: GraphRecord) -> Target:
        return Target(self.graph_uuid(graph), graph.group_id, graph=graph)

    def _resolve(self, address: str, kinds: tuple[Kind, ...],
                 what: str | None = None) -> UserRecord | GraphRecord | ThreadRecord:
        wanted = _canonical(address)
        if wanted is not None:
            hit = self._indexed(wanted)
            for kind in kinds:
                if hit is None:
                    hit = self._scan_once(kind, wanted)
            if hit is not None and _kind(hit) in kinds:
                return hit
        raise NotFoundError(f"{what or kinds[0]} {address!r} not found")

    def _indexed(self, wanted: str) -> UserRecord | GraphRecord | ThreadRecord | None:
        """The object the index names for ``wanted``, if it still is the one (a user deleted and
        made again under the same id has a new UUID)."""
        try:
            entry = self._control.get_document(self._pid, INDEX, "", wanted).body
            found: UserRecord | GraphRecord | ThreadRecord
            match entry["kind"]:
                case "user":
                    found = self._control.get_user(self._pid, entry["id"])
                case "graph":
                    found = self._control.get_graph(self._pid, entry["id"])
                case _:
                    found = self._control.get_thread(self._pid, entry["id"])
        except NotFoundError:
            return None
        return found if self.uuid_of(found) == wanted else None

    def _scan_once(self, kind: Kind, wanted: str) -> UserRecord | GraphRecord | ThreadRecord | None:
        """Index every ``kind`` of the project made before objects were indexed when made, once
        per project (a marker says it was done), and return the one at ``wanted`` if any."""
        marker = f"{_SCANNED}{kind}"
        try:
            self._control.get_document(self._pid, INDEX, "", marker)
            return None
        except NotFoundError:
            pass
        hit = None
        for record in self._all(kind):
            if self.remember(record) == wanted:
                hit = record
        self._control.put_document(self._pid, INDEX, "", marker, {"scanned": True})
        return hit

    def _all(self, kind: Kind) -> list[UserRecord | GraphRecord | ThreadRecord]:
        if kind == "thread":
            found: list[UserRecord | GraphRecord | ThreadRecord] = []
            while batch := self._control.list_threads(self._pid, limit=_SCAN, offset=len(found)):
                found += batch
                if len(batch) < _SCAN:
                    break
            return found
        owned = [name for k, name, _ in self._control.owned_groups(self._pid) if k == kind]
        get = self._control.get_user if kind == "user" else self._control.get_graph
        return [get(self._pid, name) for name in owned]


def _control_id(record: UserRecord | GraphRecord | ThreadRecord) -> str:
    if isinstance(record, UserRecord):
        return record.user_id
    return record.graph_id if isinstance(record, GraphRecord) else record.thread_id


def _kind(record: UserRecord | GraphRecord | ThreadRecord) -> Kind:
    if isinstance(record, UserRecord):
        return "user"
    return "graph" if isinstance(record, GraphRecord) else "thread"
