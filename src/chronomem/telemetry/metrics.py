"""Prometheus metrics: one table of them, recorded by a few named functions (docs/operations.md).

Every metric is defined here, and nothing else in chronomem touches the client library: the
ingestion pipeline, the model port, the worker pool and the HTTP app call the ``record_*``
functions, which do nothing when ``prometheus-client`` (the ``server`` extra) is not installed.

Labels are bounded by construction: routes are templates (``/api/v3/users/{user_id}``), models and
providers come from configuration, prompts and stages are names in the code, errors are exception
class names. No group, user, thread, episode or project id is ever a label.

Several processes (``chronomem serve --processes N``) share one view through the client's
multi-process mode: :func:`prepare_multiprocess` gives the children a fresh directory before they
start, and :func:`render` merges every process's file (``PROMETHEUS_MULTIPROC_DIR``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, Literal

__all__ = [
    "METRICS",
    "MULTIPROC_ENV",
    "MetricSpec",
    "available",
    "mark_process_dead",
    "prepare_multiprocess",
    "record_episode",
    "record_episode_duration",
    "record_http",
    "record_model_call",
    "record_search",
    "record_search_method",
    "record_stage",
    "reference_table",
    "render",
    "serve_metrics",
    "set_in_flight",
    "set_queue",
]

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


# prometheus-client's ways to combine a gauge's values across processes (the ones used here)
GaugeMode = Literal["mostrecent", "livesum", "sum", "max", "min"]


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One metric: its kind, name, labels and what it measures (the docs table is these rows)."""

    kind: str  # counter | gauge | histogram
    name: str
    labels: tuple[str, ...]
    help: str
    gauge_mode: GaugeMode = "mostrecent"  # how processes' values combine in multi-process mode


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "counter",
        "chronomem_http_requests_total",
        ("method", "route", "status"),
        "HTTP requests answered, by route template and status code",
    ),
    MetricSpec(
        "histogram",
        "chronomem_http_request_duration_seconds",
        ("method", "route"),
        "time from request to response, by route template",
    ),
    MetricSpec(
        "gauge",
        "chronomem_queue_episodes",
        ("state",),
        "episodes waiting in the store's queue (pending) or being extracted (processing)",
    ),
    MetricSpec(
        "gauge",
        "chronomem_queue_oldest_age_seconds",
        ("state",),
        "age of the oldest queued episode in each state (0 when none)",
    ),
    MetricSpec(
        "gauge", "chronomem_worker_in_flight", (), "groups a worker pool is extracting right now", gauge_mode="livesum"
    ),
    MetricSpec(
        "counter",
        "chronomem_episodes_total",
        ("outcome",),
        "episodes a worker pool finished: done, retried (a model failure, tried again later), failed",
    ),
    MetricSpec(
        "histogram",
        "chronomem_episode_duration_seconds",
        ("outcome",),
        "time to extract one episode (every stage and model call), ok or error",
    ),
    MetricSpec(
        "histogram",
        "chronomem_stage_duration_seconds",
        ("stage", "outcome"),
        "time spent in each ingestion stage (context, extract_entities, resolve_entities, ...)",
    ),
    MetricSpec(
        "counter",
        "chronomem_llm_calls_total",
        ("provider", "model", "prompt"),
        "model requests (a corrective retry is a second request)",
    ),
    MetricSpec(
        "counter",
        "chronomem_llm_errors_total",
        ("provider", "model", "prompt", "error"),
        "model calls that failed, by exception type (timeouts, truncation, invalid answers, ...)",
    ),
    MetricSpec(
        "counter",
        "chronomem_llm_tokens_total",
        ("provider", "model", "prompt", "kind"),
        "tokens by kind: input (all prompt tokens), cached_input (of those, read from the provider's "
        "prompt cache), output",
    ),
    MetricSpec(
        "counter",
        "chronomem_llm_cost_usd_total",
        ("provider", "model", "prompt"),
        "estimated cost in US dollars, for models whose prices are configured (telemetry.model_prices)",
    ),
    MetricSpec(
        "histogram",
        "chronomem_llm_call_duration_seconds",
        ("provider", "model", "prompt"),
        "time of one model call, corrective retry included",
    ),
    MetricSpec(
        "histogram",
        "chronomem_search_duration_seconds",
        ("operation",),
        "time of a search or a context block (operation: search, context)",
    ),
    MetricSpec(
        "histogram",
        "chronomem_search_method_duration_seconds",
        ("method", "scope"),
        "time of one retrieval method (cosine, bm25, bfs) over one scope of one group",
    ),
)


def reference_table() -> str:
    """The metrics as a Markdown table (docs/operations.md holds it; a test keeps them equal)."""
    rows = ["| metric | type | labels | what it measures |", "|---|---|---|---|"]
    for spec in METRICS:
        labels = ", ".join(f"`{label}`" for label in spec.labels) or "none"
        rows.append(f"| `{spec.name}` | {spec.kind} | {labels} | {spec.help} |")
    return "\n".join(rows) + "\n"


def available() -> bool:
    """Whether the Prometheus client library is installed (the ``server`` extra)."""
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        return False
    return True


