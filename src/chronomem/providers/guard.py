"""A process-wide switch that forbids real model requests (tests turn it on).

Every adapter that talks to a network (chat models, embedders, cross-encoders) calls
:func:`ensure_model_requests_allowed` before any I/O. Under :func:`forbid_model_requests` that
raises ``ModelCallForbiddenError``; :func:`allow_model_requests` re-opens the gate for a block (the
adapter tests that talk to the loopback fake server use it). The switch is a plain global rather
than a context variable so it also holds inside threads and tasks started elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from chronomem.errors import ModelCallForbiddenError

__all__ = [
    "allow_model_requests",
    "ensure_model_requests_allowed",
    "forbid_model_requests",
    "model_requests_allowed",
]

_allowed = True


def model_requests_allowed() -> bool:
    return _allowed


def ensure_model_requests_allowed(target: str) -> None:
    """Raise ``ModelCallForbiddenError`` if real requests are forbidden; ``target`` names the call."""
    if not _allowed:
        raise ModelCallForbiddenError(
            f"a real model request to {target} was attempted while model requests are forbidden; "
            "use chronomem.llm.testing.FunctionModel (or allow_model_requests() for a local server)"
        )


@contextmanager
def _set_allowed(value: bool) -> Iterator[None]:
    global _allowed
    previous = _allowed
    _allowed = value
    try:
        yield
    finally:
        _allowed = previous


def forbid_model_requests() -> AbstractContextManager[None]:
    """Inside the block, every real model request raises ``ModelCallForbiddenError``."""
    return _set_allowed(False)


def allow_model_requests() -> AbstractContextManager[None]:
    """Inside the block, real model requests are allowed again (even within a forbidding one)."""
    return _set_allowed(True)
