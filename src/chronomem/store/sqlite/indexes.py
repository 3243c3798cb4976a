"""The in-memory indexes of every (group, scope) searched so far, and the changes that keep them in sync.

An index is built from the database the first time its (group, scope) is searched after the store
opens, on the writer thread, so no write can land between reading the rows and installing the index.
From then on the writer applies each committed change to it (after the commit: a rolled-back batch
never reaches memory).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from chronomem.store.sqlite.text import TextIndex
from chronomem.store.sqlite.vectors import VectorIndex

__all__ = ["ChangeKind", "IndexChange", "IndexRegistry", "Kind"]

Kind = Literal["vector", "text"]
ChangeKind = Literal["vector", "text", "times"]  # "times": a fact's four timestamps (its vector's filter data)


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
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._indexes: dict[tuple[Kind, str, str], VectorIndex | TextIndex] = {}

    def get(self, kind: Kind, group_id: str, scope: str) -> VectorIndex | TextIndex | None:
        with self._lock:
            return self._indexes.get((kind, group_id, scope))

    def install(self, kind: Kind, group_id: str, scope: str, index: VectorIndex | TextIndex) -> None:
        with self._lock:
            self._indexes[(kind, group_id, scope)] = index

    def apply(self, changes: Iterable[IndexChange]) -> None:
        for change in changes:
            kind: Kind = "text" if change.kind == "text" else "vector"
            index = self.get(kind, change.group_id, change.scope)
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
