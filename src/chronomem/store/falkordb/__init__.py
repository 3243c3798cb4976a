"""FalkorDB store backend (server; one graph per group; Redis Cluster shards groups).

Needs the ``falkordb`` extra (redis-py); importing this package connects to nothing.
"""

from chronomem.store.falkordb.store import FalkorDBStore

__all__ = ["FalkorDBStore"]
