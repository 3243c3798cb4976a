"""Loaders of the LoCoMo and LongMemEval formats, including their quirks."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

from chronomem.eval.locomo import clean_evidence, load_locomo
from chronomem.eval.longmemeval import load_longmemeval

LOCOMO = [
    {
        "sample_id": "s1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Biscuit!"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Cute!", "img_url": ["x"], "blip_caption": "a dog"},
            ],
            "session_2_date_time": "10:00 am on 1 June, 2023",  # a date with no session: ignored
            "session_3_date_time": "9:15 am on 2 July, 2023",
            "session_3": [{"speaker": "Ben", "dia_id": "D3:1", "text": "I ran a marathon in Berlin."}],
        },
        "qa": [
            {"question": "What is the puppy's name?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
            {"question": "Where?", "answer": 2023, "evidence": ["D1:1; D3:1", "D9:9"], "category": 1},
            {"question": "Trick?", "adversarial_answer": "none", "evidence": [], "category": 5},
        ],
    }
]

LME = [
    {
        "question_id": "q1", "question_type": "single-session-user", "question": "What is my dog's name?",
        "answer": "Biscuit", "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["a", "b"], "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/05/02 (Tue) 11:00"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "My dog is Biscuit.", "has_answer": True},
                {"role": "assistant", "content": "Nice"},
            ],
            [{"role": "user", "content": "Any pasta recipe?"}],
        ],
        "answer_session_ids": ["a"],
    },
    {
        "question_id": "q2_abs", "question_type": "temporal-reasoning", "question": "?", "answer": "n/a",
        "question_date": "2023/05/30 (Tue) 23:40", "haystack_session_ids": [], "haystack_dates": [],
        "haystack_sessions": [], "answer_session_ids": [],
    },
]


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
