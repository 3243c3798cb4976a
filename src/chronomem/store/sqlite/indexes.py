"""The in-memory indexes of every (group, scope) searched so far, and the changes that keep them in sync.

An index is built from the database the first time its (group, scope) is searched after the store
opens, on the writer thread, so no write can land between reading the rows and installing the index.
From then on the writer applies each committed change to it (after the commit: a rolled-back batch
never reaches memory).

Memory is bounded: past ``memory_budget`` bytes the least recently searched indexes are dropped
(they are rebuilt from the database when next searched), so a service with many groups keeps only
its active ones in memory. A search already running on a dropped index finishes on it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from chronomem.store.sqlite.text import TextIndex
from chronomem.store.sqlite.vectors import VectorIndex

__all__ = ["DEFAULT_MEMORY_BUDGET", "ChangeKind", "IndexChange", "IndexRegistry", "Kind"]

DEFAULT_MEMORY_BUDGET = 8 << 30  # bytes of in-memory indexes before the least recently used are dropped

Kind = Literal["vector", "text"]
# "times": a fact's four timestamps (its vector's filter data); "group": the group was deleted
ChangeKind = Literal["vector", "text", "times", "group"]


@dataclass(frozen=True, slots=True)
class IndexChange:
    """One committed change; ``value`` None means the id left the index. Fact vectors carry their
    fact's timestamps (``times``), which the vector index filters on."""

    kind: ChangeKind
    group_id: str
    scope: str
    id: str
    value: np.ndarray | str | None
    times: np.ndarray | None = None


class IndexRegistry:
    def __init__(self, memory_budget: int = DEFAULT_MEMORY_BUDGET) -> None:
        self._lock = threading.Lock()
        self._indexes: OrderedDict[tuple[Kind, str, str], VectorIndex | TextIndex] = OrderedDict()
        self._budget = memory_budget

    def get(self, kind: Kind, group_id: str, scope: str) -> VectorIndex | TextIndex | None:
        """The index if loaded, marked as just used."""
        with self._lock:
            index = self._indexes.get((kind, group_id, scope))
            if index is not None:
                self._indexes.move_to_end((kind, group_id, scope))
            return index

    def install(self, kind: Kind, group_id: str, scope: str, index: VectorIndex | TextIndex) -> None:
        with self._lock:
            self._indexes[(kind, group_id, scope)] = index
            total = sum(i.memory_bytes() for i in self._indexes.values())
            while total > self._budget and len(self._indexes) > 1:
                _, evicted = self._indexes.popitem(last=False)
                total -= evicted.memory_bytes()

    def loaded(self) -> list[tuple[Kind, str, str]]:
        with self._lock:
            return list(self._indexes)

    def holds(self, group_id: str, scope: str) -> bool:
        """Is any index of this (group, scope) loaded?"""
        with self._lock:
            return ("vector", group_id, scope) in self._indexes or ("text", group_id, scope) in self._indexes

    def _peek(self, kind: Kind, group_id: str, scope: str) -> VectorIndex | TextIndex | None:
        with self._lock:
            return self._indexes.get((kind, group_id, scope))

    def apply(self, changes: Iterable[IndexChange]) -> None:
        for change in changes:
            if change.kind == "group":
                self.drop_group(change.group_id)
                continue
            kind: Kind = "text" if change.kind == "text" else "vector"
            index = self._peek(kind, change.group_id, change.scope)  # a write is not a use
            if index is None:
                continue  # not loaded: it will be built from the database, change included
            if isinstance(index, VectorIndex) and change.kind == "times":
                assert change.times is not None
                index.set_times(change.id, change.times)
            elif isinstance(index, VectorIndex) and isinstance(change.value, np.ndarray):
                index.upsert(change.id, change.value, change.times)
            elif isinstance(index, TextIndex) and isinstance(change.value, str):
                index.upsert(change.id, change.value)
            elif change.value is None:
                index.remove(change.id)

    def drop_group(self, group_id: str) -> None:
        with self._lock:
            for key in [k for k in self._indexes if k[1] == group_id]:
                del self._indexes[key]

    def clear(self) -> None:
        with self._lock:
            self._indexes.clear()
