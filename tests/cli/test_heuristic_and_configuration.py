"""`heuristic` is a model name for every entry point (serve, worker, CLI; MCP in tests/mcp), each
of which says it is a rule-based stand-in; a project's ontology and mappings from the CLI; --config."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import processes
from chronomem.cli import app
from service_support import free_port

runner = CliRunner()
STAND_IN = "heuristic (a rule-based stand-in, not an LLM)"
ROOT = Path(__file__).resolve().parents[2]


def heuristic_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "CHRONOMEM_LLM_MODEL": "heuristic", "CHRONOMEM_EMBEDDER": "hashing",
            "CHRONOMEM_DATA_DIR": str(tmp_path), "PYTHONPATH": str(ROOT / "src")}


def test_the_cli_extracts_with_the_heuristic_named_in_the_environment(tmp_path):
    added = runner.invoke(app, ["add", "g", "I moved to Porto with Ana last May."], env=heuristic_env(tmp_path))
    assert added.exit_code == 0, added.output
    assert ": done (" in added.stdout and "Porto" in added.stdout  # extracted, not left unextracted


@pytest.mark.integration
def test_serve_starts_with_the_heuristic_and_says_it_is_not_an_llm(tmp_path):
    port = free_port()
    env = {**heuristic_env(tmp_path), "CHRONOMEM_AUTH": "0"}
    server = processes.start([sys.executable, "-m", "chronomem.cli", "serve", "--port", str(port)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with processes.stopping(server):  # however the test ends
        ready = None
        deadline = time.monotonic() + 60
        while ready is None and time.monotonic() < deadline and server.poll() is None:
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1)
            except httpx.TransportError:
                time.sleep(0.2)
        assert ready is not None and ready.status_code == 200, server.communicate(timeout=5)[0] if server.poll() else ""
        assert ready.json()["model"] == STAND_IN
        server.send_signal(signal.SIGTERM)
        output = server.communicate(timeout=30)[0]
    assert f"model: {STAND_IN}" in output and "Traceback" not in output


@pytest.mark.integration
def test_a_worker_extracts_with_the_heuristic_and_says_it_is_not_an_llm(tmp_path):
    env = heuristic_env(tmp_path)
    queued = subprocess.run(  # queue an episode without extracting it: no model in this process
        [sys.executable, "-c", "import asyncio\nfrom chronomem import Chronomem, Settings\n"
         "async def main():\n    async with await Chronomem.open(Settings.from_env()) as m:\n"
         "        [e] = await m.enqueue([m.new_episode('g', 'Maya: I work at Globex.')])\n        print(e.id)\n"
         "asyncio.run(main())"],
        env={**env, "CHRONOMEM_LLM_MODEL": ""}, capture_output=True, text=True, timeout=60)
    assert queued.returncode == 0, queued.stderr
    worker = processes.start([sys.executable, "-m", "chronomem.cli", "worker"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with processes.stopping(worker):  # however the test ends
        assert worker.stdout is not None
        said = ""
        while "Ctrl-C" not in said and (line := worker.stdout.readline()):
            said += line
        assert "running" in said and STAND_IN in " ".join(said.split()), said
        names: set[str] = set()
        deadline = time.monotonic() + 60
        while "Globex" not in names and time.monotonic() < deadline:
            time.sleep(0.3)
            found = runner.invoke(app, ["search", "g", "Globex", "--json"], env={**env, "CHRONOMEM_LLM_MODEL": ""})
            names = {e["name"] for e in json.loads(found.stdout)["entities"]} if found.exit_code == 0 else set()
        assert "Globex" in names  # the worker extracted it with the stand-in
        worker.send_signal(signal.SIGINT)
        worker.communicate(timeout=30)
    assert worker.returncode == 0


# -- a project's ontology and mappings ----------------------------------------------------------------


def test_a_projects_ontology_and_mappings_are_shown_set_and_reset(tmp_path):
    def cli(*args: str):
        return runner.invoke(app, ["--data-dir", str(tmp_path), *args])

    assert cli("keys", "create", "--project", "acme").exit_code == 0
    shown = cli("ontology", "show", "--project", "acme")
    assert shown.exit_code == 0 and json.loads(shown.stdout)["entity_types"] == []
    good = tmp_path / "ontology.toml"
    good.write_text('single_valued = ["LIVES_IN"]\n[[entity_types]]\nname = "Person"\ndescription = "A human."\n')
    assert cli("ontology", "set", str(good), "--project", "acme").exit_code == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"edge_types": [{"name": "X", "source_targets": [{"source": "Ghost"}]}]}')
    refused = cli("ontology", "set", str(bad), "--project", "acme")
    assert refused.exit_code == 1 and "Ghost" in refused.output
    stored = json.loads(cli("ontology", "show", "--project", "acme").stdout)
    assert [t["name"] for t in stored["entity_types"]] == ["Person"] and stored["single_valued"] == ["LIVES_IN"]
    assert cli("ontology", "reset", "--project", "acme").exit_code == 0
    assert json.loads(cli("ontology", "show", "--project", "acme").stdout)["entity_types"] == []

    mappings = tmp_path / "mappings.json"
    mappings.write_text(json.dumps([{"name": "crm", "entities": [{"key": "a", "name": "company"}]}]))
    assert cli("mappings", "set", str(mappings), "--project", "acme").exit_code == 0
    assert [m["name"] for m in json.loads(cli("mappings", "show", "--project", "acme").stdout)] == ["crm"]
    assert cli("mappings", "show", "--project", "nobody").exit_code == 1  # unknown project: a clean error


def test_a_config_file_given_on_the_command_line_is_read_and_checked(tmp_path):
    config = tmp_path / "chronomem.toml"
    config.write_text('[ingest]\nreflection = true\n')
    refused = runner.invoke(app, ["--config", str(config), "groups"])
    assert refused.exit_code == 1 and "unknown key [ingest] reflection" in " ".join(refused.output.split())
    config.write_text(f'data_dir = "{tmp_path.as_posix()}/mem"\nembedder = "hashing"\n')
    assert runner.invoke(app, ["--config", str(config), "add-fact", "g", "Ann", "OWNS", "Rex", "Ann owns Rex"]
                         ).exit_code == 0
    assert (tmp_path / "mem" / "chronomem.db").exists()  # the file's data_dir was used


def test_the_configuration_page_check_fails_when_it_drifts(tmp_path):
    page = tmp_path / "configuration.md"
    assert runner.invoke(app, ["docs-config", "-o", str(page)]).exit_code == 0
    assert runner.invoke(app, ["docs-config", "-o", str(page), "--check"]).exit_code == 0
    page.write_text(page.read_text() + "drift\n")
    assert runner.invoke(app, ["docs-config", "-o", str(page), "--check"]).exit_code == 1


def test_the_demo_names_the_stand_in_chosen_by_the_environment(tmp_path):
    shown = runner.invoke(app, ["demo"], env={**heuristic_env(tmp_path), "CHRONOMEM_LLM_MODEL": "heuristic"})
    assert shown.exit_code == 0, shown.output
    assert f"Model: {STAND_IN}" in " ".join(shown.stdout.split())
    unextracted = runner.invoke(app, ["demo"], env={**heuristic_env(tmp_path), "CHRONOMEM_LLM_MODEL": ""})
    assert "Model: none" in unextracted.stdout
