"""The fake provider as its own process (what bench/llm.py runs)."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

import processes


def test_fake_provider_process_serves_and_reports_its_request_counts():
    command = [sys.executable, "-m", "chronomem.llm.fakeserver", "--answer", '{"ok": true}', "--rate-limited", "0.5"]
    process = processes.start(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    with processes.stopping(process):  # however the test ends
        port = int(process.stdout.readline())
        statuses = []
        with httpx.Client() as client:
            for _ in range(10):
                response = client.post(
                    f"http://127.0.0.1:{port}/v1/chat/completions", json={"model": "m", "messages": []}
                )
                statuses.append(response.status_code)
                if response.status_code == 200:
                    assert json.loads(response.json()["choices"][0]["message"]["content"]) == {"ok": True}
        process.stdin.close()  # end of input: the fake provider prints its counts and exits
        summary = json.loads(process.stdout.readline())
        process.wait(timeout=10)
    assert summary == {"requests": 10, "rate_limited": statuses.count(429)}
    assert set(statuses) == {200, 429}
