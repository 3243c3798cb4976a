"""The HTTP service: ``create_app`` builds the FastAPI app over a :class:`chronomem.Chronomem`."""

from chronomem.service.app import create_app

__all__ = ["create_app"]
