"""Structured-output negotiation: refusals step down once per endpoint, learnt for the process."""

from __future__ import annotations

import logging
import time

import pytest
from llm_test_prompts import PERSON, Question

from chronomem.errors import ModelUnavailableError
from chronomem.llm.fakeserver import Answer, FakeProviderServer, Stall, Status
from chronomem.llm.limits import LimitedModel
from chronomem.llm.openai import OpenAIChatModel
from chronomem.llm.retry import RetryingModel
from chronomem.llm.structured import Negotiation, forget_negotiated_modes, refuses_structured_output
from chronomem.providers.guard import allow_model_requests
from chronomem.providers.http import LazyHttpClient, ProviderRequestError, ProviderUnavailableError, post_json
from chronomem.providers.limits import RateLimiter
from chronomem.providers.retry import RetryPolicy

ALICE = {"name": "Alice", "role": "speaker"}
LLAMA_CPP_FORMATS = frozenset({"json_object_schema", "json_object"})


@pytest.fixture
def llama_like_server():
    """A fake that, like llama-cpp-python's server, answers json_schema with a 500."""
    forget_negotiated_modes()
    with FakeProviderServer(response_formats=LLAMA_CPP_FORMATS) as server, allow_model_requests():
        yield server


def retrying(adapter, attempts=3):
    policy = RetryPolicy(max_attempts=attempts, initial_delay_s=0.01, max_delay_s=0.02)
    return RetryingModel(LimitedModel(adapter, RateLimiter(max_concurrency=2)), policy)


async def test_a_500_refusing_json_schema_steps_down_at_once_without_spending_retries(
    llama_like_server, closing, caplog
):
    llama_like_server.enqueue(Answer(ALICE), Answer(ALICE), Answer(ALICE))
    first = closing(retrying(OpenAIChatModel("gemma", base_url=llama_like_server.openai_base_url)))
    with caplog.at_level(logging.INFO, logger="chronomem.llm.structured"):
        completion = await first.complete(PERSON, Question(text="x"))
        # another adapter for the same endpoint and model starts where the first one ended
        second = closing(retrying(OpenAIChatModel("gemma", base_url=llama_like_server.openai_base_url)))
        await second.complete(PERSON, Question(text="y"))
        await second.complete(PERSON, Question(text="z"))

    assert completion.output.name == "Alice" and completion.usage.retries == 0
    formats = [request.response_format for request in llama_like_server.requests]
    assert formats == ["json_schema", "json_object_schema", "json_object_schema", "json_object_schema"]
    sent = llama_like_server.requests[1].json["response_format"]
    assert sent["type"] == "json_object" and sent["schema"]["required"] == ["name", "role"]
    assert first.retries == 0 and llama_like_server.refused == 1
    announcements = [r.getMessage() for r in caplog.records if "structured output mode" in r.getMessage()]
    assert len(announcements) == 1
    assert "json_object_schema" in announcements[0] and "refused: json_schema: HTTP 500" in announcements[0]


async def test_a_server_taking_no_response_format_ends_at_prompt_only(closing):
    forget_negotiated_modes()
    with FakeProviderServer(response_formats=frozenset(), refusal_status=400) as server, allow_model_requests():
        server.enqueue(Answer(ALICE))
        adapter = closing(OpenAIChatModel("m", base_url=server.openai_base_url))
        await adapter.complete(PERSON, Question(text="x"))
        assert [r.response_format for r in server.requests] == [
            "json_schema",
            "json_object_schema",
            "json_object",
            None,
        ]
        assert adapter.mode == "prompt"


async def test_a_fixed_mode_that_is_refused_fails_once_naming_the_setting(llama_like_server, closing):
    model = closing(
        retrying(OpenAIChatModel("m", base_url=llama_like_server.openai_base_url, structured_output="json_schema"))
    )
    with pytest.raises(ProviderRequestError, match="CHRONOMEM_LLM_STRUCTURED_OUTPUT") as info:
        await model.complete(PERSON, Question(text="x"))
    assert info.value.status == 500 and llama_like_server.count() == 1  # not retried


async def test_a_500_about_something_else_is_retried_in_the_same_mode(fake_server, closing):
    fake_server.enqueue(Status(500, body={"error": {"message": "CUDA out of memory"}}), Answer(ALICE))
    model = closing(retrying(OpenAIChatModel("m", base_url=fake_server.openai_base_url)))
    await model.complete(PERSON, Question(text="x"))
    assert [r.response_format for r in fake_server.requests] == ["json_schema", "json_schema"]
    assert model.retries == 1


def test_concurrent_refusals_of_one_mode_step_down_once():
    negotiation = Negotiation("http://x/v1/chat/completions#m")
    assert negotiation.step_down("json_schema", "HTTP 500") == "json_object_schema"
    assert negotiation.step_down("json_schema", "HTTP 500") == "json_object_schema"  # a late duplicate
    assert negotiation.refusals == ("json_schema: HTTP 500",)
    assert negotiation.step_down("json_object_schema", "HTTP 500") == "json_object"
    assert negotiation.step_down("json_object", "HTTP 400") == "prompt"
    assert negotiation.step_down("prompt", "HTTP 400") is None


@pytest.mark.parametrize(
    ("status", "body", "refused"),
    [
        (500, "Input should be 'text' or 'json_object' (response_format.type)", True),
        (400, "Invalid schema for response_format 'answer'", True),
        (500, "failed to parse grammar", True),
        (422, "json_schema is not supported", True),
        (429, "slow down: schema requests are rate limited", False),  # "later", not "not like this"
        (400, "unknown model", False),
        (500, "internal error", False),
    ],
)
def test_what_counts_as_a_refusal_of_the_format(status, body, refused):
    error = (
        ProviderUnavailableError("x", status=status, body=body)
        if status >= 500 or status == 429
        else (ProviderRequestError("x", status=status, body=body))
    )
    assert refuses_structured_output(error) is refused


async def test_raw_control_characters_inside_strings_are_repaired_without_a_retry(fake_server, closing):
    fake_server.enqueue(Answer('{"name": "Alice\nSmith", "role":\t"speaker"}'))
    model = closing(OpenAIChatModel("m", base_url=fake_server.openai_base_url))
    completion = await model.complete(PERSON, Question(text="x"))
    assert completion.output.name == "Alice\nSmith" and fake_server.count() == 1


async def test_the_per_call_timeout_bounds_the_whole_request(fake_server):
    fake_server.enqueue(Stall(3.0))
    http = LazyHttpClient(timeout_s=30.0)  # httpx's own read timeout would wait far longer
    started = time.perf_counter()
    try:
        with pytest.raises(ModelUnavailableError, match=r"per-call timeout of 0\.3s"):
            await post_json(
                http.client,
                fake_server.openai_base_url + "/chat/completions",
                {},
                headers={},
                target="fake",
                timeout_s=0.3,
            )
    finally:
        await http.aclose()
    assert time.perf_counter() - started < 2.5


def test_the_fake_server_refuses_unknown_format_names():
    with pytest.raises(ValueError, match="unknown response formats"):
        FakeProviderServer(response_formats=frozenset({"xml"}))
