"""The curl and Python examples of docs/service.md run against a real `chronomem serve`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import processes
from service_support import ROOT, free_port

DOC = ROOT / "docs" / "service.md"


def example(kind: str) -> str:
    match = re.search(rf"<!-- example: {kind} -->\n```\w+\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert match, f"no {kind} example in {DOC}"
    return match.group(1)


def cli(data_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "chronomem.cli", "--data-dir", str(data_dir), "--embedder", "hashing", *args]


@pytest.fixture
def served(tmp_path):
    key = subprocess.run(cli(tmp_path, "keys", "create", "--project", "docs"), capture_output=True, text=True,
                         check=True).stdout.strip()
    port = free_port()
    with open(tmp_path / "serve.log", "wb") as log:
        server = processes.start(cli(tmp_path, "serve", "--port", str(port)), stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    with processes.stopping(server, grace=20):  # however the wait, the test or the session ends
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, (tmp_path / "serve.log").read_text()
                time.sleep(0.1)
        yield base, key


@pytest.mark.integration
def test_the_curl_example_runs(served):
    base, key = served
    env = {**os.environ, "BASE": base, "KEY": key}
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", example("curl")], env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Alice works at Acme (Date range: 2024-05-01" in result.stdout


@pytest.mark.integration
def test_the_python_example_runs(served):
    base, key = served
    env = {**os.environ, "BASE": base, "KEY": key}
    result = subprocess.run([sys.executable, "-c", example("python")], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Ada lives in Lisbon (Date range: 2024-05-01" in result.stdout


@pytest.mark.integration
def test_the_zep_sdk_example_runs(served):
    base, key = served
    env = {**os.environ, "CHRONOMEM_URL": base, "CHRONOMEM_API_KEY": key}
    result = subprocess.run([sys.executable, "-c", example("zep")], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Grace lives in Oslo\n")
    assert "Grace lives in Oslo (Date range: 2024-03-01" in result.stdout
