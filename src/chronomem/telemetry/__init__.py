"""Operations telemetry: Prometheus metrics, OpenTelemetry spans, JSON logs (docs/operations.md).

The layers below the application call into it (the model port records its calls, the ingestion
stages their time, the worker pool its outcomes); it imports nothing of chronomem but the exception
tree, and the client libraries only when used, so a process without the ``server`` or ``otel``
extras runs as before with every record a no-op.
"""

from __future__ import annotations

from typing import Any

from chronomem.telemetry import metrics
from chronomem.telemetry.costs import ModelPrice, estimate_cost, parse_prices, set_prices
from chronomem.telemetry.logs import JsonFormatter, configure_logging
from chronomem.telemetry.settings import TelemetrySettings
from chronomem.telemetry.tracing import annotate, bound, configure_tracing, log_context, span, tracing_enabled

__all__ = [
    "JsonFormatter",
    "ModelPrice",
    "TelemetrySettings",
    "annotate",
    "bound",
    "configure",
    "configure_logging",
    "configure_tracing",
    "estimate_cost",
    "log_context",
    "metrics",
    "parse_prices",
    "set_prices",
    "span",
    "tracing_enabled",
]


def configure(settings: TelemetrySettings, *, span_exporter: Any = None) -> None:
    """Apply the settings to this process: model prices, tracing, and JSON logs when asked for
    (text logs are left as the program set them up)."""
    set_prices(settings.prices)
    configure_tracing(settings.tracing, service_name=settings.service_name, exporter=span_exporter)
    if settings.log_format == "json":
        configure_logging("json")
