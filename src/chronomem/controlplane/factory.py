"""Open the control plane a deployment's store calls for; the backend modules are imported only when
asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chronomem.controlplane.base import ControlPlane
from chronomem.store.factory import store_traits

if TYPE_CHECKING:
    from chronomem.config.settings import Settings

__all__ = ["open_control_plane"]


def open_control_plane(settings: Settings) -> ControlPlane:
    """The control plane the settings' store calls for: beside the graphs on a server store (shared
    by every process on every machine), else the SQLite file ``settings.resolved_control_db``."""
    if store_traits(settings.resolved_store_url).shared_control_plane:
        from chronomem.controlplane.redis import RedisControlPlane

        return RedisControlPlane.connect(settings.resolved_store_url)
    from chronomem.controlplane.sqlite import SQLiteControlPlane

    return SQLiteControlPlane.open(settings.resolved_control_db)
