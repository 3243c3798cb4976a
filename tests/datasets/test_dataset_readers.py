"""Readers of the LoCoMo and LongMemEval formats, including their quirks."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

from chronomem.datasets.locomo import clean_evidence, load_locomo
from chronomem.datasets.longmemeval import load_longmemeval
from dataset_samples import LME, LOCOMO


def test_locomo_sessions_turns_captions_and_dates(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO))
    (sample,) = load_locomo(path)
    assert [t.dia_id for t in sample.turns] == ["D1:1", "D1:2", "D3:1"]
    assert sample.turns[1].caption == "a dog"
    assert sample.turns[0].date == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert sample.last_date == datetime(2023, 7, 2, 9, 15, tzinfo=UTC)
    assert [q.evidence for q in sample.questions] == [("D1:1",), ("D1:1", "D3:1"), ()]
    assert [q.answer for q in sample.questions] == ["Biscuit", "2023", "none"]


def test_evidence_quirks_are_cleaned():
    known = {"D8:6", "D9:17", "D9:1", "D4:4", "D4:6", "D11:26", "D30:5"}
    assert clean_evidence(["D8:6; D9:17"], known) == ("D8:6", "D9:17")
    assert clean_evidence(["D9:1 D4:4 D4:6"], known) == ("D9:1", "D4:4", "D4:6")
    assert clean_evidence(["D:11:26", "D30:05", "D99:1"], known) == ("D11:26", "D30:5")


def test_longmemeval_plain_and_gzipped(tmp_path):
    plain = tmp_path / "lme.json"
    plain.write_text(json.dumps(LME))
    zipped = tmp_path / "lme.json.gz"
    zipped.write_bytes(gzip.compress(json.dumps(LME).encode()))
    for path in (plain, zipped):
        first, second = load_longmemeval(path)
        assert first.question_date == datetime(2023, 5, 30, 23, 40, tzinfo=UTC)
        assert first.sessions[0].user_text == "My dog is Biscuit."
        assert first.sessions[0].turns[0].has_answer
        assert not first.is_abstention and second.is_abstention
