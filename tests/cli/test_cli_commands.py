"""The CLI drives the library end to end: add, add-fact, search, context, import, export, eval, demo."""

from __future__ import annotations

import base64
import gzip
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from chronomem.cli import app

runner = CliRunner()


def decode(text: str) -> list[float]:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").tolist()


@pytest.fixture
def cli(tmp_path):
    def invoke(*args: str):
        return runner.invoke(app, ["--data-dir", str(tmp_path), "--embedder", "hashing", *args])

    return invoke


def test_add_a_fact_then_search_and_get_context(cli):
    assert cli("add", "g", "I moved to Lisbon last May.", "--speaker", "Alice").exit_code == 0
    added = cli("add-fact", "g", "Alice", "lives in", "Lisbon", "Alice lives in Lisbon",
                "--valid-at", "2024-05-01T00:00:00Z")
    assert added.exit_code == 0, added.output
    found = cli("search", "g", "where does Alice live", "--json")
    facts = json.loads(found.stdout)["facts"]
    assert [f["fact"] for f in facts] == ["Alice lives in Lisbon"] and facts[0]["relation_type"] == "LIVES_IN"
    before = cli("search", "g", "where does Alice live", "--json", "--as-of", "2024-01-01T00:00:00Z")
    assert json.loads(before.stdout)["facts"] == []
    context = cli("context", "g", "where does Alice live")
    assert "Alice lives in Lisbon (Date range: 2024-05-01" in context.stdout


def test_context_prints_the_block_verbatim_not_wrapped_to_the_terminal(cli):
    long_fact = "Alice works at the bakery by the river" + " and also at the market on Saturdays" * 4
    assert len(long_fact) > 120
    assert cli("add-fact", "g", "Alice", "WORKS_AT", "Bakery", long_fact).exit_code == 0
    context = cli("context", "g", "where does Alice work")
    assert context.exit_code == 0 and f"{long_fact} (Date range:" in context.stdout


def test_search_and_context_on_unextracted_episodes_fall_back_to_them_and_say_why(cli):
    assert cli("add", "g", "I moved to Lisbon last May.", "--speaker", "Alice").exit_code == 0  # no model
    found = cli("search", "g", "Lisbon", "--json")
    assert [e["content"] for e in json.loads(found.stdout)["episodes"]] == ["I moved to Lisbon last May."]
    assert "1 episode(s) of 'g' are not extracted yet" in found.stderr
    context = cli("context", "g", "where does Alice live")
    assert "I moved to Lisbon last May." in context.stdout and "not extracted yet" in context.stderr
    empty = cli("search", "nobody", "Lisbon")
    assert empty.exit_code == 0 and "holds no episodes" in empty.stderr


def test_add_prints_the_entities_and_facts_it_extracted(cli):
    added = cli("add", "g", "I started a new job at Globex two weeks ago, and I moved to Porto with Ana.",
                "--speaker", "Maya", "--at", "2024-05-02T18:30:00Z", "--model", "heuristic")
    assert added.exit_code == 0, added.output
    lines = added.stdout.splitlines()
    assert lines[0].startswith("episode ") and ": done (" in lines[0]
    stored = json.loads(cli("export", "g").stdout)
    assert stored["entities"] and stored["facts"]
    created = next(line for line in lines if line.startswith("entities created: ")).removeprefix("entities created: ")
    assert sorted(created.split(", ")) == sorted(e["name"] for e in stored["entities"])
    assert "Maya" in created.split(", ")  # the speaker is always an entity
    printed_facts = lines[lines.index("facts created:") + 1:]
    for fact in stored["facts"]:
        assert any(line.startswith(f"  {fact['relation_type']}: {fact['fact']} (") for line in printed_facts), fact


def test_add_without_a_model_says_the_episode_awaits_extraction(cli):
    added = cli("add", "g", "I moved to Lisbon last May.", "--speaker", "Alice")
    assert added.exit_code == 0 and ": unextracted (0 model calls)" in added.stdout
    assert "CHRONOMEM_LLM_MODEL" in added.stdout and "entities created" not in added.stdout
    again = cli("add", "g", "hi", "--model", "gpt-4")
    assert again.exit_code == 2 and "only 'heuristic'" in again.output


