"""The names the LLM, embedder and cross-encoder packages export (others import these)."""

from __future__ import annotations

import importlib

import pytest

EXPECTED = {
    "chronomem.llm": {
        "AnthropicModel", "CachedModel", "Completion", "LLMSettings", "LanguageModel", "LimitedModel",
        "Message", "ModelRole", "OpenAIChatModel", "Prompt", "RateLimiter", "ResponseCache", "RetryPolicy",
        "RetryingModel", "RoutedModel", "Usage", "build_language_model", "process_usage", "shared_limiter",
        "usage_scope",
    },
    "chronomem.llm.testing": {
        "AnswerFunction", "FunctionModel", "SchemaModel", "ScriptedModel", "allow_model_requests",
        "forbid_model_requests", "serialize_answer",
    },
    "chronomem.embed": {
        "CachedEmbedder", "Embedder", "HashingEmbedder", "LocalEmbedder", "OpenAIEmbedder", "build_embedder",
    },
    "chronomem.providers": {
        "DEFAULT_BASE_URLS", "LazyHttpClient", "OpenAICompatibleEndpoint", "ProviderRequestError",
        "ProviderSettings", "ProviderUnavailableError", "RateLimiter", "RetryPolicy", "allow_model_requests",
        "auth_headers",
        "call_with_retries", "estimate_tokens", "forbid_model_requests", "openai_compatible_endpoint",
        "parse_model_spec", "post_json", "shared_limiter",
    },
    "chronomem.crossencoder": {
        "CrossEncoder", "LLMCrossEncoder", "SentenceTransformersCrossEncoder", "TokenOverlapCrossEncoder",
    },
}  # fmt: skip


@pytest.mark.parametrize("module_name", sorted(EXPECTED))
def test_exported_names(module_name):
    module = importlib.import_module(module_name)
    assert set(module.__all__) == EXPECTED[module_name]
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_fixture_is_reachable_from_testing_module():
    from chronomem.llm.testing import no_model_requests

    assert no_model_requests.__name__ == "no_model_requests"
