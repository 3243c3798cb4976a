"""Each benchmark's one mapping to episodes, and ``chronomem import`` building the very episodes the
evaluation harness measures."""

from __future__ import annotations

import asyncio
import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chronomem.cli import app
from chronomem.datasets.locomo import load_locomo, locomo_episodes
from chronomem.datasets.longmemeval import lme_episodes, load_longmemeval
from chronomem.domain import EpisodeKind
from chronomem.embed.testing import HashingEmbedder
from chronomem.eval.harness import run_eval
from chronomem.store.factory import open_store
from dataset_samples import LME, LOCOMO

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
# what an episode is: everything but the bookkeeping of its processing (usage, attempts, error)
FIELDS = {"id", "group_id", "kind", "content", "speaker", "role", "reference_time", "created_at",
          "source_description", "metadata", "status"}


def _write(path: Path, data: Any) -> Path:
    path.write_bytes(gzip.compress(json.dumps(data).encode()) if path.suffix == ".gz" else json.dumps(data).encode())
    return path


def test_locomo_turns_become_episodes_with_their_caption_order_and_the_turn_they_reply_to(tmp_path):
    (sample,) = load_locomo(_write(tmp_path / "locomo.json", LOCOMO))
    turns = locomo_episodes(sample)
    assert [e.id for e in turns] == ["locomo-s1:D1:1", "locomo-s1:D1:2", "locomo-s1:D3:1"]
    assert {e.group_id for e in turns} == {"locomo-s1"}
    assert [e.content for e in turns] == [
        "I adopted a puppy named Biscuit!", "Cute! [shares a photo of a dog]", "I ran a marathon in Berlin."]
    assert [(e.speaker, e.role) for e in turns] == [("Ann", "user"), ("Ben", "user"), ("Ben", "user")]
    assert {e.kind for e in turns} == {EpisodeKind.MESSAGE}
    may_8, july_2 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC), datetime(2023, 7, 2, 9, 15, tzinfo=UTC)
    # the second turn of a session one second after the first
    assert [e.reference_time for e in turns] == [may_8, may_8 + timedelta(seconds=1), july_2]
    assert [e.created_at for e in turns] == [e.reference_time for e in turns]
    assert [e.metadata for e in turns] == [
        {"unit": "D1:1", "session": 1, "reply_to": None},
        {"unit": "D1:2", "session": 1, "reply_to": "locomo-s1:D1:1"},
        {"unit": "D3:1", "session": 3, "reply_to": None},  # a new session replies to nothing
    ]
    assert locomo_episodes(sample, prefix="x-")[0].id == "x-s1:D1:1"

    with_documents = locomo_episodes(sample, session_documents=True)
    assert with_documents[:3] == turns  # the turns first, unchanged
    documents = with_documents[3:]
    assert [(d.id, d.kind) for d in documents] == [
        ("locomo-s1:session:1", EpisodeKind.TEXT), ("locomo-s1:session:3", EpisodeKind.TEXT)]
    assert [d.content for d in documents] == [
        "Ann: I adopted a puppy named Biscuit!\nBen: Cute! [shares a photo of a dog]",
        "Ben: I ran a marathon in Berlin.",
    ]
    assert [d.metadata for d in documents] == [{"session_document": True}] * 2  # no unit: the unit is a turn


def test_longmemeval_user_turns_become_episodes_long_ones_in_pieces(tmp_path):
    long_turn = " ".join(f"w{i}" for i in range(250))
    question = {
        **LME[0], "question_id": "q9", "haystack_session_ids": ["a"], "haystack_dates": ["2023/05/01 (Mon) 10:00"],
        "answer_session_ids": ["a"],
        "haystack_sessions": [[
            {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
            {"role": "user", "content": "  "}, {"role": "user", "content": long_turn},
        ]],
    }
    (parsed,) = load_longmemeval(_write(tmp_path / "lme.json.gz", [question]))
    episodes = lme_episodes(parsed)
    assert [e.id for e in episodes] == ["lme-q9:a:0:0", "lme-q9:a:3:0", "lme-q9:a:3:1", "lme-q9:a:3:2"]
    assert [len(e.content.split()) for e in episodes] == [1, 120, 120, 10]  # assistant and blank turns left out
    assert " ".join(e.content for e in episodes[1:]) == long_turn
    start = datetime(2023, 5, 1, 10, 0, tzinfo=UTC)
    assert [e.reference_time for e in episodes] == [start] + [start + timedelta(seconds=3)] * 3
    assert {(e.speaker, e.role, e.group_id) for e in episodes} == {("user", "user", "lme-q9")}
    assert all(e.metadata == {"unit": "a"} for e in episodes)

    (document,) = lme_episodes(parsed, session_documents=True)[4:]
    assert (document.id, document.kind) == ("lme-q9:session:a", EpisodeKind.TEXT)
    assert document.content == f"Hi\n  \n{long_turn}"  # the session's whole user text

    # an import for a memory a model reads brings the assistant's turns too, in their place
    with_assistant = lme_episodes(parsed, assistant_turns=True)
    assert [e.id for e in with_assistant] == ["lme-q9:a:0:0", "lme-q9:a:1:0", "lme-q9:a:3:0", "lme-q9:a:3:1",
                                              "lme-q9:a:3:2"]
    assert (with_assistant[1].speaker, with_assistant[1].role, with_assistant[1].content) == (
        "assistant", "assistant", "Hello")
    assert document.metadata == {"session_document": True, "unit": "a"}  # here the unit is the session


# -- chronomem import and the evaluation harness build the same episodes ---------------------------


def _stored_episodes(url: str) -> dict[str, list[dict[str, Any]]]:
    """Every group's episodes in a store, oldest first, as plain data."""

    async def read() -> dict[str, list[dict[str, Any]]]:
        store = await open_store(url)
        try:
            return {group: [e.model_dump(include=FIELDS) for e in await store.list_episodes(group, newest_first=False)]
                    for group in await store.list_groups()}
        finally:
            await store.close()

    return asyncio.run(read())


def _imported_and_evaluated(tmp_path: Path, locomo: Path, lme: Path) -> tuple[dict, dict]:
    """The episodes ``chronomem import`` stores (no model: stored unextracted) and those the harness
    stores and measures, each in a store of its own."""
    for path, fmt in ((locomo, "locomo"), (lme, "longmemeval")):
        result = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "cli"), "--embedder", "hashing",
                                          "import", str(path), "--format", fmt])
        assert result.exit_code == 0, result.output
    eval_url = f"sqlite:///{tmp_path / 'eval.db'}"
    asyncio.run(run_eval(locomo, lme, store_url=eval_url, embedder=HashingEmbedder(), cache_dir=tmp_path / "cache"))
    return _stored_episodes(f"sqlite:///{tmp_path / 'cli' / 'chronomem.db'}"), _stored_episodes(eval_url)


