"""Usage accounting: per call (on each ``Completion``), per scope (an episode) and per process.

Every model call records its :class:`Usage` exactly once, at the place that made it (the shared
answer path for calls, the retry wrapper for retries, the cache for hits). Records go to the
process total and to every :func:`usage_scope` open in the current context; scopes are carried by
a context variable, so tasks spawned inside a scope count towards it too::

    with usage_scope() as episode_usage:
        await pipeline.add_episode(...)
    print(episode_usage.calls, episode_usage.input_tokens)

Where a provider reports no token counts (test doubles, some local servers) they are estimated
with :func:`estimate_tokens`: ``ceil(characters / 4)``, the usual rule of thumb for English text
with BPE tokenizers (:mod:`chronomem.providers.tokens`). It is an estimate, not a count.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from chronomem.llm.base import Message, Usage
from chronomem.providers.tokens import estimate_tokens

__all__ = [
    "estimate_message_tokens",
    "process_usage",
    "record_usage",
    "reset_process_usage",
    "usage_scope",
]

_open_scopes: ContextVar[tuple[Usage, ...]] = ContextVar("chronomem_usage_scopes", default=())
_process_total = Usage()


def estimate_message_tokens(messages: Iterable[Message]) -> int:
    """The estimated input tokens of rendered chat messages (sum over their contents)."""
    return sum(estimate_tokens(message.content) for message in messages)


def record_usage(usage: Usage) -> None:
    """Add ``usage`` to the process total and to every scope open in this context."""
    _process_total.add(usage)
    for scope in _open_scopes.get():
        scope.add(usage)


@contextmanager
def usage_scope() -> Iterator[Usage]:
    """Collect the usage of every model call made inside the block (nested scopes all count)."""
    scope = Usage()
    token = _open_scopes.set((*_open_scopes.get(), scope))
    try:
        yield scope
    finally:
        _open_scopes.reset(token)


def process_usage() -> Usage:
    """A copy of everything recorded in this process since start (or the last reset)."""
    snapshot = Usage()
    snapshot.add(_process_total)
    return snapshot


def reset_process_usage() -> None:
    """Zero the process total (benchmarks and tests measure from a clean start)."""
    global _process_total
    _process_total = Usage()
