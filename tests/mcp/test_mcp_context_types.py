"""Zep's context types over the MCP server, as an agent reaches them through the MCP client: the user
and thread summaries, the project's context templates, and templates (with evidence) in get_context."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import pytest

from chronomem.app.summaries import SummaryUpdate, WrittenSummary
from chronomem.app.tenancy import GraphRef, ProjectSpace
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.domain import EvidenceSpan
from chronomem.embed.testing import HashingEmbedder
from chronomem.llm.testing import FunctionModel
from chronomem.mcp_server import build_mcp_server
from chronomem.memory import Chronomem, NewMessage
from chronomem.store import GraphWrite
from chronomem.store.factory import open_store
from mcp import Client

PROJECT_TOOLS = {"get_user_summary", "get_thread_summary", "lookup", "list_context_templates",
                 "get_context_template", "create_context_template", "replace_context_template",
                 "delete_context_template"}
TEMPLATE = "WHO:\n%{user_summary}\nWHAT:\n%{edges limit=3 types=[LIVES_IN,OWNS]}"


def summaries(prompt, context):
    """A scripted model: a summary names how many new lines it folded in and the first one."""
    if prompt.answer is WrittenSummary:
        assert isinstance(context, SummaryUpdate)
        return WrittenSummary(summary=f"{prompt.name}: {len(context.new_lines)} new; first: {context.new_lines[0]}")
    return prompt.answer()


@pytest.fixture
async def memory(tmp_path) -> AsyncIterator[Chronomem]:
    store = await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    async with Chronomem(store=store, embedder=HashingEmbedder(), llm=FunctionModel(summaries)) as opened:
        yield opened


@pytest.fixture
def space(memory, tmp_path) -> Iterator[ProjectSpace]:
    """The project 'default', as `chronomem mcp` serves it (its control plane beside the graph)."""
    control = SQLiteControlPlane.open(tmp_path / "control.db")
    yield ProjectSpace(control.ensure_project("default"), control, memory)
    control.close()


async def ada_with_a_quoted_fact(memory: Chronomem, space: ProjectSpace) -> str:
    """User ada, thread t1 with one message of hers, and two facts: one quoting that message."""
    space.create_user("ada", first_name="Ada")
    space.create_thread("t1", "ada")
    [said], _ = await space.add_messages("t1", [NewMessage("We moved to Lisbon in May.", name="Ada",
                                                           reference_time=datetime(2024, 6, 1, tzinfo=UTC))])
    ref = GraphRef(user_id="ada")
    lives = await space.add_fact(ref, "Ada", "LIVES_IN", "Lisbon", "Ada lives in Lisbon", provenance=said.id)
    await space.add_fact(ref, "Ada", "OWNS", "Rex", "Ada owns a dog named Rex")
    start = said.text.index("moved to Lisbon")  # offsets into Episode.text, as grounding keeps them
    quoted = lives.model_copy(update={"evidence": (EvidenceSpan(episode_id=said.id, start=start, end=start + 15),)})
    await memory.store.write(GraphWrite(said.group_id, facts=[quoted]))
    return said.group_id


def result(called) -> object:
    assert not called.is_error, called.content
    content = called.structured_content
    return content["result"] if set(content) == {"result"} else content


async def test_the_project_tools_are_served_with_a_project_only(memory, space):
    async with Client(build_mcp_server(memory, space=space)) as client:
        with_project = {t.name for t in (await client.list_tools()).tools}
    async with Client(build_mcp_server(memory)) as client:
        without = {t.name for t in (await client.list_tools()).tools}
        refused = await client.call_tool("get_context", {"query": "x", "template_id": "short"})
    assert with_project - without == PROJECT_TOOLS
    assert refused.is_error and "serves no project" in refused.content[0].text


async def test_an_agent_reads_the_user_and_thread_summaries(memory, space):
    await ada_with_a_quoted_fact(memory, space)
    async with Client(build_mcp_server(memory, space=space)) as client:
        user = result(await client.call_tool("get_user_summary", {"user_id": "ada"}))
        thread = result(await client.call_tool("get_thread_summary", {"thread_id": "t1"}))
        missing = await client.call_tool("get_user_summary", {"user_id": "nobody"})
    assert user.startswith("user_summary: 2 new; first: - Ada lives in Lisbon")
    assert thread == "thread_summary: 1 new; first: (2024-06-01) Ada: We moved to Lisbon in May."
    assert missing.is_error and "NotFoundError" in missing.content[0].text


async def test_an_agent_manages_the_projects_context_templates(memory, space):
    async with Client(build_mcp_server(memory, space=space)) as client:
        created = result(await client.call_tool("create_context_template",
                                                {"template_id": "short", "template": TEMPLATE}))
        assert (created["template_id"], created["template"]) == ("short", TEMPLATE)
        again = await client.call_tool("create_context_template", {"template_id": "short", "template": TEMPLATE})
        assert again.is_error and "already exists" in again.content[0].text
        bad = await client.call_tool("create_context_template", {"template_id": "bad", "template": "%{edges limit=0}"})
        assert bad.is_error and "limit" in bad.content[0].text
        result(await client.call_tool("replace_context_template", {"template_id": "short", "template": "%{edges}"}))
        replaced = result(await client.call_tool("get_context_template", {"template_id": "short"}))
        assert replaced["template"] == "%{edges}"
        assert [t["template_id"] for t in result(await client.call_tool("list_context_templates", {}))] == ["short"]
        absent = await client.call_tool("replace_context_template", {"template_id": "nope", "template": "%{edges}"})
        assert absent.is_error and "not found" in absent.content[0].text
        result(await client.call_tool("delete_context_template", {"template_id": "short"}))
        assert result(await client.call_tool("list_context_templates", {})) == []
        gone = await client.call_tool("get_context_template", {"template_id": "short"})
        assert gone.is_error
    assert space.list_templates() == []  # the project's own store, as the HTTP API sees it


async def test_get_context_takes_a_template_and_quotes_its_facts_on_request(memory, space):
    group_id = await ada_with_a_quoted_fact(memory, space)
    space.save_template("short", TEMPLATE, create=True)
    async with Client(build_mcp_server(memory, space=space)) as client:

        async def context(**arguments: object) -> list[str]:
            block = result(await client.call_tool("get_context", {"query": "Where does Ada live?", **arguments}))
            return str(block).splitlines()

        for whose in ({"user_id": "ada"}, {"thread_id": "t1"}):
            lines = await context(template_id="short", include_evidence=True, **whose)
            assert lines[0] == "WHO:" and lines[1].startswith("user_summary: 2 new")
            facts = {line.split(" (")[0]: line for line in lines[3:]}
            assert lines[2] == "WHAT:" and set(facts) == {"- Ada lives in Lisbon", "- Ada owns a dog named Rex"}
            assert facts["- Ada lives in Lisbon"].endswith('[source: "moved to Lisbon"]')
            assert "source:" not in facts["- Ada owns a dog named Rex"]
            assert not any("source:" in line for line in await context(template_id="short", **whose))
        # over groups: the template's facts, its summary section empty (the groups name no user)
        grouped = await context(template_id="short", include_evidence=True, group_ids=[group_id])
        assert grouped[:2] == ["WHO:", ""] and any(line.endswith('[source: "moved to Lisbon"]') for line in grouped)
        # and without a template, the paper's block quotes the same evidence
        plain = await context(user_id="ada", include_evidence=True)
        assert plain[0].startswith("FACTS and ENTITIES") and any('[source: "moved to Lisbon"]' in x for x in plain)
        unknown = await client.call_tool("get_context", {"query": "x", "user_id": "ada", "template_id": "nope"})
        assert unknown.is_error and "not found" in unknown.content[0].text
