"""The OpenAI-compatible adapter, behind the retry and limit wrappers, against a loopback server."""

from __future__ import annotations

import time

import pytest
from llm_test_prompts import PERSON, Person, Question
from pydantic import BaseModel

from chronomem.errors import (
    ModelCallForbiddenError,
    ModelError,
    ModelOutputError,
    ModelTruncatedError,
    ModelUnavailableError,
)
from chronomem.llm.base import Prompt
from chronomem.llm.fakeserver import Answer, Disconnect, RawBody, Stall, Status
from chronomem.llm.limits import LimitedModel
from chronomem.llm.openai import OpenAIChatModel
from chronomem.llm.retry import RetryingModel
from chronomem.providers.guard import forbid_model_requests
from chronomem.providers.http import ProviderRequestError
from chronomem.providers.limits import RateLimiter
from chronomem.providers.retry import RetryPolicy

ALICE = {"name": "Alice", "role": "speaker"}


class People(BaseModel):
    people: list[Person]

FAST_RETRIES = RetryPolicy(max_attempts=3, initial_delay_s=0.01, max_delay_s=0.05)


@pytest.fixture
def stack(fake_server, closing):
    """Builds adapter → limiter → retries against the fake server; closed after the test."""

    def build(**adapter_options):
        adapter = OpenAIChatModel(
            "gpt-test", base_url=fake_server.openai_base_url, api_key="sk-test", **adapter_options
        )
        return closing(RetryingModel(LimitedModel(adapter, RateLimiter(max_concurrency=4)), FAST_RETRIES))

    return build


async def test_success_sends_json_schema_and_returns_validated_answer(fake_server, stack):
    fake_server.enqueue(Answer(ALICE))
    completion = await stack().complete(PERSON, Question(text="Alice: hi"))
    assert completion.output == Person(name="Alice", role="speaker")
    request = fake_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.json
    assert body["model"] == "gpt-test" and body["max_tokens"] == 64
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["name", "role"]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    usage = completion.usage
    assert usage.calls == 1 and usage.input_tokens > 0 and usage.output_tokens > 0
    assert usage.model == "openai:gpt-test" and usage.retries == 0


async def test_429_with_retry_after_is_waited_out_then_succeeds(fake_server, stack):
    fake_server.enqueue(Status(429, headers={"Retry-After": "0.3"}), Answer(ALICE))
    started = time.perf_counter()
    completion = await stack().complete(PERSON, Question(text="x"))
    assert time.perf_counter() - started >= 0.3
    assert completion.output.name == "Alice" and completion.usage.retries == 1
    assert fake_server.count() == 2


async def test_429_without_retry_after_backs_off_then_succeeds(fake_server, stack):
    fake_server.enqueue(Status(429), Status(429), Answer(ALICE))
    model = stack()
    completion = await model.complete(PERSON, Question(text="x"))
    assert completion.output.name == "Alice"
    assert fake_server.count() == 3 and model.retries == 2


async def test_retry_after_longer_than_the_policy_waits_surfaces_at_once(fake_server, stack):
    fake_server.enqueue(Status(429, headers={"Retry-After": "3600"}))
    with pytest.raises(ModelUnavailableError, match="3600s"):
        await stack().complete(PERSON, Question(text="x"))
    assert fake_server.count() == 1


async def test_500_is_retried(fake_server, stack):
    fake_server.enqueue(Status(500), Answer(ALICE))
    completion = await stack().complete(PERSON, Question(text="x"))
    assert completion.output.name == "Alice" and fake_server.count() == 2


async def test_persistent_500_surfaces_after_every_attempt(fake_server, stack):
    fake_server.enqueue(Status(503), Status(502), Status(500))
    with pytest.raises(ModelUnavailableError, match="after 3 attempts"):
        await stack().complete(PERSON, Question(text="x"))
    assert fake_server.count() == 3


async def test_timeout_is_retried(fake_server, stack):
    fake_server.enqueue(Stall(2.0), Answer(ALICE))
    completion = await stack(timeout_s=0.2).complete(PERSON, Question(text="x"))
    assert completion.output.name == "Alice" and fake_server.count() == 2


async def test_timeouts_on_every_attempt_surface_as_unavailable(fake_server, stack):
    # a timeout long enough for each request to reach the server on a loaded machine (at 0.1 s one
    # timed out before it was sent, and the server counted two), far shorter than the stall
    fake_server.enqueue(Stall(5.0), Stall(5.0), Stall(5.0))
    with pytest.raises(ModelUnavailableError, match="timed out"):
        await stack(timeout_s=1.0).complete(PERSON, Question(text="x"))
    assert fake_server.count() == 3


async def test_dropped_connection_is_retried(fake_server, stack):
    fake_server.enqueue(Disconnect(), Answer(ALICE))
    completion = await stack().complete(PERSON, Question(text="x"))
    assert completion.output.name == "Alice" and fake_server.count() == 2


async def test_malformed_json_body_is_retried_as_a_server_fault(fake_server, stack):
    fake_server.enqueue(RawBody('{"choices": [ oops'), Answer(ALICE))
    completion = await stack().complete(PERSON, Question(text="x"))
    assert completion.output.name == "Alice" and fake_server.count() == 2


