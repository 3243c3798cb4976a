"""Structured logs: one JSON object per line, carrying the ids of the span it was written in."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from chronomem.telemetry.tracing import log_context

__all__ = ["JsonFormatter", "configure_logging"]

LOG_FORMATS = ("text", "json")


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message", <ids>, "trace_id", "span_id", "exception"}``: the ids
    (``episode_id``, ``task_id``, ``group_id``, ...) are those bound by the enclosing
    :func:`chronomem.telemetry.span`."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **log_context(),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def configure_logging(log_format: str, level: int | str = logging.INFO) -> None:
    """Send the root logger's records to stderr, as JSON lines or as plain text."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format {log_format!r}: text or json")
    handler = logging.StreamHandler()
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_chronomem", False)]:
        root.removeHandler(old)
    handler._chronomem = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
