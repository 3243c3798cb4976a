"""The Anthropic adapter, behind the retry wrapper, against a loopback server speaking /v1/messages."""

from __future__ import annotations

import time

import pytest
from llm_test_prompts import PERSON, Person, Question

from chronomem.errors import ModelOutputError, ModelTruncatedError, ModelUnavailableError
from chronomem.llm.anthropic import ANTHROPIC_API_VERSION, AnthropicModel
from chronomem.llm.base import Message, Prompt
from chronomem.llm.fakeserver import Answer, RawBody, Stall, Status
from chronomem.llm.retry import RetryingModel
from chronomem.providers.retry import RetryPolicy

ALICE = {"name": "Alice", "role": "speaker"}


@pytest.fixture
def stack(fake_server, closing):
    def build(**options):
        adapter = AnthropicModel("claude-test", base_url=fake_server.url, api_key="ak-test", **options)
        policy = RetryPolicy(max_attempts=3, initial_delay_s=0.01, max_delay_s=0.05)
        return closing(RetryingModel(adapter, policy))

    return build


async def test_tool_use_answer_is_validated_and_request_speaks_messages_api(fake_server, stack):
    fake_server.enqueue(Answer(ALICE))
    completion = await stack().complete(PERSON, Question(text="Alice: hi"))
    assert completion.output == Person(name="Alice", role="speaker")
    request = fake_server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "ak-test"
    assert request.headers["anthropic-version"] == ANTHROPIC_API_VERSION
    body = request.json
    # a text block with a cache breakpoint: Anthropic caches the tool and the system prompt up to it
    assert body["system"] == [{"type": "text", "text": "You extract the person named in the text.",
                               "cache_control": {"type": "ephemeral"}}]
    assert body["messages"] == [{"role": "user", "content": "Alice: hi"}]
    assert body["max_tokens"] == 64
    assert body["tool_choice"] == {"type": "tool", "name": "extract_person"}
    assert body["tools"][0]["input_schema"]["required"] == ["name", "role"]
    assert completion.usage.model == "anthropic:claude-test" and completion.usage.input_tokens > 0


async def test_text_answer_with_fences_is_parsed(fake_server, stack):
    fake_server.enqueue(Answer('Sure.\n```json\n{"name": "Alice", "role": "mentioned"}\n```'))
    completion = await stack().complete(PERSON, Question(text="x"))
    assert completion.output.role == "mentioned" and fake_server.count() == 1


async def test_429_with_retry_after_then_success(fake_server, stack):
    fake_server.enqueue(Status(429, headers={"retry-after": "0.2"}), Answer(ALICE))
    started = time.perf_counter()
    completion = await stack().complete(PERSON, Question(text="x"))
    assert time.perf_counter() - started >= 0.2
    assert completion.output.name == "Alice" and completion.usage.retries == 1 and fake_server.count() == 2


async def test_429_without_retry_after_and_529_overloaded_are_retried(fake_server, stack):
    fake_server.enqueue(Status(429), Status(529, body={"type": "error", "error": {"type": "overloaded_error"}}))
    fake_server.enqueue(Answer(ALICE))
    completion = await stack().complete(PERSON, Question(text="x"))
    assert completion.output.name == "Alice" and fake_server.count() == 3


async def test_persistent_500_surfaces(fake_server, stack):
    fake_server.enqueue(Status(500), Status(500), Status(500))
    with pytest.raises(ModelUnavailableError):
        await stack().complete(PERSON, Question(text="x"))
    assert fake_server.count() == 3


async def test_timeout_then_success(fake_server, stack):
    fake_server.enqueue(Stall(2.0), Answer(ALICE))
    completion = await stack(timeout_s=0.2).complete(PERSON, Question(text="x"))
    assert completion.output.name == "Alice" and fake_server.count() == 2


async def test_malformed_body_is_retried(fake_server, stack):
    fake_server.enqueue(RawBody("<html>bad gateway</html>", content_type="text/html"), Answer(ALICE))
    completion = await stack().complete(PERSON, Question(text="x"))
    assert completion.output.name == "Alice" and fake_server.count() == 2


async def test_schema_invalid_tool_input_is_corrected_once(fake_server, stack):
    fake_server.enqueue(Answer({"name": "Alice", "role": 3}), Answer(ALICE))
    completion = await stack().complete(PERSON, Question(text="x"))
    assert completion.output.role == "speaker" and fake_server.count() == 2
    turns = fake_server.requests[1].json["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert "role" in turns[-1]["content"]


async def test_invalid_twice_raises_output_error(fake_server, stack):
    fake_server.enqueue(Answer({"nobody": True}), Answer({"nobody": True}))
    with pytest.raises(ModelOutputError):
        await stack().complete(PERSON, Question(text="x"))
    assert fake_server.count() == 2


async def test_max_tokens_stop_raises_truncation_error(fake_server, stack):
    fake_server.enqueue(Answer({"name": "Al"}, finish="length"))
    with pytest.raises(ModelTruncatedError, match=r"extract_person.*max_output_tokens=64"):
        await stack().complete(PERSON, Question(text="x"))
    assert fake_server.count() == 1


async def test_consecutive_turns_of_one_role_are_merged_and_a_user_turn_leads(fake_server, stack):
    prompt = Prompt(
        name="odd shape",
        answer=Person,
        build=lambda _: [
            Message("system", "a"),
            Message("assistant", "b"),
            Message("user", "c"),
            Message("user", "d"),
        ],
    )
    fake_server.enqueue(Answer(ALICE))
    await stack().complete(prompt, None)
    body = fake_server.requests[0].json
    assert [t["role"] for t in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][-1]["content"] == "c\n\nd"
    assert body["tool_choice"]["name"] == "odd_shape"
