"""Helpers of the explorer's browser tests: a real ``chronomem serve`` (or ``ui``) over a seeded
memory, and the system chromium's path and flags."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from explorer_seed import EMBEDDER, Seeded

import processes
from service_support import ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SCREENSHOTS = ROOT / "bench" / "out"


class Server:
    def __init__(self, base: str, seeded: Seeded, data_dir: Path) -> None:
        self.base = base
        self.seeded = seeded
        self.data_dir = data_dir

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers={"Authorization": f"Bearer {self.seeded.key}"}, timeout=10)


def seed_in_process(data_dir: Path) -> Seeded:
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("explorer_seed.py")), str(data_dir)],
                          env=env(), capture_output=True, text=True, timeout=120, check=True)
    return Seeded(**json.loads(done.stdout.strip().splitlines()[-1]))


def env() -> dict[str, str]:
    tests = Path(__file__).resolve().parents[1]
    path = os.pathsep.join([str(ROOT / "src"), str(tests)])
    return {**os.environ, "CHRONOMEM_EMBEDDER": EMBEDDER, "PYTHONPATH": path}


def chronomem(data_dir: Path, *args: str) -> list[str]:
    """The command line of ``chronomem --data-dir DATA_DIR ARGS...``."""
    return [sys.executable, "-m", "chronomem.cli", "--data-dir", str(data_dir), *args]


def start_server(data_dir: Path, port: int, command: str = "serve", *extra: str) -> subprocess.Popen[bytes]:
    """``chronomem serve`` (or ``ui``) on loopback over ``data_dir``, with the embedder the seed used;
    the caller stops it (``processes.stopping``)."""
    with open(data_dir / "server.log", "ab") as log:  # the child keeps its own copy of the descriptor
        process = processes.start(chronomem(data_dir, command, "--port", str(port), *extra),
                                  env=env(), stdout=log, stderr=subprocess.STDOUT)
    with processes.stopped_on_error(process):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"chronomem {command} exited: {(data_dir / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    return process
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"chronomem {command} did not become ready in 60 s")
