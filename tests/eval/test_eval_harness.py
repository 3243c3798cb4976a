"""The evaluation harness end to end: hand-made files with known answers, and a slice of the real ones."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import InvalidInputError
from chronomem.eval.harness import run_eval
from dataset_samples import LME, LOCOMO

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


async def test_known_answers_give_full_recall_for_both_retrievers(tmp_path):
    locomo, lme = tmp_path / "locomo.json", tmp_path / "lme.json"
    locomo.write_text(json.dumps(LOCOMO))
    lme.write_text(json.dumps(LME))
    report = await run_eval(locomo, lme, embedder=HashingEmbedder(), cache_dir=tmp_path / "cache")
    m = report.metrics
    assert m["locomo_questions"] == 2  # category 5 is not in the usual set
    assert m["locomo_recall_at_5"] == 100.0 and m["locomo_recall_at_5_bm25"] == 100.0
    assert m["locomo_recall_at_10_single_hop"] == 100.0
    assert m["lme_questions"] == 1  # the _abs question is skipped
    assert m["lme_recall_all_at_5"] == 1.0 and m["lme_recall_all_at_5_bm25"] == 1.0
    assert m["lme_ndcg_any_at_10"] == 1.0
    lines = list(report.lines())
    assert "locomo_questions: 2" in lines
    assert any(line.startswith("lme_recall_all_at_10: ") for line in lines)


async def test_vectors_are_cached_on_disk(tmp_path):
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps(LOCOMO))
    first = HashingEmbedder()
    await run_eval(locomo, embedder=first, cache_dir=tmp_path / "cache")
    second = HashingEmbedder()
    await run_eval(locomo, embedder=second, cache_dir=tmp_path / "cache")
    assert first.texts_embedded > 0 and second.texts_embedded == 0


@pytest.mark.integration
async def test_a_slice_of_the_real_files_with_the_local_model(tmp_path):
    if not (DATA / "locomo10.json").exists():
        pytest.skip("benchmark data not present")
    from chronomem.embed.local import LocalEmbedder

    report = await run_eval(
        DATA / "locomo10.json", DATA / "longmemeval_s_dev.json.gz", limit=2,
        embedder=LocalEmbedder(), cache_dir=tmp_path / "cache",
    )
    m = report.metrics
    assert m["locomo_questions"] > 200  # two conversations, categories 1–4
    assert m["lme_questions"] == 1  # the first of the two is an abstention question: skipped
    for suffix in ("", "_bm25"):
        recalls = [m[f"locomo_recall_at_{k}{suffix}"] for k in (5, 10, 25, 50)]
        assert recalls == sorted(recalls) and recalls[0] >= 0 and recalls[-1] <= 100
        assert m[f"lme_recall_all_at_5{suffix}"] <= m[f"lme_recall_any_at_5{suffix}"]
    assert m["locomo_recall_at_10"] > 40  # far above chance (10 of ~400 turns)


def _two_of_each(tmp_path):
    """Two conversations and two answerable questions: the fewest that two folds need."""
    second_sample = {**copy.deepcopy(LOCOMO[0]), "sample_id": "s2"}
    second_question = {**copy.deepcopy(LME[0]), "question_id": "q3", "question_type": "multi-session"}
    locomo, lme = tmp_path / "locomo.json", tmp_path / "lme.json"
    locomo.write_text(json.dumps([*LOCOMO, second_sample]))
    lme.write_text(json.dumps([*LME, second_question]))
    return locomo, lme


async def test_folds_report_out_of_fold_and_in_sample_twins_with_each_choice(tmp_path):
    locomo, lme = _two_of_each(tmp_path)
    report = await run_eval(locomo, lme, embedder=HashingEmbedder(), cache_dir=tmp_path / "cache", folds=2)
    m = report.metrics
    assert m["locomo_folds"] == 2 and m["lme_folds"] == 2
    assert m["locomo_recall_at_10_oof"] == 100.0 and m["locomo_recall_at_10_in_sample"] == 100.0
    assert m["lme_recall_all_at_5_oof"] == 1.0
    assert m["lme_recall_all_at_5_multi_session_oof"] == 1.0  # per question type too
    assert m["locomo_fold_1_config"] == "default"  # every candidate ties: the default is kept
    # each fold's held-out objective beside BM25's on the same questions, and the spread
    assert m["lme_fold_1_recall_all_at_5_oof"] == m["lme_fold_2_recall_all_at_5_oof"] == 1.0
    assert m["locomo_fold_2_recall_at_10_oof"] == 100.0  # percent, as LoCoMo's other figures
    assert m["lme_recall_all_at_5_fold_stdev_oof"] == 0.0
    assert m["lme_recall_all_at_5_fold_min_margin_over_bm25"] == pytest.approx(
        1.0 - max(m["lme_fold_1_recall_all_at_5_bm25"], m["lme_fold_2_recall_all_at_5_bm25"])
    )
    names = list(m)
    at_10 = names.index("locomo_recall_at_10")
    assert names[at_10 : at_10 + 4] == [  # each metric, then its twins
        "locomo_recall_at_10", "locomo_recall_at_10_oof", "locomo_recall_at_10_in_sample", "locomo_recall_at_10_bm25"
    ]


async def test_more_folds_than_conversations_is_refused_before_any_work(tmp_path):
    locomo, _ = _two_of_each(tmp_path)
    embedder = HashingEmbedder()
    with pytest.raises(InvalidInputError, match="between 2 and the number of LoCoMo conversations"):
        await run_eval(locomo, embedder=embedder, cache_dir=tmp_path / "cache", folds=3)
    assert embedder.texts_embedded == 0


async def test_evidence_ranks_say_where_each_evidence_session_ranked(tmp_path):
    from chronomem.eval.misses import evidence_ranks, lme_evidence_ranks

    assert evidence_ranks(["b", "a", "b", "c"], ["c", "a", "z"]) == {"c": 3, "a": 2, "z": None}
    lme = tmp_path / "lme.json"
    lme.write_text(json.dumps(LME))
    (row,) = await lme_evidence_ranks(lme, embedder=HashingEmbedder(), cache_dir=tmp_path / "cache")  # _abs skipped
    assert (row.question_id, row.ours, row.bm25) == ("q1", {"a": 1}, {"a": 1})
    assert not row.missed(1) and row.events == ()
    assert await lme_evidence_ranks(lme, question_types=["multi-session"], embedder=HashingEmbedder(),
                                    cache_dir=tmp_path / "cache") == []
