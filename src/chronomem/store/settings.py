"""How a store backend indexes: the ``[store]`` settings (FalkorDB's indexes are the server's own)."""

from __future__ import annotations

from dataclasses import dataclass

from chronomem.errors import ConfigurationError

__all__ = ["StoreSettings"]


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """How the store backend indexes (FalkorDB's indexes are the server's own)."""

    # SQLite: a (group, scope) of this many vectors or more is searched through an approximate
    # index (IVF, faiss; recall@10 0.99 on real MiniLM vectors), smaller ones exactly. Without the
    # `ann` extra every group is exact. chronomem.store.sqlite.ann.ANN_FROM
    sqlite_ann_from: int = 200_000

    def __post_init__(self) -> None:
        if self.sqlite_ann_from < 0:
            raise ConfigurationError("store.sqlite_ann_from must be 0 or more")
