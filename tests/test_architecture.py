"""The package graph keeps its layers: import-linter's contracts in pyproject.toml hold.

``make lint`` and ``make test`` run ``lint-imports`` too; here a broken layer fails the suite with the
import that breaks it, wherever the suite is run.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def test_the_layer_contracts_are_kept():
    run = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def test_every_top_level_package_has_a_layer():
    """A new top-level module or package must be placed in a layer, or no contract would cover it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    [layers] = [c["layers"] for c in config["contracts"] if c["id"] == "layers"]
    placed = {name.strip().removeprefix("chronomem.") for layer in layers for name in layer.split("|")}
    package = ROOT / "src" / "chronomem"
    tops = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    tops |= {p.name for p in package.iterdir() if (p / "__init__.py").exists()}
    assert sorted(tops - placed) == []
