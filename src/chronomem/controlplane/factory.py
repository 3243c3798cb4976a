"""Open the control plane a deployment's store calls for; the backend modules are imported only when
asked for."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from chronomem.controlplane.base import ControlPlane
from chronomem.store.factory import store_traits

__all__ = ["open_control_plane"]


class Deployment(Protocol):
    """What the control plane needs to know of the settings (``chronomem.config.Settings`` is one)."""

    @property
    def resolved_store_url(self) -> str: ...

    @property
    def resolved_control_db(self) -> Path: ...


def open_control_plane(settings: Deployment) -> ControlPlane:
    """The control plane the settings' store calls for: beside the graphs on a server store (shared
    by every process on every machine), else the SQLite file ``settings.resolved_control_db``."""
    if store_traits(settings.resolved_store_url).shared_control_plane:
        from chronomem.controlplane.redis import RedisControlPlane

        return RedisControlPlane.connect(settings.resolved_store_url)
    from chronomem.controlplane.sqlite import SQLiteControlPlane

    return SQLiteControlPlane.open(settings.resolved_control_db)
