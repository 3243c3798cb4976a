"""docs/operations.md lists every metric exactly as chronomem.telemetry.metrics defines it."""

from __future__ import annotations

from pathlib import Path

from chronomem.telemetry import metrics

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def test_the_metrics_table_is_the_generated_one():
    text = DOC.read_text(encoding="utf-8")
    start = text.index("<!-- metrics-table:")
    body = text[text.index("\n", start) + 1 : text.index("<!-- /metrics-table -->")]
    assert body == metrics.reference_table(), "copy chronomem.telemetry.metrics.reference_table() into the doc"


def test_every_metric_has_a_unique_name_and_bounded_labels():
    names = [spec.name for spec in metrics.METRICS]
    assert len(names) == len(set(names))
    forbidden = {
        "group",
        "group_id",
        "user",
        "user_id",
        "thread",
        "thread_id",
        "episode",
        "episode_id",
        "task_id",
        "project",
        "path",
    }
    assert all(not forbidden & set(spec.labels) for spec in metrics.METRICS)
