"""Hand-made LoCoMo and LongMemEval files (as parsed JSON) with their quirks and known answers,
shared by the dataset, evaluation and import tests."""

from __future__ import annotations

__all__ = ["LME", "LOCOMO"]

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
