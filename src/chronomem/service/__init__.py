"""The HTTP service: ``create_app`` builds the FastAPI app over a :class:`chronomem.Chronomem`.

``create_app`` is imported on first use, so the parts that need no web framework
(:mod:`~chronomem.app.tenancy`, which the MCP server and the CLI use) import without the
``server`` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chronomem.service.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from chronomem.service.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