async def test_answer_with_think_block_code_fence_and_prose_is_parsed_without_retry(fake_server, stack):
    text = (
        '<think>The speaker is Alice.</think>\nHere you go:\n```json\n{"name": "Alice", "role": "speaker"}\n```\nDone.'
    )
    fake_server.enqueue(Answer(text))
    completion = await stack().complete(PERSON, Question(text="x"))
    assert completion.output == Person(name="Alice", role="speaker")
    assert fake_server.count() == 1


async def test_malformed_answer_json_gets_a_corrective_retry(fake_server, stack):
    fake_server.enqueue(Answer('{"name": "Alice", "role": '), Answer(ALICE))
    completion = await stack().complete(PERSON, Question(text="x"))
    assert completion.output.name == "Alice" and completion.usage.calls == 2
    assert fake_server.count() == 2


async def test_schema_invalid_answer_is_fixed_by_the_corrective_retry(fake_server, stack):
    fake_server.enqueue(Answer({"name": "Alice", "role": "boss"}), Answer(ALICE))
    completion = await stack().complete(PERSON, Question(text="x"))
    assert completion.output.role == "speaker"
    assert fake_server.count() == 2
    second = fake_server.requests[1].json["messages"]
    assert second[-2] == {"role": "assistant", "content": '{"name": "Alice", "role": "boss"}'}
    assert second[-1]["role"] == "user" and "role" in second[-1]["content"]
    assert "speaker" in second[-1]["content"]  # the validation error names the allowed values


async def test_answer_invalid_twice_raises_output_error_and_is_not_retried_further(fake_server, stack):
    fake_server.enqueue(Answer({"name": "Alice"}), Answer({"name": "Alice"}))
    with pytest.raises(ModelOutputError, match="extract_person") as info:
        await stack().complete(PERSON, Question(text="x"))
    assert not isinstance(info.value, ModelTruncatedError)
    assert fake_server.count() == 2


async def test_truncated_answer_raises_truncation_error_naming_prompt_and_limit(fake_server, stack):
    fake_server.enqueue(Answer('{"name": "Ali', finish="length"))
    with pytest.raises(ModelTruncatedError, match=r"extract_person.*max_output_tokens=64"):
        await stack().complete(PERSON, Question(text="x"))
    assert fake_server.count() == 1


async def test_a_cut_off_list_of_standalone_items_keeps_its_complete_items(fake_server, stack):
    listing = Prompt(name="list_people", answer=People, build=lambda q: PERSON.build(q), max_output_tokens=64,
                     keeps_complete_items=True)
    fake_server.enqueue(Answer('{"people": [{"name": "Alice", "role": "speaker"}, {"name": "Bo', finish="length"))
    completion = await stack().complete(listing, Question(text="x"))
    assert completion.output == People(people=[Person(name="Alice", role="speaker")])
    assert completion.usage.answers_cut_off == 1 and fake_server.count() == 1


async def test_auto_mode_steps_down_when_the_endpoint_refuses_response_format(fake_server, closing):
    refusal = {"error": {"message": "response_format json_schema is not supported by this model"}}
    fake_server.enqueue(*[Status(400, body=refusal)] * 3, Answer(ALICE), Answer(ALICE))
    adapter = closing(OpenAIChatModel("local", base_url=fake_server.openai_base_url))
    await adapter.complete(PERSON, Question(text="x"))
    formats = [fake_server.requests[i].response_format for i in range(4)]
    assert formats == ["json_schema", "json_object_schema", "json_object", None]
    system = fake_server.requests[3].json["messages"][0]
    assert system["role"] == "system" and '"required":["name","role"]' in system["content"]
    await adapter.complete(PERSON, Question(text="y"))
    assert "response_format" not in fake_server.requests[4].json  # the step-down is remembered
    assert "authorization" not in fake_server.requests[0].headers  # no key configured, none sent


async def test_other_400_is_not_retried(fake_server, stack):
    fake_server.enqueue(Status(400, body={"error": {"message": "unknown model"}}))
    with pytest.raises(ProviderRequestError, match="unknown model") as info:
        await stack().complete(PERSON, Question(text="x"))
    assert isinstance(info.value, ModelError) and info.value.status == 400
    assert fake_server.count() == 1


async def test_azure_style_deployment_uses_api_key_header_and_version(fake_server, closing):
    fake_server.enqueue(Answer(ALICE))
    adapter = OpenAIChatModel(
        "my-deployment",
        base_url=f"{fake_server.url}/openai/deployments/my-deployment",
        api_key="azure-key",
        auth_header="api-key",
        api_version="2024-10-21",
    )
    closing(adapter)
    await adapter.complete(PERSON, Question(text="x"))
    request = fake_server.requests[0]
    assert request.path == "/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21"
    assert request.headers["api-key"] == "azure-key" and "authorization" not in request.headers


async def test_forbidden_requests_fail_before_any_io(fake_server, stack):
    with forbid_model_requests(), pytest.raises(ModelCallForbiddenError):
        await stack().complete(PERSON, Question(text="x"))
    assert fake_server.count() == 0
