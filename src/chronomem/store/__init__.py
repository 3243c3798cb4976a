"""Store port (its roles and their union, ``Store``) and backends. ``open_store(url)`` picks a
backend from a URL, and ``store_traits(url)`` says what it allows without opening it:
``sqlite:///path/to/file.db`` (the embedded default), ``sqlite://:memory:``, ``falkordb://host:port``.
"""

from chronomem.store.base import (
    BfsResult,
    BulkLoader,
    EpisodeQueue,
    EpisodeReader,
    GraphReader,
    GraphWrite,
    GraphWriter,
    GroupAdmin,
    GroupStats,
    QueueDepth,
    Scope,
    ScoredId,
    SearchIndex,
    Store,
    WeightedEdge,
)
from chronomem.store.factory import StoreTraits, open_store, store_traits

__all__ = [
    "BfsResult", "BulkLoader", "EpisodeQueue", "EpisodeReader", "GraphReader", "GraphWrite", "GraphWriter",
    "GroupAdmin", "GroupStats", "QueueDepth", "Scope", "ScoredId", "SearchIndex", "Store", "StoreTraits",
    "WeightedEdge", "open_store", "store_traits",
]
