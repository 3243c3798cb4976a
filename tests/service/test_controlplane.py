"""The control plane: keys are stored hashed, revocable, and everything is scoped to a project.

One contract for both implementations: the SQLite file and Redis beside the graphs (on the test
session's FalkorDB server, each test in a namespace of its own)."""

from __future__ import annotations

import contextlib
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from chronomem.errors import ConflictError, NotFoundError
from chronomem.service.controlplane import ControlPlane, SQLiteControlPlane

Opener = Callable[..., ControlPlane]


@pytest.fixture(params=["sqlite", "redis"])
def open_plane(request, tmp_path) -> Iterator[Opener]:
    """Opens a control plane (another process's view of the same data on each call)."""
    opened: list[ControlPlane] = []
    if request.param == "sqlite":
        def opener(**options: Any) -> ControlPlane:
            opened.append(SQLiteControlPlane.open(tmp_path / "control.db", **options))
            return opened[-1]
    else:
        from chronomem.service.controlplane_redis import RedisControlPlane
        from falkordb_server import shared_falkordb_server

        url = f"{shared_falkordb_server().url}?namespace=cp{uuid.uuid4().hex[:12]}"

        def opener(**options: Any) -> ControlPlane:
            opened.append(RedisControlPlane.connect(url, **options))
            return opened[-1]
    yield opener
    for plane in opened:
        plane.close()


@pytest.fixture
def control(open_plane: Opener) -> ControlPlane:
    return open_plane()


def test_a_key_authenticates_its_project_and_its_secret_is_not_stored(tmp_path):
    control = SQLiteControlPlane.open(tmp_path / "control.db")
    info, secret = control.create_key("acme", name="ci")
    project = control.authenticate(secret)
    assert project is not None and project.name == "acme" and project.id == info.project_id
    raw = sqlite3.connect(tmp_path / "control.db").execute("SELECT * FROM api_keys").fetchall()
    assert secret.split("_", 2)[2] not in repr(raw)
    control.close()


def test_redis_keeps_only_the_hash_of_a_secret(falkordb_server):
    from chronomem.service.controlplane_redis import RedisControlPlane

    control = RedisControlPlane.connect(f"{falkordb_server.url}?namespace=cp{uuid.uuid4().hex[:12]}")
    _, secret = control.create_key("acme")
    assert control.authenticate(secret) is not None
    stored = {key: control._r.dump(key) for key in control._r.scan_iter(f"{control._p}*")}
    assert stored and secret.split("_", 2)[2] not in repr(stored)
    control.close()


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


class _CutOff:
    """Lets ``budget`` round trips of a Redis control plane reach the server, then fails every
    later one as a dropped connection would: a crash of the writer at that point."""

    def __init__(self, plane: Any, budget: int) -> None:
        import redis

        self.budget, self._error = budget, redis.exceptions.ConnectionError
        client = plane._r
        send, make_pipeline = client.execute_command, client.pipeline

        def execute_command(*args: Any, **options: Any) -> Any:
            self._spend()
            return send(*args, **options)

        def pipeline(*args: Any, **options: Any) -> Any:
            pipe = make_pipeline(*args, **options)
            execute = pipe.execute

            def cut_execute(*a: Any, **o: Any) -> Any:
                self._spend()
                return execute(*a, **o)

            pipe.execute = cut_execute
            return pipe

        client.execute_command, client.pipeline = execute_command, pipeline

    def _spend(self) -> None:
        if self.budget <= 0:
            raise self._error("cut off by the test")
        self.budget -= 1


@pytest.mark.parametrize("budget", range(6))
def test_a_redis_write_cut_off_at_any_round_trip_leaves_no_half_written_record(budget):
    """Creating a user or a graph (its record, its order and its group's owner) and deleting a graph
    (its tasks, documents and owner) are all-or-nothing on Redis, wherever the writer stops."""
    from chronomem.errors import StoreUnavailableError
    from chronomem.service.controlplane_redis import RedisControlPlane
    from falkordb_server import shared_falkordb_server

    url = f"{shared_falkordb_server().url}?namespace=cut{uuid.uuid4().hex[:12]}"
    setup, check = RedisControlPlane.connect(url), RedisControlPlane.connect(url)
    writer = RedisControlPlane.connect(url)
    try:
        p = setup.ensure_project("p")
        doomed = setup.create_graph(p.id, "doomed")
        task = setup.create_task(p.id, doomed.group_id, ["e1"])
        setup.put_document(p.id, "ontology", doomed.group_id, "doomed", {"types": []})
        _CutOff(writer, budget)
        for operation in (lambda: writer.create_user(p.id, "ann"), lambda: writer.create_graph(p.id, "kb"),
                          lambda: writer.delete_graph(p.id, "doomed")):
            with contextlib.suppress(StoreUnavailableError):  # the cut-off writer
                operation()
        for user in check.list_users(p.id):
            assert check.project_of_group(user.group_id) == p.id
        for graph in check.list_graphs(p.id):
            assert check.project_of_group(graph.group_id) == p.id
        if any(g.graph_id == "doomed" for g in check.list_graphs(p.id)):
            assert check.get_task(p.id, task.task_id).task_id == task.task_id
            assert [d.name for d in check.list_documents(p.id, "ontology")] == ["doomed"]
        else:
            assert check.project_of_group(doomed.group_id) is None
            assert check.list_documents(p.id, "ontology") == []
            with pytest.raises(NotFoundError):
                check.get_task(p.id, task.task_id)
    finally:
        for plane in (setup, check, writer):
            plane.close()
