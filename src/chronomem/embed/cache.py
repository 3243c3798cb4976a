"""``CachedEmbedder``: each distinct text is embedded once per model.

The key is ``sha256(model_name + NUL + text)``, so vectors of different models never mix. Lookups go
to an in-memory LRU first, then (optionally) a SQLite file of float32 blobs; only the misses reach
the inner embedder, in one call per ``embed`` and deduplicated. Texts that another concurrent call
is already embedding are awaited rather than embedded twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chronomem.embed.base import Embedder, warm_up

__all__ = ["CachedEmbedder", "EmbeddingCacheStats"]

_SCHEMA = "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"


class EmbeddingCacheStats:
    def __init__(self) -> None:
        self.hits = 0
        self.misses = 0


class _DiskVectors:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(f"SELECT key, vector FROM embeddings WHERE key IN ({marks})", chunk)
                found.update(rows.fetchall())
        return found

    def put_many(self, items: list[tuple[str, bytes]]) -> None:
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?)", items)

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedEmbedder:
    """Wraps an :class:`~chronomem.embed.base.Embedder`; ``path`` adds a persistent SQLite layer."""

    def __init__(self, inner: Embedder, *, max_entries: int = 100_000, path: str | Path | None = None) -> None:
        self.inner = inner
        self.max_entries = max_entries
        self.stats = EmbeddingCacheStats()
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._pending: dict[str, asyncio.Future[np.ndarray]] = {}
        self._disk = _DiskVectors(Path(path)) if path is not None else None

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def load(self) -> None:
        """Load the wrapped embedder's model now (see ``chronomem.embed.base.warm_up``)."""
        await warm_up(self.inner)

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.inner.model_name}\0{text}".encode()).hexdigest()

    def _remember(self, key: str, vector: np.ndarray) -> None:
        self._memory[key] = vector
        self._memory.move_to_end(key)
        while len(self._memory) > self.max_entries:
            self._memory.popitem(last=False)

    def _from_memory(self, key: str) -> np.ndarray | None:
        vector = self._memory.get(key)
        if vector is not None:
            self._memory.move_to_end(key)
        return vector

    async def _from_disk(self, keys: list[str]) -> dict[str, np.ndarray]:
        if self._disk is None or not keys:
            return {}
        blobs = await asyncio.to_thread(self._disk.get_many, keys)
        return {key: np.frombuffer(blob, dtype=np.float32).copy() for key, blob in blobs.items()}

    async def _resolve(self, unknown: dict[str, str]) -> dict[str, np.ndarray]:
        """Vectors for texts nobody holds: from disk, else from the inner embedder (one call)."""
        loop = asyncio.get_running_loop()
        futures = {key: loop.create_future() for key in unknown}
        self._pending.update(futures)  # before any await: concurrent callers wait instead of re-embedding
        try:
            vectors = await self._from_disk(list(unknown))
            missing = {key: text for key, text in unknown.items() if key not in vectors}
            self.stats.hits += len(vectors)
            self.stats.misses += len(missing)
            if missing:
                embedded = dict(zip(missing, await self.inner.embed(list(missing.values())), strict=True))
                if self._disk is not None:
                    rows = [(key, vector.astype(np.float32).tobytes()) for key, vector in embedded.items()]
                    await asyncio.to_thread(self._disk.put_many, rows)
                vectors.update(embedded)
            for key, vector in vectors.items():
                self._remember(key, vector)
                futures[key].set_result(vector)
            return vectors
        except BaseException as exc:
            for future in futures.values():
                if not future.done():
                    future.set_exception(exc)
                    future.exception()  # mark retrieved: this caller re-raises it itself
            raise
        finally:
            for key in futures:
                self._pending.pop(key, None)

    def _lookup(
        self, keys: list[str], texts: Sequence[str]
    ) -> tuple[dict[str, np.ndarray], dict[str, asyncio.Future[np.ndarray]], dict[str, str]]:
        """Split distinct keys into found in memory, being embedded by another call, and unknown."""
        found: dict[str, np.ndarray] = {}
        waiting: dict[str, asyncio.Future[np.ndarray]] = {}
        unknown: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key in found or key in waiting or key in unknown:
                continue
            vector = self._from_memory(key)
            if vector is not None:
                found[key] = vector
            elif key in self._pending:
                waiting[key] = self._pending[key]
            else:
                unknown[key] = text
        return found, waiting, unknown

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        keys = [self.key(text) for text in texts]
        found, waiting, unknown = self._lookup(keys, texts)
        self.stats.hits += len(found) + len(waiting)
        if unknown:
            found.update(await self._resolve(unknown))
        for key, future in waiting.items():
            found[key] = await future
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)

    async def aclose(self) -> None:
        if self._disk is not None:
            self._disk.close()
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
