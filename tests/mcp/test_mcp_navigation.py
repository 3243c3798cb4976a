"""The MCP server's graph navigation (get_neighbors, get_subgraph) and lookup of a project's graph
by id or by its UUID, as an agent calls them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from chronomem.app.tenancy import ProjectSpace
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.embed.testing import HashingEmbedder
from chronomem.mcp_server import build_mcp_server
from chronomem.memory import Chronomem
from chronomem.store.factory import open_store
from mcp import Client


@pytest.fixture
async def memory(tmp_path) -> AsyncIterator[Chronomem]:
    store = await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    async with Chronomem(store=store, embedder=HashingEmbedder()) as opened:
        yield opened


@pytest.fixture
def space(memory, tmp_path) -> Iterator[ProjectSpace]:
    control = SQLiteControlPlane.open(tmp_path / "control.db")
    yield ProjectSpace(control.ensure_project("default"), control, memory)
    control.close()


async def test_an_agent_walks_the_graph_from_an_entity(memory, space):
    await memory.add_fact("me", "Ada", "WORKS_AT", "Acme", "Ada works at Acme")
    await memory.add_fact("me", "Acme", "LOCATED_IN", "Oslo", "Acme is located in Oslo")
    ada = next(e.id for e in await memory.list_entities("me") if e.name == "Ada")
    async with Client(build_mcp_server(memory, default_group="me", space=space)) as client:
        found = await client.call_tool("get_neighbors", {"entity_id": ada})
        assert [(n["entity"]["name"], [f["fact"] for f in n["facts"]]) for n in found.structured_content["result"]] == [
            ("Acme", ["Ada works at Acme"])]
        walked = await client.call_tool("get_subgraph", {"entity_ids": [ada], "depth": 2})
        assert {e["name"] for e in walked.structured_content["entities"]} == {"Ada", "Acme", "Oslo"}
        assert walked.structured_content["truncated"] is False
        refused = await client.call_tool("get_subgraph", {"entity_ids": [ada], "depth": 9})
        assert refused.is_error


async def test_lookup_gives_the_group_of_a_user_by_id_or_uuid(memory, space):
    user = space.create_user("ada")
    async with Client(build_mcp_server(memory, space=space)) as client:
        by_id = (await client.call_tool("lookup", {"user_id": "ada"})).structured_content
        assert by_id["group_id"] == user.group_id and by_id["kind"] == "user"
        by_uuid = (await client.call_tool("lookup", {"uuid": by_id["uuid"]})).structured_content
        assert by_uuid == by_id
        assert (await client.call_tool("lookup", {"user_id": "nobody"})).is_error
        assert (await client.call_tool("lookup", {})).is_error
