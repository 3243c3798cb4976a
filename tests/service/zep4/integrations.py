"""Zep's official framework integrations, unmodified, against a chronomem server at ``/api/v4``.

Run by tests/service/test_zep_v4_integrations.py inside .venv-zep4. No LLM is involved: the
Pydantic AI agent's model is pydantic-ai's own ``FunctionModel`` (a scripted model that calls the
Zep search tool, then answers), the LangGraph graph's node answers by rule, the Google ADK agent's
model is a ``BaseLlm`` that answers by rule, and AutoGen's memory is driven directly. Each
integration writes through its own calls (``thread.add_messages``, ``graph.episode.add``) and reads
context and search results back; the script prints what the agents saw as JSON.

    .venv-zep4/bin/python tests/service/zep4/integrations.py --base-url URL --key KEY
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from zep_cloud.client import AsyncZep


async def processed(zep: AsyncZep, thread_uuid: str, count: int) -> None:
    """Wait until the thread holds ``count`` messages, every one extracted."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pager = await zep.thread.list_messages(thread_uuid)
        messages = [m async for m in pager]
        if len(messages) >= count and all(m.processed for m in messages):
            return
        await asyncio.sleep(0.1)
    raise TimeoutError(f"thread {thread_uuid}: {count} messages were not extracted in time")


async def pydantic_ai(zep: AsyncZep) -> dict[str, Any]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from zep_pydantic_ai import ZepDeps, create_thread, create_user, create_zep_search_tool, zep_capabilities

    user = await create_user(zep, first_name="Jane", last_name="Smith")
    thread = await create_thread(zep, user_uuid=user.uuid_)
    deps = ZepDeps(client=zep, user_uuid=user.uuid_, thread_uuid=thread.uuid_, graph_uuid=user.graph_uuid,
                   first_name="Jane", last_name="Smith")
    prompts: list[str] = []  # the system parts the model was shown (Zep's context block)
    tool_returns: list[str] = []  # what the Zep search tool answered

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests = [m for m in messages if isinstance(m, ModelRequest)]
        prompts.append("\n".join(str(p.content) for m in requests for p in m.parts if p.part_kind == "system-prompt"))
        last = messages[-1]
        returned = [str(p.content) for p in last.parts if p.part_kind == "tool-return"] if isinstance(
            last, ModelRequest) else []
        if returned:
            tool_returns.extend(returned)
            return ModelResponse(parts=[TextPart("Your cat is called Miso.")])
        parts = last.parts if isinstance(last, ModelRequest) else []
        asked = [p.content for p in parts if p.part_kind == "user-prompt"]
        if any("?" in str(text) for text in asked):
            tool = info.function_tools[0].name
            return ModelResponse(parts=[ToolCallPart(tool_name=tool, args={"query": "Jane cat Miso"})])
        return ModelResponse(parts=[TextPart("Noted, a cat named Miso.")])

    agent = Agent(FunctionModel(answer), deps_type=ZepDeps, capabilities=zep_capabilities(deps),
                  tools=[create_zep_search_tool()], instructions="You are a helpful assistant with memory.")
    await agent.run("I adopted a cat named Miso in March 2024.", deps=deps)
    await processed(zep, thread.uuid_, 2)
    second = await agent.run("What is my cat called?", deps=deps)
    await processed(zep, thread.uuid_, 4)
    stored = [m async for m in await zep.thread.list_messages(thread.uuid_)]
    return {"messages": [[m.role, m.name, m.content] for m in stored], "prompts": prompts, "tool_returns": tool_returns,
            "output": second.output,
            "user_uuid": user.uuid_, "graph_uuid": user.graph_uuid}


async def langgraph(zep: AsyncZep) -> dict[str, Any]:
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from zep_langgraph import (
        ZepStore,
        build_system_message,
        create_graph_search_tool,
        create_thread,
        create_user,
        persist_messages,
    )

    user = await create_user(zep, first_name="Alice", last_name="Smith")
    thread = await create_thread(zep, user_uuid=user.uuid_)
    systems: list[str] = []

    async def agent_node(state: MessagesState) -> dict[str, Any]:
        system = await build_system_message(zep, thread.uuid_, base_instructions="You are a helpful assistant.")
        systems.append(str(system.content))
        reply = AIMessage(content="Thanks, I will remember that.")
        await persist_messages(zep, thread.uuid_, messages=[state["messages"][-1], reply], user_name="Alice Smith")
        return {"messages": [reply]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent_node)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    app = graph.compile()
    await app.ainvoke({"messages": [HumanMessage(content="My sister Beth lives in Porto.")]})
    await processed(zep, thread.uuid_, 2)
    await app.ainvoke({"messages": [HumanMessage(content="Where does my sister live?")]})
    await processed(zep, thread.uuid_, 4)

    tool = create_graph_search_tool(zep, graph_uuid=user.graph_uuid)
    searched = await tool.ainvoke({"query": "Where does Beth live?"})

    store = ZepStore(zep, graph_uuid=user.graph_uuid, search_scope="episodes")
    await store.aput(("memories", "alice"), "colour", {"text": "Alice's favourite colour is green."})
    deadline = time.monotonic() + 30
    found: list[Any] = []
    while time.monotonic() < deadline and not found:
        found = [item.value for item in await store.asearch(("memories", "alice"), query="favourite colour green")]
        await asyncio.sleep(0.1)
    stored = [m async for m in await zep.thread.list_messages(thread.uuid_)]
    return {"messages": [[m.role, m.name, m.content] for m in stored], "systems": systems, "search": str(searched),
            "store": found, "store_get": (await store.aget(("memories", "alice"), "colour")).value}


