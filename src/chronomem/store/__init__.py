"""Store port and backends. ``open_store(url)`` picks a backend from a URL:
``sqlite:///path/to/file.db`` (the embedded default), ``sqlite://:memory:``, ``falkordb://host:port``.
"""

from chronomem.store.base import BfsResult, GraphWrite, GroupStats, Scope, ScoredId, Store, WeightedEdge
from chronomem.store.factory import StoreTraits, open_store, store_traits

__all__ = [
    "BfsResult", "GraphWrite", "GroupStats", "Scope", "ScoredId", "Store", "StoreTraits", "WeightedEdge",
    "open_store", "store_traits",
]
