"""Control-plane port (projects, API keys, users, named graphs, threads, tasks, project documents)
and its two backends. ``open_control_plane(settings)`` picks one by the store's traits:

- with an embedded store, a small SQLite file of its own
  (:class:`~chronomem.controlplane.sqlite.SQLiteControlPlane`);
- with a server store (FalkorDB, a Redis server or cluster), Redis hashes beside the graphs on the
  same server (:class:`~chronomem.controlplane.redis.RedisControlPlane`), so that every API
  server and worker on every machine shares the same keys, users, threads and tasks.

``base`` holds the protocol, the records, the key helpers and the lookup cache both backends use.
"""

from chronomem.controlplane.base import (
    ApiKeyInfo,
    ControlPlane,
    DocumentRecord,
    GraphRecord,
    Project,
    TaskRecord,
    ThreadRecord,
    UserRecord,
    key_matches,
    mint_key,
    new_group_id,
    split_key,
)
from chronomem.controlplane.factory import open_control_plane

__all__ = [
    "ApiKeyInfo", "ControlPlane", "DocumentRecord", "GraphRecord", "Project", "TaskRecord", "ThreadRecord",
    "UserRecord", "key_matches", "mint_key", "new_group_id", "open_control_plane", "split_key",
]
