"""The CLI: its reference page cannot drift, and keys are created, listed and revoked from it."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from chronomem.cli import app, reference_markdown
from chronomem.controlplane.sqlite import SQLiteControlPlane

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_the_checked_in_reference_page_is_what_the_cli_generates():
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert page == reference_markdown(), "docs/cli.md is stale: run `chronomem docs-cli -o docs/cli.md`"


def test_the_reference_documents_every_command_the_issue_names():
    page = reference_markdown()
    for command in ("serve", "worker", "add", "add-fact", "search", "context", "import", "export",
                    "reprocess", "eval", "keys create", "keys revoke", "keys list", "demo", "mcp"):
        assert f"## `chronomem {command}`" in page


def test_docs_check_fails_on_a_stale_page(tmp_path):
    stale = tmp_path / "cli.md"
    stale.write_text("old\n", encoding="utf-8")
    assert runner.invoke(app, ["docs-cli", "--check", "-o", str(stale)]).exit_code == 1
    assert runner.invoke(app, ["docs-cli", "-o", str(stale)]).exit_code == 0
    assert runner.invoke(app, ["docs-cli", "--check", "-o", str(stale)]).exit_code == 0


def test_a_key_created_by_the_cli_authenticates_until_revoked_by_the_cli(tmp_path):
    created = runner.invoke(app, ["--data-dir", str(tmp_path), "keys", "create", "--project", "acme",
                                  "--name", "ci"])
    assert created.exit_code == 0, created.output
    secret = created.stdout.strip().splitlines()[-1]
    control = SQLiteControlPlane.open(tmp_path / "control.db", cache_ttl_s=0)
    try:
        assert control.authenticate(secret).name == "acme"
        listed = runner.invoke(app, ["--data-dir", str(tmp_path), "keys", "list", "--project", "acme"])
        key_id = control.list_keys("acme")[0].id
        assert key_id in listed.stdout and secret not in listed.stdout
        assert runner.invoke(app, ["--data-dir", str(tmp_path), "keys", "revoke", key_id]).exit_code == 0
        assert control.authenticate(secret) is None
    finally:
        control.close()


def test_revoking_an_unknown_key_is_a_clean_error(tmp_path):
    result = runner.invoke(app, ["--data-dir", str(tmp_path), "keys", "revoke", "nope"])
    assert result.exit_code == 1
    assert "no API key with id" in result.stderr and "Traceback" not in result.output


def test_with_a_falkordb_store_the_cli_keeps_keys_on_its_server(tmp_path, falkordb_server):
    import uuid

    from chronomem.controlplane.redis import RedisControlPlane

    url = f"{falkordb_server.url}?namespace=cli{uuid.uuid4().hex[:10]}"
    created = runner.invoke(app, ["--data-dir", str(tmp_path), "--store", url, "keys", "create", "--project", "acme"])
    assert created.exit_code == 0, created.output
    control = RedisControlPlane.connect(url, cache_ttl_s=0)  # what a server on another machine opens
    try:
        assert control.authenticate(created.stdout.strip().splitlines()[-1]).name == "acme"
    finally:
        control.close()
    assert not (tmp_path / "control.db").exists()  # nothing local
