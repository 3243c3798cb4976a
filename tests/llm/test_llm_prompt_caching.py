"""Prompt caching: the adapters keep every call of a prompt on one cacheable prefix, and the prompt
tokens a provider served from its cache are counted (``Usage.cached_input_tokens``) per call, per
scope and per process. The providers are played by the wire-format fake with ``prompt_caching``,
which reports cache reads the way OpenAI and Anthropic do; the prompts are the real ingestion ones."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from llm_test_prompts import PERSON, Question

from chronomem.ingest.prompts import ENTITY_EXTRACTION, EntityExtractionContext, EpisodeText
from chronomem.llm.accounting import process_usage, reset_process_usage, usage_scope
from chronomem.llm.answering import Reply, answer_prompt
from chronomem.llm.anthropic import AnthropicModel
from chronomem.llm.base import Message, Usage
from chronomem.llm.budget import answer_schema_for
from chronomem.llm.fakeserver import Answer, FakeProviderServer, RawBody
from chronomem.llm.openai import OpenAIChatModel
from chronomem.llm.structured import forget_negotiated_modes
from chronomem.providers.guard import allow_model_requests

# The ingestion prompts' static prefixes are a few hundred estimated tokens, under the providers'
# 1,024-token minimum; the fake is given a lower one so that they are cached.
MIN_TOKENS = 256

SHORT = EpisodeText("Ana: hi", datetime(2024, 6, 1, tzinfo=UTC))
LONG = EpisodeText("Tomás Ruiz: my sister Ana moved to Lisbon last week, and her dog Bolt went with her.",
                   datetime(2025, 1, 17, 9, 30, tzinfo=UTC), previous=("Tomás Ruiz: so", "Ana: yes"))
ENTITY = {"name": "Ana", "type": "Entity", "aliases": [], "summary": ""}
ENTITIES = {"entities": [ENTITY]}


def _context(episode: EpisodeText) -> EntityExtractionContext:
    return EntityExtractionContext(episode)


@pytest.fixture
def caching_server():
    forget_negotiated_modes()
    with FakeProviderServer(prompt_caching=True, cache_min_tokens=MIN_TOKENS) as server, allow_model_requests():
        yield server


def test_the_two_episodes_tighten_the_schema_differently():
    # what the tests below rely on: a schema sent as tightened for the call would differ between them
    assert answer_schema_for(ENTITY_EXTRACTION, _context(SHORT)) != answer_schema_for(ENTITY_EXTRACTION, _context(LONG))


# -- accounting ---------------------------------------------------------------------------------------


def test_usage_adds_and_shows_cached_input_tokens():
    total = Usage(calls=1, input_tokens=100, cached_input_tokens=60)
    total.add(Usage(calls=1, input_tokens=50, cached_input_tokens=40))
    assert (total.input_tokens, total.cached_input_tokens) == (150, 100)
    assert total.as_dict()["cached_input_tokens"] == 100


async def test_cached_tokens_of_every_attempt_reach_the_call_its_scope_and_the_process():
    replies = iter([Reply('{"name": "Ann"}', 120, 5, cached_input_tokens=0),  # invalid: corrected once
                    Reply('{"name": "Ann", "role": "speaker"}', 150, 8, cached_input_tokens=128)])

    async def ask(messages: list[Message]) -> Reply:
        return next(replies)

    reset_process_usage()
    with usage_scope() as outer, usage_scope() as episode:
        completion = await answer_prompt(PERSON, Question(text="Ann: hi"), ask, model="m")
    usage = completion.usage
    assert (usage.calls, usage.input_tokens, usage.cached_input_tokens) == (2, 270, 128)
    assert episode.cached_input_tokens == outer.cached_input_tokens == process_usage().cached_input_tokens == 128


# -- OpenAI-compatible ----------------------------------------------------------------------------------


async def test_openai_second_call_of_a_prompt_reads_the_shared_prefix_from_the_cache(caching_server, closing):
    model = closing(OpenAIChatModel("gpt-test", base_url=caching_server.openai_base_url, api_key="sk"))
    caching_server.enqueue(Answer(ENTITIES), Answer(ENTITIES))
    with usage_scope() as episodes:
        first = await model.complete(ENTITY_EXTRACTION, _context(SHORT))
        second = await model.complete(ENTITY_EXTRACTION, _context(LONG))
    assert first.usage.cached_input_tokens == 0  # nothing seen before
    first_body, second_body = (r.json for r in caching_server.requests)
    # the schema OpenAI puts before the system message is the answer model's own: the same on both calls
    assert first_body["response_format"] == second_body["response_format"]
    assert first_body["messages"][0] == second_body["messages"][0]
    prefix = len(json.dumps(second_body["response_format"]["json_schema"]) + second_body["messages"][0]["content"]) // 4
    # OpenAI counts cached tokens in steps of 128: the whole system message, give or take one step
    assert prefix - 128 < second.usage.cached_input_tokens < second.usage.input_tokens
    assert second.usage.cached_input_tokens % 128 == 0
    assert episodes.cached_input_tokens == second.usage.cached_input_tokens


async def test_a_schema_tightened_per_call_would_cut_the_cached_prefix_short(caching_server, closing):
    # what sending the answer model's own schema to OpenAI is for: vLLM (a grammar) gets the tight one
    tight = closing(OpenAIChatModel("gpt-test", base_url=caching_server.openai_base_url, schema_in_prompt=False))
    caching_server.enqueue(*[Answer(ENTITIES)] * 4)
    await tight.complete(ENTITY_EXTRACTION, _context(SHORT))
    cut = await tight.complete(ENTITY_EXTRACTION, _context(LONG))
    stable = closing(OpenAIChatModel("gpt-other", base_url=caching_server.openai_base_url))
    await stable.complete(ENTITY_EXTRACTION, _context(SHORT))
    whole = await stable.complete(ENTITY_EXTRACTION, _context(LONG))
    schemas = [r.json["response_format"]["json_schema"]["schema"] for r in caching_server.requests]
    assert schemas[0] != schemas[1] and schemas[2] == schemas[3]
    assert cut.usage.cached_input_tokens < whole.usage.cached_input_tokens


@pytest.mark.parametrize("mode", ["json_object_schema", "json_object", "prompt"])
async def test_the_schema_instruction_leaves_the_system_message_the_same_on_every_call(caching_server, closing, mode):
    model = closing(OpenAIChatModel("local", base_url=caching_server.openai_base_url, structured_output=mode))
    caching_server.enqueue(Answer(ENTITIES), Answer(ENTITIES))
    await model.complete(ENTITY_EXTRACTION, _context(SHORT))
    second = await model.complete(ENTITY_EXTRACTION, _context(LONG))
    first_body, second_body = (r.json for r in caching_server.requests)
    system = first_body["messages"][0]
    assert system == second_body["messages"][0]  # byte-identical, although the calls' limits differ
    assert system["content"].startswith(ENTITY_EXTRACTION.messages(_context(SHORT))[0].content)
    assert "Respond with one JSON object" in system["content"]
    assert "Ana: hi" not in system["content"] and "Lisbon" not in json.dumps(system)
    if mode == "json_object_schema":  # a grammar holds the answer to the call's own, tighter schema
        assert first_body["response_format"]["schema"] != second_body["response_format"]["schema"]
    assert second.usage.cached_input_tokens >= len(system["content"]) // 4 - 128


async def test_llama_server_timings_are_read_when_it_reports_no_details(fake_server, closing):
    body = {"choices": [{"message": {"content": json.dumps(ENTITIES)}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 20}, "timings": {"cache_n": 700, "prompt_n": 200}}
    fake_server.enqueue(RawBody(json.dumps(body)), Answer(ENTITIES))
    model = closing(OpenAIChatModel("local", base_url=fake_server.openai_base_url, provider="llamacpp"))
    completion = await model.complete(ENTITY_EXTRACTION, _context(SHORT))
    assert (completion.usage.input_tokens, completion.usage.cached_input_tokens) == (900, 700)
    uncached = await model.complete(ENTITY_EXTRACTION, _context(SHORT))  # a server that says nothing
    assert uncached.usage.cached_input_tokens == 0 and uncached.usage.input_tokens > 0


# -- Anthropic --------------------------------------------------------------------------------------------


async def test_anthropic_caches_tools_and_system_and_counts_every_prompt_token(caching_server, closing):
    model = closing(AnthropicModel("claude-test", base_url=caching_server.url, api_key="ak"))
    caching_server.enqueue(*[Answer(ENTITIES)] * 3)
    first = await model.complete(ENTITY_EXTRACTION, _context(SHORT))
    again = await model.complete(ENTITY_EXTRACTION, _context(SHORT))
    other = await model.complete(ENTITY_EXTRACTION, _context(LONG))
    bodies = [r.json for r in caching_server.requests]
    system = ENTITY_EXTRACTION.messages(_context(SHORT))[0].content
    assert bodies[0]["system"] == [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    # Anthropic caches tools → system: the tool must not change with the call's limits
    assert bodies[0]["tools"] == bodies[2]["tools"] and bodies[0]["system"] == bodies[2]["system"]
    assert first.usage.cached_input_tokens == 0  # written to the cache, not read from it
    prefix = len(json.dumps(bodies[0]["tools"][0]) + system) // 4
    assert again.usage.cached_input_tokens == other.usage.cached_input_tokens == prefix
    # input_tokens is the whole prompt, as OpenAI counts it, whatever came from the cache
    assert again.usage.input_tokens == first.usage.input_tokens
    assert other.usage.input_tokens > other.usage.cached_input_tokens


async def test_anthropic_still_holds_the_answer_to_the_calls_limits(caching_server, closing):
    # the tool's schema allows 32 entities; an answer about "Ana: hi" may list two (entities_allowed)
    model = closing(AnthropicModel("claude-test", base_url=caching_server.url))
    names = ["Ana", "Bo", "Cy", "Di"]
    caching_server.enqueue(Answer({"entities": [{**ENTITY, "name": name} for name in names]}))
    completion = await model.complete(ENTITY_EXTRACTION, _context(SHORT))
    assert [e.name for e in completion.output.entities] == ["Ana", "Bo"]
    assert completion.usage.items_dropped == 2


def _anthropic_usage(server: FakeProviderServer, body: dict[str, Any]) -> dict[str, Any]:
    server.enqueue(Answer("ok"))
    return httpx.post(server.url + "/v1/messages", json=body).json()["usage"]


def test_the_fake_caches_only_a_long_enough_prefix_ending_at_a_breakpoint(caching_server):
    long_text, short_text = "x" * (4 * MIN_TOKENS), "y" * (4 * (MIN_TOKENS - 1))
    marked = {"model": "m", "messages": [{"role": "user", "content": "q"}],
              "system": [{"type": "text", "text": long_text, "cache_control": {"type": "ephemeral"}}]}
    unmarked = {**marked, "system": [{"type": "text", "text": long_text}]}
    too_short = {**marked, "system": [{"type": "text", "text": short_text, "cache_control": {"type": "ephemeral"}}]}
    written = _anthropic_usage(caching_server, marked)
    read = _anthropic_usage(caching_server, marked)
    assert (written["cache_creation_input_tokens"], written["cache_read_input_tokens"]) == (MIN_TOKENS, 0)
    assert (read["cache_creation_input_tokens"], read["cache_read_input_tokens"]) == (0, MIN_TOKENS)
    assert written["input_tokens"] == read["input_tokens"] < MIN_TOKENS  # what was neither
    for body in (unmarked, too_short, too_short):
        usage = _anthropic_usage(caching_server, body)
        assert usage["cache_creation_input_tokens"] == usage["cache_read_input_tokens"] == 0


def test_the_fake_follows_openais_minimum_and_steps(caching_server):
    def cached(content: str) -> int:
        caching_server.enqueue(Answer("ok"))
        body = {"model": "m", "messages": [{"role": "user", "content": content}]}
        usage = httpx.post(caching_server.openai_base_url + "/chat/completions", json=body).json()["usage"]
        return int(usage["prompt_tokens_details"]["cached_tokens"])

    shared = "s" * (4 * (MIN_TOKENS + 200))
    assert cached(shared + "a") == 0
    assert cached(shared + "b") == MIN_TOKENS + 128  # 200 tokens past the minimum: one whole step
    assert cached("t" * (4 * (MIN_TOKENS - 10)) + "a") == 0
    assert cached("t" * (4 * (MIN_TOKENS - 10)) + "b") == 0  # shared, but under the minimum