async def adk(zep: AsyncZep) -> dict[str, Any]:
    from collections.abc import AsyncIterator

    from google.adk.agents import Agent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types
    from zep_adk import ZepContextTool, ZepMemoryService, create_after_model_callback, create_thread, create_user

    instructions: list[str] = []  # the system instruction each model call was given

    class Scripted(BaseLlm):  # ADK's model port, answering by rule
        model: str = "scripted"

        async def generate_content_async(self, llm_request: LlmRequest,
                                         stream: bool = False) -> AsyncIterator[LlmResponse]:
            instructions.append(str(llm_request.config.system_instruction or ""))
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="Noted, thank you.")]))

    user = await create_user(zep, first_name="Omar", last_name="Haddad")
    thread = await create_thread(zep, user_uuid=user.uuid_)
    agent = Agent(name="assistant", model=Scripted(), instruction="You are a helpful assistant.",
                  tools=[ZepContextTool(zep_client=zep)], after_model_callback=create_after_model_callback(zep))
    sessions = InMemorySessionService()
    runner = Runner(agent=agent, app_name="app", session_service=sessions)
    await sessions.create_session(app_name="app", user_id="omar", session_id="s1", state={
        "zep_user_uuid": user.uuid_, "zep_thread_uuid": thread.uuid_, "zep_graph_uuid": user.graph_uuid,
        "zep_first_name": "Omar", "zep_last_name": "Haddad"})

    async def say(text: str) -> None:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="omar", session_id="s1", new_message=message):
            pass

    await say("I play the oud every evening.")
    await processed(zep, thread.uuid_, 2)
    await say("What instrument do I play?")
    await processed(zep, thread.uuid_, 4)
    memory = ZepMemoryService(zep=zep, graph_uuid=user.graph_uuid)
    found = await memory.search_memory(app_name="app", user_id="omar", query="Omar plays the oud")
    stored = [m async for m in await zep.thread.list_messages(thread.uuid_)]
    return {"messages": [[m.role, m.name, m.content] for m in stored], "instructions": instructions,
            "memories": [p.text for e in found.memories for p in (e.content.parts or []) if p.text]}


async def autogen(zep: AsyncZep) -> dict[str, Any]:
    from autogen_core.memory import MemoryContent, MemoryMimeType
    from autogen_core.model_context import BufferedChatCompletionContext
    from autogen_core.models import UserMessage
    from zep_autogen import ZepUserMemory, create_thread, create_user

    user = await create_user(zep, first_name="Lena", last_name="Berg")
    thread = await create_thread(zep, user_uuid=user.uuid_)
    memory = ZepUserMemory(client=zep, user_uuid=user.uuid_, thread_uuid=thread.uuid_)
    await memory.add(MemoryContent(content="I moved to Bergen last spring.", mime_type=MemoryMimeType.TEXT,
                                   metadata={"type": "message", "role": "user", "name": "Lena Berg"}))
    await memory.add(MemoryContent(content="Lena Berg works at the Bergen aquarium.", mime_type=MemoryMimeType.TEXT,
                                   metadata={"type": "data"}))
    await processed(zep, thread.uuid_, 1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        episodes = [e async for e in await zep.graph.episode.list(user.graph_uuid)]
        if len(episodes) >= 2 and all(e.processed for e in episodes):
            break
        await asyncio.sleep(0.1)
    found = await memory.query("Where does Lena live and work?")
    context = BufferedChatCompletionContext(buffer_size=10)
    await context.add_message(UserMessage(content="Where do I live?", source="user"))
    await memory.update_context(context)
    return {"query": [str(r.content) for r in found.results],
            "context": [str(m.content) for m in await context.get_messages()]}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--key", required=True)
    args = parser.parse_args()
    zep = AsyncZep(api_key=args.key, base_url=args.base_url.rstrip("/") + "/api/v4", max_retries=0, timeout=30)
    report = {"pydantic_ai": await pydantic_ai(zep), "langgraph": await langgraph(zep), "adk": await adk(zep),
              "autogen": await autogen(zep)}
    print(json.dumps(report, default=str))


if __name__ == "__main__":
    asyncio.run(main())
