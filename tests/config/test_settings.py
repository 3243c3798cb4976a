"""Settings are read from the environment only when asked, and travel to child processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronomem.config.settings import Settings
from chronomem.errors import ConfigurationError


def test_defaults_need_no_environment_and_use_an_embedded_store_under_the_data_dir():
    settings = Settings()
    assert settings.resolved_store_url == "sqlite:///.chronomem/chronomem.db"
    assert settings.resolved_control_db == Path(".chronomem/control.db")
    assert settings.llm is None and settings.auth_required


def test_from_env_reads_the_chronomem_variables():
    settings = Settings.from_env({
        "CHRONOMEM_DATA_DIR": "/srv/mem", "CHRONOMEM_EMBEDDER": "hashing", "CHRONOMEM_WORKERS": "8",
        "CHRONOMEM_INPROCESS_WORKERS": "no", "CHRONOMEM_MAX_ATTEMPTS": "5", "CHRONOMEM_RETRY_BASE_S": "0.5",
        "CHRONOMEM_MAX_REQUEST_BYTES": "2048", "CHRONOMEM_AUTH": "0",
    })
    assert settings.resolved_store_url == "sqlite:////srv/mem/chronomem.db"
    assert settings.embedder == "hashing" and not settings.auth_required
    assert (settings.workers.concurrency, settings.workers.in_process, settings.workers.max_attempts) == (8, False, 5)
    assert settings.workers.retry_base_s == 0.5 and settings.api.max_request_bytes == 2048
    assert settings.llm is None  # no model unless one is named


def test_settings_travel_to_child_processes_through_their_environment():
    from chronomem.config.settings import ApiLimits, WorkerSettings

    settings = Settings(data_dir=Path("/srv/mem"), store_url="falkordb://db:6379", embedder="hashing",
                        workers=WorkerSettings(concurrency=9, in_process=False, max_attempts=2, retry_base_s=0.25),
                        api=ApiLimits(max_request_bytes=4096), auth_required=False)
    assert Settings.from_env(settings.environment()) == settings
    assert Settings.from_env(Settings().environment()) == Settings()


def test_naming_a_model_brings_the_llm_settings():
    settings = Settings.from_env({"CHRONOMEM_LLM_MODEL": "openai:gpt-4o-mini"})
    assert settings.llm is not None and settings.llm.model == "openai:gpt-4o-mini"


@pytest.mark.parametrize(("name", "value"), [("CHRONOMEM_WORKERS", "many"), ("CHRONOMEM_AUTH", "maybe"),
                                             ("CHRONOMEM_WORKERS", "0"), ("CHRONOMEM_RETRY_BASE_S", "soon")])
def test_malformed_variables_are_named_in_the_error(name, value):
    with pytest.raises(ConfigurationError, match=name if value != "0" else "at least 1"):
        Settings.from_env({name: value})
