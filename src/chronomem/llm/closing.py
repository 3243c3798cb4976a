"""Closing a model stack: wrappers forward ``aclose`` so one call releases the adapter's connections."""

from __future__ import annotations

from typing import Any

__all__ = ["aclose_model"]


async def aclose_model(model: Any) -> None:
    """Await ``model.aclose()`` if the model (adapter or wrapper) has one; otherwise do nothing."""
    close = getattr(model, "aclose", None)
    if close is not None:
        await close()
