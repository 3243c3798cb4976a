"""How long the first request after ``/readyz`` waits (issue 17: ~4.5 s for the embedding model).

Starts ``chronomem serve`` on a fresh data directory with the default local embedder (the packaged
MiniLM model, offline), waits until ``/readyz`` answers 200, then times the first and the second
context request of a new user. Prints ``name: value`` lines.

    python bench/first_request.py
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time

import httpx


def main() -> None:
    data_dir = tempfile.mkdtemp(prefix="chronomem-first-request-")
    env = {**os.environ, "CHRONOMEM_DATA_DIR": data_dir, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    cli = [sys.executable, "-m", "chronomem.cli"]
    key = subprocess.run([*cli, "keys", "create", "--project", "bench"], env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([*cli, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    base, headers = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {key}"}
    try:
        started = time.monotonic()
        while True:
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        ready = time.monotonic() - started
        httpx.post(f"{base}/api/v3/users", json={"user_id": "u"}, headers=headers).raise_for_status()
        timings = []
        for query in ("where does she live", "who is she"):
            sent = time.monotonic()
            httpx.get(f"{base}/api/v3/users/u/context", params={"query": query}, headers=headers,
                      timeout=120).raise_for_status()
            timings.append(time.monotonic() - sent)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"ready_after_s: {ready:.2f}")
    print(f"first_context_s: {timings[0]:.3f}")
    print(f"second_context_s: {timings[1]:.3f}")


if __name__ == "__main__":
    main()
