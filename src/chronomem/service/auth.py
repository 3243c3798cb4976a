"""API keys on requests: which project is calling.

A request names its key in ``Authorization: Bearer <key>`` or, as Zep clients send it,
``Authorization: Api-Key <key>``. Keys are created and revoked with ``chronomem keys`` and stored
hashed in the control plane (:mod:`chronomem.controlplane`). With ``Settings.auth_required``
false (local development only) every request acts for the project named ``default``.
"""

from __future__ import annotations

from fastapi import Request

from chronomem.controlplane import ControlPlane, Project
from chronomem.service.errors import AuthenticationError

__all__ = ["DEFAULT_PROJECT", "authenticate_request", "presented_key"]

DEFAULT_PROJECT = "default"
_SCHEMES = ("bearer", "api-key")


def presented_key(authorization: str | None) -> str | None:
    """The key in an ``Authorization`` header value, if it uses a scheme we accept."""
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() not in _SCHEMES or not value.strip():
        return None
    return value.strip()


def authenticate_request(request: Request, control: ControlPlane, *, required: bool) -> Project:
    """The calling project, or ``AuthenticationError`` (401) with a message saying what is wrong."""
    if not required:
        return control.ensure_project(DEFAULT_PROJECT)
    key = presented_key(request.headers.get("authorization"))
    if key is None:
        raise AuthenticationError("missing API key: send 'Authorization: Bearer <key>' (create one with "
                                  "'chronomem keys create --project NAME')")
    project = control.authenticate(key)
    if project is None:
        raise AuthenticationError("invalid or revoked API key")
    return project
