"""The ``[telemetry]`` settings: metrics, traces, logs and model prices (docs/operations.md)."""

from __future__ import annotations

from dataclasses import dataclass

from chronomem.errors import ConfigurationError
from chronomem.telemetry.costs import ModelPrice, parse_prices
from chronomem.telemetry.logs import LOG_FORMATS
from chronomem.telemetry.tracing import TRACING_MODES

__all__ = ["TelemetrySettings"]


@dataclass(frozen=True, slots=True)
class TelemetrySettings:
    """What a process reports about itself, and where."""

    metrics: bool = True  # serve Prometheus metrics at /metrics (the API server)
    worker_metrics_port: int = 0  # `chronomem worker` serves /metrics on this port; 0: it serves none
    tracing: str = "off"  # off | console | otlp | global (chronomem.telemetry.tracing)
    service_name: str = "chronomem"  # the traces' service.name
    log_format: str = "text"  # text | json (one object per line, with the span's ids)
    # "model=input/cached_input/output" in US dollars per million tokens, ";" between models
    model_prices: str = ""

    def __post_init__(self) -> None:
        if self.tracing not in TRACING_MODES:
            raise ConfigurationError(f"telemetry.tracing must be one of {', '.join(TRACING_MODES)}")
        if self.log_format not in LOG_FORMATS:
            raise ConfigurationError(f"telemetry.log_format must be one of {', '.join(LOG_FORMATS)}")
        if not 0 <= self.worker_metrics_port < 65536:
            raise ConfigurationError("telemetry.worker_metrics_port must be a port number, or 0")
        parse_prices(self.model_prices)

    @property
    def prices(self) -> dict[str, ModelPrice]:
        return parse_prices(self.model_prices)
