"""docs/service.md lists the MCP server's tools with the parameters they really take."""

from __future__ import annotations

import re

from chronomem.app.tenancy import ProjectSpace
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.embed.testing import HashingEmbedder
from chronomem.mcp_server import build_mcp_server
from chronomem.memory import Chronomem
from chronomem.store.factory import open_store
from mcp import Client
from service_support import ROOT


def documented_tools() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "service.md").read_text(encoding="utf-8")
    table = text.split("<!-- mcp-tools:", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (.*) \|$", table, re.M)
    return {name: re.findall(r"`(\w+)`", params) for name, params in rows}


async def test_the_documented_tools_and_parameters_are_the_servers(tmp_path):
    store = await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    control = SQLiteControlPlane.open(tmp_path / "control.db")
    async with Chronomem(store=store, embedder=HashingEmbedder()) as memory:
        space = ProjectSpace(control.ensure_project("default"), control, memory)  # as `chronomem mcp` serves
        async with Client(build_mcp_server(memory, default_group="me", space=space)) as client:
            tools = (await client.list_tools()).tools
    control.close()
    served = {tool.name: list(tool.input_schema["properties"]) for tool in tools}
    assert documented_tools() == served