def _assert_same_episodes(imported: dict, evaluated: dict) -> None:
    assert evaluated and set(evaluated) <= set(imported)  # the harness skips abstention questions
    for group, episodes in evaluated.items():
        turns = [e for e in episodes if not e["metadata"].get("session_document")]
        assert turns, group
        # ids, text, times, reply_to, unit: all the same (the import also brings LongMemEval's
        # assistant turns, which the metric does not index)
        assert [e for e in imported[group] if e["role"] != "assistant"] == turns, group
        # the harness adds only the session documents it indexes beside the turns
        assert all(e["kind"] is EpisodeKind.TEXT for e in episodes if e not in turns)


def test_import_builds_the_episodes_the_harness_measures(tmp_path):
    locomo, lme = _write(tmp_path / "locomo.json", LOCOMO), _write(tmp_path / "lme.json", LME)
    imported, evaluated = _imported_and_evaluated(tmp_path, locomo, lme)
    _assert_same_episodes(imported, evaluated)
    assert set(imported) == {"locomo-s1", "lme-q1"} and len(imported["locomo-s1"]) == 3
    assert any(e["metadata"]["reply_to"] == "locomo-s1:D1:1" for e in imported["locomo-s1"])


def test_import_builds_the_episodes_the_harness_measures_on_slices_of_the_real_files(tmp_path):
    if not (DATA / "locomo10.json").exists() or not (DATA / "longmemeval_s_dev.json.gz").exists():
        pytest.skip("benchmark data not present")
    # LoCoMo: the first conversation's first two sessions (35 turns, 3 shared images) and their questions
    sample = json.loads((DATA / "locomo10.json").read_text())[0]
    conversation = {k: v for k, v in sample["conversation"].items()
                    if not k.startswith("session_") or k.split("_")[1] in ("1", "2")}
    kept = {t["dia_id"] for n in (1, 2) for t in conversation[f"session_{n}"]}
    qa = [q for q in sample["qa"] if q.get("evidence") and set(q["evidence"]) <= kept][:10]
    locomo = _write(tmp_path / "locomo.json", [{**sample, "conversation": conversation, "qa": qa}])
    # LongMemEval: the first answerable question, its evidence sessions and session 16 (user turns of 406
    # and 601 words: several pieces each)
    question = next(q for q in json.loads(gzip.decompress((DATA / "longmemeval_s_dev.json.gz").read_bytes()))
                    if not q["question_id"].endswith("_abs"))
    keep = [i for i, sid in enumerate(question["haystack_session_ids"])
            if i == 16 or sid in question["answer_session_ids"]]
    sliced = {**question, **{key: [question[key][i] for i in keep]
                             for key in ("haystack_session_ids", "haystack_dates", "haystack_sessions")}}
    lme = _write(tmp_path / "lme.json.gz", [sliced])

    imported, evaluated = _imported_and_evaluated(tmp_path, locomo, lme)
    _assert_same_episodes(imported, evaluated)
    locomo_turns = imported[f"locomo-{sample['sample_id']}"]
    assert len(locomo_turns) == len(kept)
    assert sum("[shares a photo of " in e["content"] for e in locomo_turns) == 3
    assert len(imported[f"lme-{question['question_id']}"]) > sum(
        t["role"] == "user" for s in sliced["haystack_sessions"] for t in s)  # long turns in pieces
