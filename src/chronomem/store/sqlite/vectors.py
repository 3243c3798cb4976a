"""In-memory vector matrices: exact cosine over unit float32 rows (a matrix-vector product)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chronomem.store.sqlite.ranking import RankedRows

__all__ = ["VectorIndex"]


class VectorIndex(RankedRows):
    def __init__(self, ids: list[str], blobs: Sequence[bytes]) -> None:
        super().__init__(list(ids))
        self._rows = {id_: row for row, id_ in enumerate(ids)}
        if blobs:
            self._matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1).copy()
        else:
            self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._count = len(ids)

    def __len__(self) -> int:
        return self._count

    @property
    def dimension(self) -> int | None:
        return self._matrix.shape[1] if self._count else None

    def upsert(self, id_: str, vector: np.ndarray) -> None:
        with self._lock:
            self._touch()
            row = self._rows.get(id_)
            if row is None:
                self._grow(vector.shape[0])
                row = self._count
                self._ids.append(id_)
                self._rows[id_] = row
                self._count += 1
            self._matrix[row] = vector

    def remove(self, id_: str) -> None:
        """Swap-remove: the last row moves into the hole."""
        with self._lock:
            row = self._rows.pop(id_, None)
            if row is None:
                return
            self._touch()
            last = self._count - 1
            if row != last:
                moved = self._ids[last]
                assert moved is not None
                self._matrix[row] = self._matrix[last]
                self._ids[row] = moved
                self._rows[moved] = row
            self._ids.pop()
            self._count -= 1

    def _grow(self, dimension: int) -> None:
        if self._matrix.shape[0] > self._count and self._matrix.shape[1] == dimension:
            return
        capacity = max(16, self._matrix.shape[0] * 2)
        grown = np.zeros((capacity, dimension), dtype=np.float32)
        if self._count:
            grown[: self._count] = self._matrix[: self._count]
        self._matrix = grown

    def _scores(self, query: object) -> np.ndarray:
        vector = np.asarray(query, dtype=np.float32)
        if self._count == 0 or vector.shape[0] != self._matrix.shape[1]:
            return np.empty(0, dtype=np.float32)
        return self._matrix[: self._count] @ vector
