"""The benchmarks' configs: LoCoMo runs the multi-hop mechanisms, LongMemEval (not measured with
them) does not, and both grids vary the same weights."""

from __future__ import annotations

from chronomem.eval.configs import CANDIDATES, EVAL_CONFIG, LME_CONFIG, LOCOMO_CANDIDATES, MULTIHOP, REPORTS


def _multihop(config) -> dict[str, object]:
    return {name: getattr(config, name) for name in MULTIHOP}


def test_locomo_runs_the_multihop_mechanisms_and_longmemeval_does_not():
    assert _multihop(EVAL_CONFIG) == MULTIHOP
    assert EVAL_CONFIG.hop_boost > 0 and EVAL_CONFIG.list_coverage_boost > 0 and EVAL_CONFIG.word_forms
    assert EVAL_CONFIG.asking_last and EVAL_CONFIG.unnamed_speaker_offset > 0 and EVAL_CONFIG.perspective_weight > 0
    assert _multihop(LME_CONFIG) == {
        "hop_boost": 0.0, "list_coverage_boost": 0.0, "word_forms": False, "asking_last": False,
        "unnamed_speaker_offset": 0, "perspective_weight": 0.0,
    }
    assert all(_multihop(c) == _multihop(LME_CONFIG) for c in CANDIDATES.values())
    assert all(_multihop(c) == MULTIHOP for c in LOCOMO_CANDIDATES.values())


def test_both_grids_vary_the_same_weights():
    assert list(LOCOMO_CANDIDATES) == list(CANDIDATES)
    for name, locomo in LOCOMO_CANDIDATES.items():
        lme = CANDIDATES[name]
        assert locomo.episodes == lme.episodes
        assert (locomo.time_boost, locomo.conversation_boost) == (lme.time_boost, lme.conversation_boost)


def test_longmemeval_and_its_grid_run_the_report_signal_and_locomo_does_not():
    assert LME_CONFIG.report_boost == REPORTS["report_boost"] > 0
    assert all(c.report_boost == LME_CONFIG.report_boost for c in CANDIDATES.values())
    assert EVAL_CONFIG.report_boost == 0 and all(c.report_boost == 0 for c in LOCOMO_CANDIDATES.values())