def test_bad_input_is_a_clean_error_not_a_traceback(cli):
    naive = cli("add-fact", "g", "A", "KNOWS", "B", "A knows B", "--valid-at", "2024-05-01T00:00:00")
    assert naive.exit_code == 2 and "timezone" in naive.output
    assert "2024-05-01T00:00:00Z" in naive.output and "assume_utc" not in naive.output  # for people, not code
    far = cli("search", "g", "x", "--as-of", "9999-12-31T23:59:59-14:00")
    assert far.exit_code == 2 and "supported range" in far.output
    recipe = cli("search", "g", "x", "--recipe", "nope")
    assert recipe.exit_code == 1 and "unknown search recipe" in recipe.stderr


def test_export_then_import_into_another_group_round_trips(cli, tmp_path):
    cli("add", "g", "Bob: I adopted a dog.", "--kind", "text")
    cli("add-fact", "g", "Bob", "OWNS", "Rex", "Bob owns a dog named Rex")
    first = tmp_path / "g.json"
    assert cli("export", "g", "-o", str(first)).exit_code == 0
    imported = cli("import", str(first), "--format", "export", "--group", "copy")
    assert imported.exit_code == 0 and "1 episodes, 2 entities, 1 facts" in imported.stdout
    second = json.loads(cli("export", "copy").stdout)
    original = json.loads(first.read_text())
    assert second["facts"][0] | {"group_id": "g"} == original["facts"][0]
    for scope, vectors in original["vectors"].items():  # equal up to float32 rounding: the store
        assert set(second["vectors"][scope]) == set(vectors)  # re-normalizes every vector it writes
        for object_id, encoded in vectors.items():
            assert decode(second["vectors"][scope][object_id]) == pytest.approx(decode(encoded), abs=1e-6)
    again = cli("import", str(first), "--format", "export", "--group", "copy")
    assert again.exit_code == 1 and "not empty" in again.stderr
    future = tmp_path / "future.json"
    future.write_text(json.dumps(original | {"format": "chronomem.group/9"}))
    unknown = cli("import", str(future), "--format", "export", "--group", "later")
    assert unknown.exit_code == 1 and "unsupported export format 'chronomem.group/9'" in unknown.stderr
    assert "Traceback" not in unknown.output


def test_import_jsonl_messages_and_report_a_bad_line(cli, tmp_path):
    good = tmp_path / "messages.jsonl"
    good.write_text('{"content": "hi", "name": "Ann"}\n\n'
                    '{"content": "I like tea", "created_at": "2024-01-01T10:00:00Z"}\n')
    result = cli("import", str(good), "--group", "chat")
    assert result.exit_code == 0 and "ingested 2 new episodes into 1 group(s); 0 were already there" in result.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "ok"}\n{"text": "no content"}\n')
    failed = cli("import", str(bad), "--group", "chat")
    assert failed.exit_code == 1 and "line 2" in failed.stderr
    naive = tmp_path / "naive.jsonl"
    naive.write_text('{"content": "ok", "created_at": "2024-01-01T10:00:00"}\n')
    refused = cli("import", str(naive), "--group", "chat")
    assert refused.exit_code == 1 and "line 1" in refused.stderr and "2024-01-01T10:00:00Z" in refused.stderr


def test_importing_jsonl_without_ids_twice_adds_nothing_the_second_time_and_says_so(cli, tmp_path):
    """Lines without ``uuid`` get ids from their group, position and content: a re-import is a no-op,
    a line appended later is added, and a message repeated on another line is another message."""
    path = tmp_path / "messages.jsonl"
    path.write_text('{"content": "ok"}\n{"content": "I like tea"}\n{"content": "ok"}\n')
    first = cli("import", str(path), "--group", "chat")
    assert "ingested 3 new episodes into 1 group(s); 0 were already there" in first.stdout
    again = cli("import", str(path), "--group", "chat")
    assert again.exit_code == 0 and "ingested 0 new episodes into 1 group(s); 3 were already there" in again.stdout
    path.write_text(path.read_text() + '{"content": "and coffee"}\n')
    grown = cli("import", str(path), "--group", "chat", "--queue")
    assert "queued 1 new episodes into 1 group(s); 3 were already there" in grown.stdout
    assert "│ 4 " in cli("groups").stdout


