"""Settings: provider:model strings, environment, and the factory's stack."""

from __future__ import annotations

import pytest
from llm_test_prompts import PERSON, Question

from chronomem.errors import ConfigurationError
from chronomem.llm.anthropic import AnthropicModel
from chronomem.llm.base import LanguageModel, Prompt
from chronomem.llm.cache import CachedModel
from chronomem.llm.fakeserver import Answer, Status
from chronomem.llm.limits import LimitedModel
from chronomem.llm.openai import OpenAIChatModel
from chronomem.llm.retry import RetryingModel
from chronomem.llm.settings import LLMSettings, build_adapter, build_language_model
from chronomem.providers.endpoints import parse_model_spec

ALICE = {"name": "Alice", "role": "speaker"}


def test_parse_model_spec_keeps_colons_in_the_model_name():
    assert parse_model_spec("ollama:qwen2.5:7b") == ("ollama", "qwen2.5:7b")
    assert parse_model_spec("OpenAI:gpt-4o") == ("openai", "gpt-4o")
    for bad in ("gpt-4o", "nowhere:model", "openai:"):
        with pytest.raises(ConfigurationError):
            parse_model_spec(bad)


def test_from_env_reads_only_the_given_mapping():
    env = {
        "CHRONOMEM_LLM_MODEL": "anthropic:claude-3-5-haiku-latest",
        "CHRONOMEM_LLM_MODEL_RESOLUTION": "ollama:llama3.1:8b",
        "ANTHROPIC_API_KEY": "ak",
        "OPENAI_API_KEY": "sk",
        "OLLAMA_HOST": "gpu-box:11434",
        "CHRONOMEM_LLM_STRUCTURED_OUTPUT": "json_object",
        "CHRONOMEM_LLM_TPM": "90000",
    }
    settings = LLMSettings.from_env(env, timeout_s=5)
    assert settings.model_for("extraction") == "anthropic:claude-3-5-haiku-latest"
    assert settings.model_for("resolution") == "ollama:llama3.1:8b"
    assert settings.api_key_for("anthropic") == "ak" and settings.api_key_for("openai") == "sk"
    assert settings.base_url_for("ollama") == "http://gpu-box:11434/v1"
    assert settings.structured_output == "json_object" and settings.tokens_per_minute == 90000
    assert settings.timeout_s == 5
    assert "ak" not in repr(settings)  # keys are secrets


def test_build_adapter_picks_the_wire_format_and_endpoint():
    settings = LLMSettings(base_urls={"azure": "https://res.openai.azure.com"}, api_keys={"azure": "k"})
    azure = build_adapter("azure:my-deploy", settings)
    assert isinstance(azure, OpenAIChatModel)
    assert azure.url == "https://res.openai.azure.com/openai/deployments/my-deploy/chat/completions"
    assert isinstance(build_adapter("anthropic:claude-x", settings), AnthropicModel)
    vllm = build_adapter("vllm:Qwen/Qwen2.5-7B-Instruct", settings)
    assert vllm.url == "http://localhost:8000/v1/chat/completions"
    reasoning = build_adapter("openai:o4-mini", LLMSettings(max_tokens_field="max_completion_tokens", temperature=None))
    payload = reasoning._payload(PERSON, PERSON.messages(Question(text="x")), reasoning.mode)
    assert payload["max_completion_tokens"] == 64 and "max_tokens" not in payload and "temperature" not in payload
    with pytest.raises(ConfigurationError, match="azure"):
        build_adapter("azure:x", LLMSettings())


async def test_factory_stacks_wrappers_and_routes_roles_end_to_end(fake_server, closing, tmp_path):
    settings = LLMSettings(
        model="vllm:big",
        role_models={"resolution": "llamacpp:small"},
        base_urls={"vllm": fake_server.openai_base_url, "llamacpp": fake_server.openai_base_url},
        initial_backoff_s=0.01,
        cache_path=tmp_path / "cache.sqlite",
    )
    model = closing(build_language_model(settings))
    assert isinstance(model, LanguageModel)
    default = model.model_for("extraction")
    assert isinstance(default, CachedModel) and isinstance(default.inner, RetryingModel)
    assert isinstance(default.inner.inner, LimitedModel)

    fake_server.enqueue(Status(429), Answer(ALICE), Answer(ALICE))
    completion = await model.complete(PERSON, Question(text="x"))
    assert completion.output.name == "Alice" and completion.usage.retries == 1
    resolve = Prompt(name="resolve", answer=PERSON.answer, build=PERSON.build, role="resolution")
    await model.complete(resolve, Question(text="x"))
    assert [r.json["model"] for r in fake_server.requests] == ["big", "big", "small"]

    again = await model.complete(PERSON, Question(text="x"))  # served from the disk cache
    assert again.usage.cache_hits == 1 and fake_server.count() == 3
