"""A read FalkorDB refuses with 'undefined attribute' while another connection writes the graph is
asked again; a write, or another refusal, is not (no server needed: a scripted client)."""

from __future__ import annotations

import pytest

from chronomem.errors import StoreError
from chronomem.store.falkordb import connection as falkor
from chronomem.store.falkordb.connection import ConnectionSettings, FalkorConnection

redis = pytest.importorskip("redis")


class ScriptedClient:
    def __init__(self, failures: int, message: str = "Attempted to access undefined attribute") -> None:
        self.failures, self.message, self.calls = failures, message, []

    async def execute_command(self, *args, **options):
        self.calls.append(args[0])
        if len(self.calls) <= self.failures:
            raise redis.exceptions.ResponseError(self.message)
        return [["n.id"], [], ["Query internal execution time: 0.1 milliseconds"]]  # no rows


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr(falkor, "_UNDEFINED_ATTRIBUTE_DELAYS", (0.0, 0.0, 0.0))


async def test_a_read_refused_for_an_undefined_attribute_is_retried():
    client = ScriptedClient(failures=2)
    rows = await FalkorConnection(client, ConnectionSettings()).query("g", "MATCH (n) RETURN n.id", read_only=True)
    assert rows == []
    assert client.calls == ["GRAPH.RO_QUERY"] * 3


async def test_it_gives_up_after_its_retries_and_never_retries_writes_or_other_refusals():
    client = ScriptedClient(failures=10)
    with pytest.raises(StoreError, match="undefined attribute"):
        await FalkorConnection(client, ConnectionSettings()).query("g", "MATCH (n) RETURN n.id", read_only=True)
    assert len(client.calls) == 4  # the first try and three retries
    write = ScriptedClient(failures=1)
    with pytest.raises(StoreError):
        await FalkorConnection(write, ConnectionSettings()).query("g", "CREATE (:A)")
    assert write.calls == ["GRAPH.QUERY"]
    other = ScriptedClient(failures=1, message="Invalid arguments for procedure")
    with pytest.raises(StoreError):
        await FalkorConnection(other, ConnectionSettings()).query("g", "MATCH (n) RETURN n", read_only=True)
    assert len(other.calls) == 1
