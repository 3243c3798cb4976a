"""Zep's official agent-framework integrations, unmodified, against a real chronomem server at
``/api/v4``: ``zep-pydantic-ai`` 1.0.0 (a Pydantic AI agent whose model is pydantic-ai's scripted
``FunctionModel``), ``zep-langgraph`` 1.0.0 (a LangGraph graph whose node answers by rule, the
integration's search tool and its ``ZepStore``), ``zep-adk`` 1.0.0 (a Google ADK agent whose model is
a ``BaseLlm`` answering by rule, its context tool, callback and memory service) and ``zep-autogen``
2.0.0 (AutoGen's ``ZepUserMemory``). Each writes what the conversation says through
the integration and reads it back, extracted by the server's heuristic stand-in model, in the
context block and the search results its agent is given.

They run in .venv-zep4 (``zep4/integrations.py``): they need ``zep-cloud>=4``."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

import processes
from service_support import ROOT, create_key, free_port, start_live_server
from zep4_support import run_script, zep4_python

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    zep4_python()
    data_dir = tmp_path_factory.mktemp("zep4-integrations")
    key = create_key(data_dir, "agents")
    port = free_port()
    with processes.stopping(start_live_server(data_dir, port, model="heuristic"), grace=20):
        yield f"http://127.0.0.1:{port}", key


@pytest.fixture(scope="module")
def seen(served: tuple[str, str]) -> dict[str, Any]:
    base, key = served
    return run_script("integrations.py", "--base-url", base, "--key", key)


def test_pydantic_ai_agent_persists_both_turns_and_is_given_what_was_said(seen: dict[str, Any]) -> None:
    run = seen["pydantic_ai"]
    assert run["messages"] == [
        ["user", "Jane Smith", "I adopted a cat named Miso in March 2024."],
        ["assistant", "Assistant", "Noted, a cat named Miso."],
        ["user", "Jane Smith", "What is my cat called?"],
        ["assistant", "Assistant", "Your cat is called Miso."],
    ]
    assert run["graph_uuid"] == run["user_uuid"]
    # the second run's model was given Zep's context block with the first turn's fact ...
    later = [p for p in run["prompts"] if "<ZEP_CONTEXT>" in p]
    assert later and "Miso" in later[-1]
    # ... and the integration's search tool found it in the user's graph
    assert run["tool_returns"] and any("Miso" in r for r in run["tool_returns"])


def test_langgraph_node_persists_turns_and_reads_context_search_and_store(seen: dict[str, Any]) -> None:
    run = seen["langgraph"]
    assert [m[0] for m in run["messages"]] == ["user", "assistant", "user", "assistant"]
    assert run["messages"][0] == ["user", "Alice Smith", "My sister Beth lives in Porto."]
    assert "<ZEP_CONTEXT>" not in run["systems"][0]  # nothing was known before the first turn
    assert "<ZEP_CONTEXT>" in run["systems"][-1] and "Porto" in run["systems"][-1]
    assert "Beth lives in Porto" in run["search"]
    assert run["store_get"] == {"text": "Alice's favourite colour is green."}
    assert any("green" in str(item.get("content")) for item in run["store"])


def test_google_adk_agent_persists_turns_and_is_given_what_was_said(seen: dict[str, Any]) -> None:
    run = seen["adk"]
    assert run["messages"] == [
        ["user", "Omar Haddad", "I play the oud every evening."],
        ["assistant", "Assistant", "Noted, thank you."],
        ["user", "Omar Haddad", "What instrument do I play?"],
        ["assistant", "Assistant", "Noted, thank you."],
    ]
    assert "<ZEP_CONTEXT>" in run["instructions"][-1] and "oud" in run["instructions"][-1]
    assert any("oud" in memory for memory in run["memories"])  # ZepMemoryService.search_memory


def test_autogen_memory_stores_messages_and_data_and_reads_them_back(seen: dict[str, Any]) -> None:
    run = seen["autogen"]
    assert any("Bergen" in item for item in run["query"]) and any("aquarium" in item for item in run["query"])
    assert run["context"][0] == "Where do I live?"
    assert "<ZEP_CONTEXT>" in run["context"][-1] and "Bergen" in run["context"][-1]


def test_the_readme_example_runs(served: tuple[str, str]) -> None:
    """The README's "Coming from Zep" example, as printed there, with pydantic-ai's test model."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- example: zep-v4-pydantic-ai -->\n```python\n(.*?)```", readme, re.S)
    assert match, "no zep-v4-pydantic-ai example in the README"
    base, key = served
    env = os.environ | {"BASE": base, "KEY": key, "AGENT_MODEL": "test"}
    done = subprocess.run([str(zep4_python()), "-c", match.group(1)], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "user I adopted a cat named Miso."
    assert len(lines) == 2 and lines[1].startswith("assistant ")  # the reply, persisted after the run
