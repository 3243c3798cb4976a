"""Real extraction by a real instruction model: the packaged Qwen2.5-Coder-1.5B-Instruct on llama.cpp.

Each test ingests a few short episodes through the whole pipeline, as ``CHRONOMEM_LLM_MODEL=local``
does, at temperature 0 with a fixed seed, and asserts what a model of that size reliably gets:
who and what the graph holds and which pairs a fact joins, never the wording. What the mechanisms
around the model guarantee whatever it answers (the speaker is an entity, facts are in the third
person, the instructions come from the server's prompt cache) is asserted exactly.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from chronomem import Chronomem, Settings
from chronomem.domain import EpisodeStatus
from chronomem.llm.accounting import usage_scope
from chronomem.llm.local_model import LocalChatModel
from chronomem.llm.settings import LLMSettings
from chronomem.text.names import name_key

pytestmark = pytest.mark.integration

FIRST_PERSON = re.compile(r"\b(I|me|my|mine)\b", re.IGNORECASE)


def _model(real_server) -> LocalChatModel:
    settings = LLMSettings(model="local:qwen2.5-coder-1.5b", timeout_s=300)
    return LocalChatModel(real_server.server, "qwen2.5-coder-1.5b", timeout_s=settings.timeout_for("local"),
                          temperature=0.0, extra_body={"seed": 0})


async def _ingest(real_server, tmp_path, *messages: tuple[str, str]):
    llm = _model(real_server)
    memory = await Chronomem.open(Settings(data_dir=tmp_path, embedder="hashing"), llm=llm)
    results = []
    with usage_scope() as usage:
        for day, text in messages:
            results.append(await memory.add_episode(
                "maya", text, speaker="Maya Patel", role="user",
                reference_time=datetime.fromisoformat(day).replace(hour=10, tzinfo=UTC),
            ))
    return memory, llm, results, usage


async def _graph(memory: Chronomem) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    names = {e.id: e.name for e in await memory.list_entities("maya")}
    facts = [(names[f.source_id], names[f.target_id], f.fact) for f in await memory.list_facts("maya")]
    return names, facts


def _joins(facts: list[tuple[str, str, str]], a: str, b: str) -> bool:
    pair = {name_key(a), name_key(b)}
    return any({name_key(s), name_key(t)} == pair for s, t, _ in facts)


async def test_a_job_is_a_fact_between_the_speaker_and_the_company_in_the_third_person(real_server, tmp_path):
    memory, llm, (result,), usage = await _ingest(
        real_server, tmp_path, ("2024-03-06", "I started a new job at Globex as a data engineer."))
    try:
        assert result.episode.status is EpisodeStatus.DONE
        names, facts = await _graph(memory)
        assert {"Maya Patel", "Globex"} <= set(names.values())
        assert _joins(facts, "Maya Patel", "Globex"), facts
        for source, target, text in facts:
            assert not FIRST_PERSON.search(text), text
            if "Maya Patel" in (source, target):
                assert "Maya Patel" in text, text
        print(f"real_extraction_calls: {usage.calls}, facts: {facts}")
    finally:
        await memory.close()
        await llm.aclose()


async def test_the_second_episode_reads_its_instructions_from_the_prompt_cache(real_server, tmp_path):
    memory, llm, results, usage = await _ingest(
        real_server, tmp_path,
        ("2024-03-06", "My sister Ana lives in Lisbon."),
        ("2024-03-07", "I adopted a dog named Bolt."),
    )
    try:
        assert [r.episode.status for r in results] == [EpisodeStatus.DONE] * 2
        second = results[1].usage
        # the same prompts again: all but the episode's own data was evaluated before
        assert second.cached_input_tokens >= 0.6 * second.input_tokens, second.as_dict()
        names, facts = await _graph(memory)
        assert {"Maya Patel", "Ana", "Lisbon", "Bolt"} <= set(names.values()), names
        assert _joins(facts, "Ana", "Maya Patel") or _joins(facts, "Ana", "Lisbon"), facts
        assert _joins(facts, "Maya Patel", "Bolt"), facts
        assert not _joins(facts, "Ana", "Bolt"), facts  # nothing said joins them
        print(f"real_extraction_cached_share: {usage.cached_input_tokens / usage.input_tokens:.2f}")
    finally:
        await memory.close()
        await llm.aclose()


async def test_a_move_asks_the_real_model_what_it_ended(real_server, tmp_path):
    # "moved from Lisbon to Porto" is no word of chronomem.ingest.endings' rules: the old home closes
    # by the model's judgement (stage 6b's question, or resolution's)
    memory, llm, results, _usage = await _ingest(
        real_server, tmp_path,
        ("2024-03-06", "My sister Ana lives in Lisbon."),
        ("2024-10-02", "Ana moved from Lisbon to Porto last month."),
    )
    try:
        assert [r.episode.status for r in results] == [EpisodeStatus.DONE] * 2
        names = {e.id: e.name for e in await memory.list_entities("maya")}
        facts = await memory.list_facts("maya")

        def between(a: str, b: str) -> list[Any]:
            pair = {name_key(a), name_key(b)}
            return [f for f in facts if {name_key(names[f.source_id]), name_key(names[f.target_id])} == pair]

        lisbon, porto = between("Ana", "Lisbon"), between("Ana", "Porto")
        assert lisbon and porto, [f.fact for f in facts]
        # the question is asked of the real model and its answer applied; whether the 1.5B ends the old
        # home is not asserted: it did in the runs of 2026-12-07 morning and did not in four runs that
        # evening at the same commit (its answer shifts with the prompt cache's state), and a test
        # asserts only what a model of that size gets every time (the closing: tests/ingest)
        assert "review_endings" in results[1].usage.by_prompt
        assert all(f.invalid_at is None or f.invalid_at >= (f.valid_at or f.invalid_at) for f in lisbon)
        assert any(f.invalid_at is None and f.expired_at is None for f in porto), [f.fact for f in porto]
        print(f"real_extraction_ended: {[f.fact for f in results[1].facts_invalidated]}, "
              f"calls: {results[1].usage.by_prompt}")
    finally:
        await memory.close()
        await llm.aclose()


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"  # exited, not yet reaped
    except FileNotFoundError:
        return True


def test_the_managed_server_ends_with_the_process_that_started_it(llamacpp_server, tmp_path) -> None:
    # a parent killed by a signal runs no atexit: the server must still not outlive it (nor can the
    # parent remove its log, so the log goes where pytest cleans up)
    code = (
        "import time\n"
        "from pathlib import Path\n"
        "from chronomem.llm.local_model import LocalServer, ServerOptions\n"
        f"server = LocalServer({str(llamacpp_server.model_path)!r}, ServerOptions(threads=1),\n"
        f"                     log_path=Path({str(tmp_path / 'server.log')!r})).start()\n"
        "print(server.process.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        server = int(parent.stdout.readline())
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()
    deadline = time.monotonic() + 30
    while not _gone(server):
        assert time.monotonic() < deadline, "the server outlived the process that started it"
        time.sleep(0.2)