@cache
def _metrics() -> Mapping[str, Any] | None:
    """The client's metric objects, made on first use (none when the library is missing)."""
    if not available():
        return None
    import prometheus_client as prom

    made: dict[str, Any] = {}
    for spec in METRICS:
        name = spec.name.removesuffix("_total") if spec.kind == "counter" else spec.name
        if spec.kind == "counter":
            made[spec.name] = prom.Counter(name, spec.help, spec.labels)
        elif spec.kind == "gauge":
            made[spec.name] = prom.Gauge(name, spec.help, spec.labels, multiprocess_mode=spec.gauge_mode)
        else:
            made[spec.name] = prom.Histogram(name, spec.help, spec.labels, buckets=_SECONDS)
    return made


def _increment(metric: Any, *, by: float) -> None:
    metric.inc(by)


def _record(name: str, apply: Callable[[Any], object], **labels: str) -> None:
    metrics = _metrics()
    if metrics is None:
        return
    metric = metrics[name]
    apply(metric.labels(**labels) if labels else metric)


def record_http(method: str, route: str, status: int, seconds: float) -> None:
    _record("chronomem_http_requests_total", lambda m: m.inc(), method=method, route=route, status=str(status))
    _record("chronomem_http_request_duration_seconds", lambda m: m.observe(seconds), method=method, route=route)


def set_queue(state: str, depth: int, oldest_age_s: float) -> None:
    _record("chronomem_queue_episodes", lambda m: m.set(depth), state=state)
    _record("chronomem_queue_oldest_age_seconds", lambda m: m.set(oldest_age_s), state=state)


def set_in_flight(count: int) -> None:
    _record("chronomem_worker_in_flight", lambda m: m.set(count))


def record_episode(outcome: str) -> None:
    """A worker pool finished an episode: ``done``, ``retried`` or ``failed``."""
    _record("chronomem_episodes_total", lambda m: m.inc(), outcome=outcome)


def record_episode_duration(outcome: str, seconds: float) -> None:
    _record("chronomem_episode_duration_seconds", lambda m: m.observe(seconds), outcome=outcome)


def record_stage(stage: str, outcome: str, seconds: float) -> None:
    _record("chronomem_stage_duration_seconds", lambda m: m.observe(seconds), stage=stage, outcome=outcome)


def record_model_call(
    *,
    provider: str,
    model: str,
    prompt: str,
    calls: int,
    input_tokens: int,
    cached_input_tokens: int,
    output_tokens: int,
    seconds: float,
    error: str | None = None,
    cost_usd: float | None = None,
) -> None:
    """One answered (or failed) model call, as :mod:`chronomem.llm.answering` measured it."""
    labels = {"provider": provider, "model": model, "prompt": prompt}
    if calls:
        _record("chronomem_llm_calls_total", lambda m: m.inc(calls), **labels)
    for kind, count in (("input", input_tokens), ("cached_input", cached_input_tokens), ("output", output_tokens)):
        if count:
            _record("chronomem_llm_tokens_total", partial(_increment, by=count), kind=kind, **labels)
    if cost_usd:
        _record("chronomem_llm_cost_usd_total", lambda m: m.inc(cost_usd), **labels)
    if error is not None:
        _record("chronomem_llm_errors_total", lambda m: m.inc(), error=error, **labels)
    _record("chronomem_llm_call_duration_seconds", lambda m: m.observe(seconds), **labels)


def record_search(operation: str, seconds: float) -> None:
    _record("chronomem_search_duration_seconds", lambda m: m.observe(seconds), operation=operation)


def record_search_method(method: str, scope: str, seconds: float) -> None:
    _record("chronomem_search_method_duration_seconds", lambda m: m.observe(seconds), method=method, scope=scope)


def render() -> tuple[bytes, str]:
    """The exposition text of this process, or of every process sharing the multi-process
    directory, and its content type."""
    if not available():
        return b"# prometheus-client is not installed: pip install 'chronomem[server]'\n", "text/plain; charset=utf-8"
    import prometheus_client as prom

    _metrics()  # every family appears from the first scrape on, empty until used
    return prom.generate_latest(_registry()), prom.CONTENT_TYPE_LATEST


def _registry() -> Any:
    import prometheus_client as prom

    if not os.environ.get(MULTIPROC_ENV):
        return prom.REGISTRY
    from prometheus_client import multiprocess

    registry = prom.CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return registry


def serve_metrics(port: int, host: str = "127.0.0.1") -> Callable[[], None]:
    """Serve ``/metrics`` on ``host:port`` from a background thread (``chronomem worker``); returns
    the function that stops it. Port 0 picks a free one (tests)."""
    from chronomem.errors import MissingExtraError

    if not available():
        raise MissingExtraError("prometheus-client", "server")
    import prometheus_client as prom

    _metrics()
    server, thread = prom.start_http_server(port, addr=host, registry=_registry())

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    stop.port = server.server_port  # type: ignore[attr-defined]
    return stop


def prepare_multiprocess() -> str | None:
    """Before starting several server processes: a fresh directory their metrics share, returned so
    the caller removes it when they have stopped; ``None`` when the operator set
    ``PROMETHEUS_MULTIPROC_DIR`` (theirs to empty between runs)."""
    given = os.environ.get(MULTIPROC_ENV)
    if given:
        os.makedirs(given, exist_ok=True)
        return None
    directory = tempfile.mkdtemp(prefix="chronomem-metrics-")
    os.environ[MULTIPROC_ENV] = directory
    return directory


def mark_process_dead(pid: int | None = None) -> None:
    """A process sharing the directory stops: its live gauges no longer count."""
    if os.environ.get(MULTIPROC_ENV) and available():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(os.getpid() if pid is None else pid)  # type: ignore[no-untyped-call]