@pytest.fixture
def tiny_locomo(tmp_path):
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I got a new job at Acme."},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "Congrats!", "blip_caption": "a cake"}],
        },
        "qa": [{"question": "Where does Ann work?", "answer": "Acme", "evidence": ["D1:1"], "category": 4}],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))
    return path


def test_import_locomo_is_idempotent_and_keeps_dates(cli, tiny_locomo):
    assert cli("import", str(tiny_locomo), "--format", "locomo", "--group", "lc-").exit_code == 0
    again = cli("import", str(tiny_locomo), "--format", "locomo", "--group", "lc-")
    assert again.exit_code == 0 and "0 new episodes" in again.stdout and "2 were already there" in again.stdout
    found = json.loads(cli("search", "lc-conv-x", "cake", "--recipe", "episodes_only", "--json").stdout)
    assert found["episodes"][0]["content"] == "Congrats! [shares a photo of a cake]"
    assert found["episodes"][0]["reference_time"].startswith("2023-05-08T13:56")
    groups = cli("groups")
    assert "lc-conv-x" in groups.stdout and "│ 2 " in groups.stdout


def test_import_longmemeval_queues_every_turn_one_group_per_question(cli, tmp_path):
    question = {
        "question_id": "q1", "question_type": "single-session-user", "question": "What tea?", "answer": "green",
        "question_date": "2023/05/30 (Tue) 23:40", "haystack_session_ids": ["s1"],
        "haystack_dates": ["2023/05/20 (Sat) 10:00"],
        "haystack_sessions": [[{"role": "user", "content": "I drink green tea"},
                               {"role": "assistant", "content": "Nice"}]],
        "answer_session_ids": ["s1"],
    }
    path = tmp_path / "lme.json.gz"
    path.write_bytes(gzip.compress(json.dumps([question]).encode()))
    result = cli("import", str(path), "--format", "longmemeval", "--queue")
    assert result.exit_code == 0 and "queued 2 new episodes into 1 group(s)" in result.stdout  # both turns
    assert "lme-q1" in cli("groups").stdout  # the group the evaluation harness uses


def test_eval_prints_name_value_lines(cli, tiny_locomo):
    result = cli("eval", "--locomo", str(tiny_locomo))
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if ": " in line]
    assert any(line.startswith("locomo_recall_at_10") for line in lines)


def test_demo_runs(cli):
    result = cli("demo")
    assert result.exit_code == 0, result.output
    assert "Maya" in result.stdout


def test_a_sharded_worker_is_refused_on_the_embedded_store(cli):
    result = cli("worker", "--shard", "1/2")
    assert result.exit_code == 2 and "one worker process" in result.output


def test_several_server_processes_with_in_process_workers_are_refused_on_the_embedded_store(cli):
    result = cli("serve", "--processes", "2")
    assert result.exit_code == 2 and "--no-workers" in result.output


def test_worker_takes_its_own_store_url_over_the_global_one(tmp_path):
    sqlite = f"sqlite:///{tmp_path / 'x.db'}"
    result = runner.invoke(app, ["--store", "falkordb://127.0.0.1:1", "worker", "--shard", "1/2", "--store", sqlite])
    assert result.exit_code == 2 and "one worker process" in result.output  # refused as SQLite, not FalkorDB


def test_eval_refuses_more_folds_than_conversations_with_a_clean_message(cli, tiny_locomo):
    result = cli("eval", "--locomo", str(tiny_locomo), "--folds", "2")
    assert result.exit_code == 1
    assert "between 2 and the number of LoCoMo conversations (1)" in result.output
