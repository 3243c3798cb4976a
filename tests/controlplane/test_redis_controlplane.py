"""What only the Redis control plane has to prove: a multi-key write is all-or-nothing wherever the
writer stops (SQLite gets this from its transactions, which the contract suite already exercises)."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

import pytest

from chronomem.errors import NotFoundError


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
    from chronomem.controlplane.redis import RedisControlPlane
    from chronomem.errors import StoreUnavailableError
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
