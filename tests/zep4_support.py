"""Running code in .venv-zep4, the venv of Zep's v4 SDK and integrations (``make zep4``): the 4.x
SDK cannot share chronomem's venv with the 3.x one the /api/v2 tests use."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from service_support import ROOT

ZEP4_PYTHON = ROOT / ".venv-zep4" / "bin" / "python"
SCRIPTS = Path(__file__).parent / "service" / "zep4"


def zep4_python() -> Path:
    """The venv's interpreter; without it the tests skip, or fail under ``make test``
    (``CHRONOMEM_REAL_MODEL_TESTS=1``), which builds it."""
    if not ZEP4_PYTHON.exists():
        message = "run `make zep4` to build .venv-zep4 (Zep's v4 SDK and integrations, from a hashed lock)"
        if os.environ.get("CHRONOMEM_REAL_MODEL_TESTS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return ZEP4_PYTHON


def run_script(name: str, *args: str, timeout: float = 120) -> dict[str, Any]:
    """Run ``tests/service/zep4/<name>`` in .venv-zep4 and return the JSON it prints."""
    done = subprocess.run([str(zep4_python()), str(SCRIPTS / name), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, check=False)
    assert done.returncode == 0, f"{name} failed:\n{done.stderr[-6000:]}"
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
