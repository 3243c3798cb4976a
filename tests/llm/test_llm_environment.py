"""The LLM layer's environment variables: each declared once, each read, base URLs by precedence."""

from __future__ import annotations

import pytest

from chronomem.llm.environment import VARIABLES, base_url_variable
from chronomem.llm.settings import LLMSettings, build_adapter
from chronomem.providers.endpoints import (
    PROVIDERS,
    auth_headers,
    openai_compatible_endpoint,
)

_SAMPLES = {
    "model": "ollama:m",
    "structured_output": "prompt",
    "azure_api_version": "2099-01-01",
    "cache_path": "/tmp/chronomem-llm-cache.db",
}


def _sample(setting: str) -> str:
    if setting in _SAMPLES:
        return _SAMPLES[setting]
    if setting.startswith("role_models"):
        return "groq:small"
    if setting.startswith("base_urls"):
        return "http://gpu-box:9999/v1"
    if setting.startswith("api_keys"):
        return "key-from-env"
    return "7"  # the numeric settings


@pytest.mark.parametrize("variable", VARIABLES, ids=lambda v: v.name)
def test_every_declared_variable_changes_the_settings(variable):
    baseline = LLMSettings.from_env({})
    changed = LLMSettings.from_env({variable.name: _sample(variable.setting)})
    assert changed != baseline, f"{variable.name} is declared but not read"
    assert variable.doc.strip()


def test_names_are_declared_once_and_every_provider_has_its_base_url_variable():
    names = [v.name for v in VARIABLES]
    assert len(names) == len(set(names))
    assert {base_url_variable(p) for p in PROVIDERS} <= set(names)
    assert base_url_variable("llamacpp") == "CHRONOMEM_LLAMACPP_BASE_URL"


def test_base_urls_by_precedence():
    env = {
        "CHRONOMEM_LLM_MODEL": "llamacpp:gemma",
        "CHRONOMEM_LLM_BASE_URL": "http://127.0.0.1:8081/v1",
        "OLLAMA_HOST": "box:11434",
        "CHRONOMEM_OLLAMA_BASE_URL": "http://other:11434/v1",
        "OPENAI_BASE_URL": "http://proxy/v1",
    }
    settings = LLMSettings.from_env(env)
    assert settings.base_url_for("llamacpp") == "http://127.0.0.1:8081/v1"  # the default model's provider
    assert settings.base_url_for("ollama") == "http://other:11434/v1"  # CHRONOMEM_<P>_BASE_URL wins
    assert settings.base_url_for("openai") == "http://proxy/v1"
    assert settings.base_url_for("vllm") == "http://localhost:8000/v1"  # untouched default
    both = LLMSettings.from_env({**env, "CHRONOMEM_LLAMACPP_BASE_URL": "http://x:1/v1"})
    assert both.base_url_for("llamacpp") == "http://x:1/v1"
    # without CHRONOMEM_LLM_MODEL it applies to the default model (an override counts)
    assert LLMSettings.from_env({"CHRONOMEM_LLM_BASE_URL": "http://y/v1"}).base_url_for("openai") == "http://y/v1"
    routed = LLMSettings.from_env({"CHRONOMEM_LLM_BASE_URL": "http://z/v1"}, model="vllm:q")
    assert routed.base_url_for("vllm") == "http://z/v1"


def test_the_per_call_timeout_defaults_longer_for_local_servers_and_is_settable():
    default = LLMSettings()
    assert default.timeout_for("llamacpp") == 300 and default.timeout_for("ollama") == 300
    assert default.timeout_for("openai") == 60 and default.timeout_for("anthropic") == 60
    set_ = LLMSettings.from_env({"CHRONOMEM_LLM_TIMEOUT_S": "12.5"})
    assert set_.timeout_for("llamacpp") == 12.5 and set_.timeout_for("openai") == 12.5
    adapter = build_adapter("llamacpp:gemma", LLMSettings.from_env({"CHRONOMEM_LLM_TIMEOUT_S": "9"}))
    assert adapter._http.timeout_s == 9


def test_auth_headers_per_scheme_and_none_without_a_key():
    assert auth_headers("k") == {"Authorization": "Bearer k"}
    assert auth_headers("k", "api-key") == {"api-key": "k"}
    assert auth_headers("k", "x-api-key") == {"x-api-key": "k"}
    assert auth_headers(None) == {} and auth_headers("", "api-key") == {}


def test_azure_is_the_one_provider_whose_url_depends_on_the_model():
    azure = openai_compatible_endpoint("azure", "dep", base_url="https://r.openai.azure.com/", azure_api_version="v1")
    assert azure.base_url == "https://r.openai.azure.com/openai/deployments/dep"
    assert azure.auth == "api-key" and azure.api_version == "v1"
    vllm = openai_compatible_endpoint("vllm", "dep", base_url="http://h/v1/", azure_api_version="v1")
    assert (vllm.base_url, vllm.auth, vllm.api_version) == ("http://h/v1", "bearer", None)


def test_every_variable_is_documented_in_the_provider_pages():
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs"
    text = (docs / "providers.md").read_text() + (docs / "llm.md").read_text()
    generic = {v.name for v in VARIABLES if v.name.endswith("_BASE_URL") and v.name.startswith("CHRONOMEM_")}
    missing = [v.name for v in VARIABLES if v.name not in text and v.name not in generic]
    assert not missing, f"undocumented: {missing}"
    assert "CHRONOMEM_<PROVIDER>_BASE_URL" in text and "CHRONOMEM_LLAMACPP_BASE_URL" in text
