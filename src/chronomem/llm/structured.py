"""How an OpenAI-compatible endpoint is asked for JSON, and how the working way is found and kept.

Endpoints differ in which ``response_format`` they take. The modes, from the strictest down:

=======================  ==========================================================================
``json_schema``          ``{"type": "json_schema", "json_schema": {"name": …, "schema": …}}``
                         (OpenAI, Azure, vLLM, Ollama, LM Studio, OpenRouter, Groq, Together)
``json_object_schema``   ``{"type": "json_object", "schema": …}``: what llama-cpp-python's server
                         takes (it compiles the schema into a grammar)
``json_object``          ``{"type": "json_object"}`` (JSON mode), the schema in the system message
``prompt``               no ``response_format``; the schema in the system message
=======================  ==========================================================================

With ``structured_output="auto"`` the adapter starts at the top and, when the endpoint refuses the
form it sent (:func:`refuses_structured_output`: any 4xx or 5xx whose body concerns
``response_format``, the schema or the grammar), steps down once, at once, without spending the
retry budget on the same refusal. The step is remembered per endpoint and model for the process
(:func:`negotiation_for`), so later calls and other adapters for the same endpoint start where it
works, and the working mode is logged once (``chronomem.llm.structured``, level INFO).

In ``json_object_schema`` mode the schema is sent :func:`grammar_safe`: llama-cpp-python turns a
string's ``maxLength`` n into n nested optional groups, and past about a thousand llama.cpp refuses
the grammar ("exceeds sane defaults") and the server process dies (measured on 0.3.36). Longer
bounds are left out of what is sent; the answer is still held to them and capped by them
(:mod:`chronomem.llm.budget`).

With a fixed mode, a refusal is a :class:`~chronomem.providers.http.ProviderRequestError` naming the
setting to change: retrying the same request would be refused the same way.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Literal

from chronomem.errors import ModelError

__all__ = [
    "GRAMMAR_MAX_LENGTH",
    "MODES",
    "Negotiation",
    "StructuredOutputMode",
    "WireMode",
    "forget_negotiated_modes",
    "grammar_safe",
    "negotiation_for",
    "refuses_structured_output",
]

StructuredOutputMode = Literal["auto", "json_schema", "json_object_schema", "json_object", "prompt"]
WireMode = Literal["json_schema", "json_object_schema", "json_object", "prompt"]
MODES: tuple[WireMode, ...] = ("json_schema", "json_object_schema", "json_object", "prompt")

# Words of a refusal that concerns the requested format. "schema" and "grammar" cover servers that
# accept the form but fail to compile the schema (llama.cpp turns it into a grammar).
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "structured output", "schema", "grammar")
# Statuses that say "later", not "not like this": rate limits, request timeouts, conflicts.
_TRANSIENT_STATUSES = frozenset({408, 409, 429})
GRAMMAR_MAX_LENGTH = 512  # 1,000 still compiled, 1,500 did not


def grammar_safe(schema: Any, max_length: int = GRAMMAR_MAX_LENGTH) -> Any:
    """A copy of ``schema`` without the string ``maxLength`` bounds over ``max_length`` (see above)."""
    if isinstance(schema, list):
        return [grammar_safe(item, max_length) for item in schema]
    if not isinstance(schema, dict):
        return schema
    long = schema.get("type") == "string" and int(schema.get("maxLength", 0)) > max_length
    return {key: grammar_safe(value, max_length) for key, value in schema.items() if not (long and key == "maxLength")}

logger = logging.getLogger(__name__)


def refuses_structured_output(error: ModelError) -> bool:
    """Whether ``error`` is the endpoint refusing the ``response_format`` it was sent."""
    status = getattr(error, "status", None)
    body = str(getattr(error, "body", "") or "").casefold()
    if status is None or status < 400 or status in _TRANSIENT_STATUSES:
        return False
    return any(word in body for word in _FORMAT_WORDS)


class Negotiation:
    """The structured-output mode of one endpoint and model, learnt from its refusals.

    Thread-safe: a process may call one endpoint from several event loops (one per worker thread).
    """

    def __init__(self, endpoint: str, start: WireMode = "json_schema") -> None:
        self.endpoint = endpoint
        self._mode: WireMode = start
        self._refusals: list[str] = []
        self._announced = False
        self._lock = threading.Lock()

    @property
    def mode(self) -> WireMode:
        return self._mode

    @property
    def refusals(self) -> tuple[str, ...]:
        """One line per refused mode, in the order they were refused (for logs and reports)."""
        return tuple(self._refusals)

    def step_down(self, refused: WireMode, reason: str) -> WireMode | None:
        """Record that ``refused`` was refused; the mode to try next, or ``None`` below the last one.

        Concurrent calls refused in the same mode step down once: a call that was refused in a mode
        already left behind simply retries in the current one.
        """
        with self._lock:
            position = MODES.index(refused)
            if MODES.index(self._mode) > position:
                return self._mode
            if position + 1 == len(MODES):
                return None
            self._refusals.append(f"{refused}: {reason}")
            self._mode = MODES[position + 1]
            logger.debug("%s refused structured output %s (%s); trying %s", self.endpoint, refused, reason, self._mode)
            return self._mode

    def worked(self, mode: WireMode) -> None:
        """Record a successful call in ``mode``; the first one is logged (once per process)."""
        with self._lock:
            if self._announced or mode != self._mode:
                return
            self._announced = True
        refused = f" (refused: {'; '.join(self._refusals)})" if self._refusals else ""
        logger.info("%s: structured output mode %s%s", self.endpoint, mode, refused)


_negotiations: dict[str, Negotiation] = {}
_registry_lock = threading.Lock()


def negotiation_for(endpoint: str) -> Negotiation:
    """The process-wide :class:`Negotiation` of ``endpoint`` (a URL and model)."""
    with _registry_lock:
        found = _negotiations.get(endpoint)
        if found is None:
            found = _negotiations[endpoint] = Negotiation(endpoint)
        return found


def forget_negotiated_modes() -> None:
    """Forget every learnt mode (tests start each case from a clean process state)."""
    with _registry_lock:
        _negotiations.clear()
