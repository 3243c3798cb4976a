"""A long-running serving or worker process tunes the garbage collector."""

from __future__ import annotations


def test_serving_processes_collect_garbage_less_often():
    import gc

    from chronomem.app.process import GC_THRESHOLDS, tune_gc

    before = gc.get_threshold()
    try:
        tune_gc()
        assert gc.get_threshold() == GC_THRESHOLDS and GC_THRESHOLDS[0] > before[0]
    finally:
        gc.set_threshold(*before)
