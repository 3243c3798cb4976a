"""The MCP server as an agent uses it: in-process, over streamable HTTP, and over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator

import pytest
import uvicorn

from chronomem.app.workers import WorkerPool
from chronomem.config.settings import WorkerSettings
from chronomem.embed.testing import HashingEmbedder
from chronomem.mcp_server import build_mcp_server
from chronomem.memory import Chronomem
from chronomem.store.factory import open_store
from mcp import Client, StdioServerParameters
from service_support import free_port

TOOLS = {"add_memory", "search_facts", "search_entities", "get_context", "get_episodes", "delete_episode",
         "delete_fact", "delete_entity", "task_status", "fact_history", "get_neighbors", "get_subgraph",
         "get_configuration"}
FAST = WorkerSettings(retry_base_s=0.01, poll_interval_s=0.05)


@pytest.fixture
async def memory(tmp_path) -> AsyncIterator[Chronomem]:
    store = await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    async with Chronomem(store=store, embedder=HashingEmbedder()) as opened:
        yield opened


@pytest.fixture
async def pool(memory) -> AsyncIterator[WorkerPool]:
    async with WorkerPool(memory.store, memory.process, FAST) as running:
        yield running


async def test_an_agent_adds_a_memory_follows_it_and_finds_it(memory, pool):
    async with Client(build_mcp_server(memory, default_group="me", pool=pool)) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        added = await client.call_tool("add_memory", {"content": "I adopted a cat named Miso", "speaker": "me"})
        assert not added.is_error and added.structured_content["status"] == "pending"
        episode_id = added.structured_content["uuid"]
        await pool.drain(timeout=10)
        status = await client.call_tool("task_status", {"episode_id": episode_id})
        assert status.structured_content["status"] == "unextracted"  # stored and searchable; no model here
        episodes = await client.call_tool("get_episodes", {})
        assert [e["uuid"] for e in episodes.structured_content["result"]] == [episode_id]
        await memory.add_fact("me", "me", "OWNS", "Miso", "I own a cat named Miso")
        facts = await client.call_tool("search_facts", {"query": "cat Miso"})
        assert [f["fact"] for f in facts.structured_content["result"]] == ["I own a cat named Miso"]
        entities = await client.call_tool("search_entities", {"query": "Miso"})
        assert "Miso" in {e["name"] for e in entities.structured_content["result"]}
        context = await client.call_tool("get_context", {"query": "Does the user have pets?"})
        assert "I own a cat named Miso" in context.structured_content["result"]


async def test_groups_stay_apart_and_deletes_work(memory, pool):
    async with Client(build_mcp_server(memory, default_group="me", pool=pool)) as client:
        await client.call_tool("add_memory", {"content": "secret plan", "group_id": "other"})
        mine = await client.call_tool("get_episodes", {})
        assert mine.structured_content["result"] == []
        fact = await memory.add_fact("me", "Ann", "KNOWS", "Bob", "Ann knows Bob")
        deleted = await client.call_tool("delete_fact", {"fact_id": fact.id})
        assert not deleted.is_error
        assert (await client.call_tool("search_facts", {"query": "Ann Bob"})).structured_content["result"] == []


async def test_errors_reach_the_agent_as_tool_errors_with_their_message(memory):
    async with Client(build_mcp_server(memory)) as client:
        missing = await client.call_tool("delete_episode", {"episode_id": "nope"})
        assert missing.is_error and "not found" in missing.content[0].text
        naive = await client.call_tool("add_memory", {"content": "x", "reference_time": "2024-01-01T10:00:00"})
        assert naive.is_error


async def test_streamable_http_transport(memory, pool):
    port = free_port()
    app = build_mcp_server(memory, default_group="me", pool=pool).streamable_http_app()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(10):
            while not server.started:
                await asyncio.sleep(0.02)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            added = await client.call_tool("add_memory", {"content": "over http"})
            assert added.structured_content["content"] == "over http"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await serving


@pytest.mark.integration
async def test_stdio_transport_through_the_cli(tmp_path):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "chronomem.cli", "--data-dir", str(tmp_path), "--embedder", "hashing", "mcp", "--group", "me"],
        # The SDK passes a bare environment: keep PYTHONPATH (the code under test runs), not our settings.
        env={k: v for k, v in os.environ.items() if not k.startswith("CHRONOMEM_")},
    )
    async with Client(params) as client:
        served = {t.name for t in (await client.list_tools()).tools}
        assert {"get_user_summary", "create_context_template"} <= served  # `chronomem mcp` serves a project
        assert (await client.call_tool("list_context_templates", {})).structured_content["result"] == []
        added = await client.call_tool("add_memory", {"content": "over stdio"})
        assert added.structured_content["status"] == "pending"
        async with asyncio.timeout(20):
            while True:
                status = await client.call_tool("task_status", {"episode_id": added.structured_content["uuid"]})
                if status.structured_content["status"] != "pending":
                    break
                await asyncio.sleep(0.1)
        assert status.structured_content["status"] == "unextracted"


async def test_an_agent_reads_a_fact_history_and_asks_what_we_knew_then(memory):
    from datetime import UTC, datetime

    acme = await memory.add_fact("me", "me", "WORKS_AT", "Acme", "I work at Acme",
                                 valid_at=datetime(2020, 1, 1, tzinfo=UTC))
    await memory.update_fact("me", acme.id, invalid_at=datetime(2024, 1, 1, tzinfo=UTC))
    async with Client(build_mcp_server(memory, default_group="me")) as client:
        history = (await client.call_tool("fact_history", {"fact_id": acme.id})).structured_content["result"]
        assert [v["fact"]["invalid_at"] for v in history] == [None, "2024-01-01T00:00:00+00:00"]
        assert history[0]["recorded_to"] == history[1]["recorded_from"]

        async def invalid_at(known_at: str) -> list[str | None]:
            found = await client.call_tool("search_facts", {"query": "work Acme", "as_of": "2022-01-01T00:00:00Z",
                                                            "known_at": known_at})
            return [f["invalid_at"] for f in found.structured_content["result"]]

        assert await invalid_at(history[0]["recorded_from"]) == [None]
        assert await invalid_at(history[1]["recorded_from"]) == ["2024-01-01T00:00:00+00:00"]
        unknown = await client.call_tool("fact_history", {"fact_id": "nope"})
        assert unknown.is_error


async def test_the_configuration_tool_lists_the_model_ontology_and_mappings(tmp_path):
    from chronomem.config.settings import Settings
    from chronomem.ingest.json_mapping import EntitySpec, JsonMapping
    from chronomem.ingest.ontology_spec import OntologySpec
    from chronomem.llm.settings import LLMSettings

    ontology = OntologySpec.parse({"entity_types": [{"name": "Pet", "description": "An animal."}],
                                   "single_valued": ["OWNS"]}).to_ontology()
    settings = Settings(data_dir=tmp_path, embedder="hashing", llm=LLMSettings(model="heuristic"), ontology=ontology,
                        json_mappings=(JsonMapping(name="crm", entities=(EntitySpec(key="a", name="company"),)),))
    async with await Chronomem.open(settings) as memory, Client(build_mcp_server(memory)) as client:
        shown = (await client.call_tool("get_configuration", {})).structured_content
    assert shown["model"] == "heuristic (a rule-based stand-in, not an LLM)"
    assert [t["name"] for t in shown["ontology"]["entity_types"]] == ["Pet"]
    assert shown["ontology"]["single_valued"] == ["OWNS"]
    assert [m["name"] for m in shown["json_mappings"]] == ["crm"]
