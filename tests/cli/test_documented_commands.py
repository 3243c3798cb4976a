"""Every ``chronomem`` command the README and the docs show names a real command with real options
(``chronomem mcp --http`` once stood in the README; the option is ``--transport http``)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer

from chronomem.cli import app

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCKS = {"", "bash", "sh", "console", "text"}
INLINE = re.compile(r"`(chronomem [^`]+)`")
COMMAND = re.compile(r"(?:^|[\s(])(chronomem [^#&|);\n]*)")


def code_blocks(text: str) -> list[str]:
    """The shell (and plain) fenced blocks of a Markdown page, fences paired line by line."""
    blocks, current, language = [], [], None
    for line in text.splitlines():
        if line.startswith("```"):
            if language is None:
                language, current = line[3:].strip(), []
            else:
                if language in SHELL_BLOCKS:
                    blocks.append("\n".join(current))
                language = None
        elif language is not None:
            current.append(line)
    return blocks


def shown_commands(text: str) -> list[str]:
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    commands = [m.group(1) for m in INLINE.finditer(prose)]
    for block in code_blocks(text):
        commands += [m.group(1) for m in COMMAND.finditer(block)]
    return [" ".join(c.replace("[", " ").replace("]", " ").split()) for c in commands]


def _option(command: Any, token: str) -> Any:
    """The option ``token`` names (typer may bring its own copy of click: no isinstance here)."""
    name = token.split("=", 1)[0]
    for param in command.params:
        if getattr(param, "param_type_name", "") == "option" and name in (*param.opts, *param.secondary_opts):
            return param
    return None


def check(line: str) -> list[str]:
    """What is wrong with one shown command line (empty: nothing)."""
    command: Any = typer.main.get_command(app)
    tokens = shlex.split(line.replace("…", ""))[1:]
    problems = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token.startswith("-") and token != "-":
            option = _option(command, token)
            if option is None:
                problems.append(f"{line!r}: {command.name} has no option {token}")
            elif not option.is_flag and "=" not in token:
                index += 1  # its value
        elif hasattr(command, "commands"):  # a group: the token names a sub-command
            sub = command.commands.get(token)
            if sub is None:
                problems.append(f"{line!r}: no command {token!r}")
                break
            command = sub
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_a_page_shows_exists_with_its_options(page: Path):
    shown = shown_commands(page.read_text(encoding="utf-8"))
    assert [problem for line in shown for problem in check(line)] == []


def test_the_check_catches_what_it_is_for():
    assert check("chronomem mcp --http") == ["'chronomem mcp --http': mcp has no option --http"]
    assert check("chronomem mcp --transport http") == []
    assert check("chronomem --data-dir d keys create --project demo") == []
    assert check("chronomem keys make") == ["'chronomem keys make': no command 'make'"]
    assert sum(len(shown_commands(p.read_text(encoding="utf-8"))) for p in PAGES) > 40
