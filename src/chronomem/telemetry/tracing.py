"""OpenTelemetry spans for requests, episodes, stages and model calls, and the ids logs carry.

Tracing is off unless configured (``telemetry.tracing``): then :func:`span` costs a context-variable
update and nothing else. :func:`configure_tracing` starts the OpenTelemetry SDK (the ``otel``
extra) with the exporter asked for — ``console``, ``otlp`` (needs
``opentelemetry-exporter-otlp-proto-http``), or ``global`` (whatever provider the application
installed itself, e.g. through ``opentelemetry-instrument``); tests hand in an exporter of their own.

Each span carries chronomem's ids as ``chronomem.*`` attributes (``chronomem.episode_id``,
``chronomem.task_id``, ``chronomem.group_id``, ...). The same ids, and the trace and span ids, are
bound to the log context (:func:`log_context`), so a JSON log line names the episode and the task
it belongs to whether or not tracing is on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from chronomem.errors import ConfigurationError, MissingExtraError

__all__ = ["TRACING_MODES", "annotate", "bound", "configure_tracing", "log_context", "span", "tracing_enabled"]

TRACING_MODES = ("off", "console", "otlp", "global")

_ids: ContextVar[dict[str, Any] | None] = ContextVar("chronomem_log_ids", default=None)
_tracer: Any = None  # an OpenTelemetry Tracer once tracing is configured
_provider: Any = None  # the SDK provider chronomem started (None for off and global)


def tracing_enabled() -> bool:
    return _tracer is not None


def configure_tracing(mode: str, *, service_name: str = "chronomem", exporter: Any = None) -> None:
    """Start (or stop, with ``"off"``) tracing. ``exporter``: a span exporter to use instead of the
    mode's own (tests pass an ``InMemorySpanExporter``); spans are then exported as they end."""
    global _tracer, _provider
    if mode not in TRACING_MODES:
        raise ConfigurationError(f"telemetry.tracing is {mode!r}: one of {', '.join(TRACING_MODES)}")
    if _provider is not None:
        _provider.shutdown()  # flushes what it holds
    _tracer = _provider = None
    if mode == "off" and exporter is None:
        return
    try:
        from opentelemetry import trace
    except ImportError:
        raise MissingExtraError("opentelemetry-api", "otel") from None
    if mode == "global" and exporter is None:
        _tracer = trace.get_tracer("chronomem")
        return
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    except ImportError:
        raise MissingExtraError("opentelemetry-sdk", "otel") from None
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        provider.add_span_processor(BatchSpanProcessor(_exporter(mode)))
    _provider = provider
    _tracer = provider.get_tracer("chronomem")


def _exporter(mode: str) -> Any:
    if mode == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    try:  # the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, ..._HEADERS) configure it
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        raise ConfigurationError(
            "telemetry.tracing = otlp needs the OTLP exporter: pip install opentelemetry-exporter-otlp-proto-http"
        ) from None
    return OTLPSpanExporter()


def _attribute(value: Any) -> Any:
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, Sequence):
        return [str(v) for v in value]
    return str(value)


@contextmanager
def bound(**ids: Any) -> Iterator[None]:
    """Bind ids to the log context of the block, without a span."""
    token = _ids.set({**(_ids.get() or {}), **{k: v for k, v in ids.items() if v is not None}})
    try:
        yield
    finally:
        _ids.reset(token)


@contextmanager
def span(name: str, **ids: Any) -> Iterator[None]:
    """A span named ``name`` around the block (when tracing is on), whose ``ids`` (``episode_id=…``)
    become ``chronomem.<id>`` attributes and are bound to the log context inside the block. An
    exception leaving the block is recorded on the span and re-raised."""
    given = {key: value for key, value in ids.items() if value is not None}
    token = _ids.set({**(_ids.get() or {}), **given})
    try:
        if _tracer is None:
            yield
            return
        attributes = {f"chronomem.{key}": _attribute(value) for key, value in given.items()}
        with _tracer.start_as_current_span(name, attributes=attributes):
            yield
    finally:
        _ids.reset(token)


def annotate(**ids: Any) -> None:
    """Add ids learnt inside a span (a task id minted by the request) to it and to the log context
    of the rest of the block."""
    given = {key: value for key, value in ids.items() if value is not None}
    current = _ids.get()
    if current is not None:
        current.update(given)  # the dict belongs to the innermost span() block
    if _tracer is not None:
        from opentelemetry import trace

        active = trace.get_current_span()
        for key, value in given.items():
            active.set_attribute(f"chronomem.{key}", _attribute(value))


def log_context() -> dict[str, Any]:
    """The ids bound here, plus ``trace_id`` and ``span_id`` when a span is recording."""
    found = dict(_ids.get() or {})
    if _tracer is not None:
        from opentelemetry import trace

        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            found["trace_id"] = format(context.trace_id, "032x")
            found["span_id"] = format(context.span_id, "016x")
    return found
