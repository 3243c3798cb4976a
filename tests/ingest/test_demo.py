"""The demo runs offline: without a model (JSON mapped, conversation unextracted) and with the heuristic stand-in."""

from __future__ import annotations

import io

from rich.console import Console

from chronomem.cli.demo import run_demo
from chronomem.heuristic import heuristic_model


def recording() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=200, force_terminal=False), buffer


async def test_demo_without_a_model_answers_from_the_json_records_and_says_how_to_configure_one(tmp_path):
    console, out = recording()
    await run_demo(f"sqlite:///{tmp_path}/demo.db", None, console)
    text = out.getvalue()
    assert "'unextracted': 9" in text and "'done': 6" in text and "0 model calls" in text
    assert "configure a model" in text
    current, _, earlier = text.partition("True on 2024-04-01")
    assert "Initech's account manager is Farah Ali" in current
    assert "Initech's account manager is Dana Cruz │ 2024-01-10 │ 2024-06-01" in earlier.split("True on")[0]


async def test_demo_with_the_heuristic_stand_in_builds_the_conversation_graph(tmp_path):
    console, out = recording()
    model = heuristic_model()
    await run_demo(f"sqlite:///{tmp_path}/demo.db", model, console)
    text = out.getvalue()
    assert "{'done': 15}" in text and "configure a model" not in text
    assert "Maya works at Globex" in text
    # the conversation's 9 episodes, each at most three calls (entities, facts, the facts it ends); the
    # JSON records cost nothing
    assert model.usage.calls <= 3 * 9


async def test_demo_run_again_with_a_model_extracts_what_the_first_run_left_unextracted(tmp_path):
    url = f"sqlite:///{tmp_path}/demo.db"
    await run_demo(url, None, recording()[0])
    console, out = recording()
    await run_demo(url, heuristic_model(), console)
    assert "Maya works at Globex" in out.getvalue()
