"""The README's promises hold: its two set-up commands are the ones CI runs, and its examples run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def fenced(after_heading: str, language: str) -> str:
    section = README.split(after_heading, 1)[1]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match, f"no {language} block after {after_heading!r}"
    return match.group(1)


def test_the_two_setup_commands_are_make_demo_and_make_test_and_ci_runs_the_second():
    commands = [line.split("#")[0].strip() for line in fenced("## Set up on a fresh machine", "bash").splitlines()]
    assert commands == ["make demo", "make test"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test$", ci, re.M)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo: install", makefile, re.M) and re.search(r"^test: install", makefile, re.M)
    # every install is the lock, exactly: `uv sync --locked` fails when pyproject.toml and uv.lock disagree
    assert "sync --locked" in makefile and "lock-check" in re.search(r"^test:.*$", makefile, re.M).group(0)


@pytest.mark.parametrize("kind", ["curl", "python"])
def test_the_server_examples_are_the_ones_the_service_docs_run(kind: str):
    """tests/service/test_docs_examples.py executes docs/service.md's examples; the README shows the same."""
    docs = (ROOT / "docs" / "service.md").read_text(encoding="utf-8")
    pattern = rf"<!-- example: {kind} -->\n```\w+\n(.*?)```"
    readme_block = re.search(pattern, README, re.S)
    docs_block = re.search(pattern, docs, re.S)
    assert readme_block and docs_block
    assert readme_block.group(1) == docs_block.group(1)


@pytest.mark.integration
def test_the_python_example_runs_on_the_embedded_default(tmp_path: Path):
    code = fenced("## Use it from Python", "python")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Alice lives in Lisbon" in result.stdout
    assert (tmp_path / "memory" / "chronomem.db").exists()


@pytest.mark.parametrize("page", ["README.md", "docs/service.md"])
def test_the_examples_read_only_variables_the_setup_step_exports(page: str):
    """A variable an example needs (no default) is one its page's ``Run the server`` step exports: the
    Python example once read CHRONOMEM_URL/CHRONOMEM_API_KEY that no step set."""
    text = (ROOT / page).read_text(encoding="utf-8")
    setup = re.search(r"## Run the server\n+```bash\n(.*?)```", text, re.S)
    assert setup, page
    exported = set(re.findall(r"^export (\w+)=", setup.group(1), re.M))
    needed: set[str] = set()
    for kind in ("curl", "python"):
        block = re.search(rf"<!-- example: {kind} -->\n```\w+\n(.*?)```", text, re.S)
        assert block, (page, kind)
        code = block.group(1)
        assigned = set(re.findall(r"^(\w+)=", code, re.M))
        needed |= set(re.findall(r"os\.environ\[['\"](\w+)['\"]\]", code))
        needed |= {name for name in re.findall(r"\$\{?(\w+)(?![:\w])", code) if name not in assigned}
    assert needed and needed <= exported, (page, needed - exported)
