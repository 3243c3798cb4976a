"""The embedded store: one SQLite file in WAL mode; vector and BM25 search on in-memory indexes.

Threading: every write runs on one writer thread with the one writer connection (SQLite allows a
single writer; a second would fail with "database is locked"), so concurrent callers queue instead
of failing, and the event loop never waits for a commit (``synchronous=FULL`` syncs to disk). Reads
run on the calling thread, with a read-only connection of that thread's own; in WAL mode they never
wait for the writer. A read therefore holds its event loop for as long as it runs — microseconds to
a few milliseconds for the reads a search makes — which costs far less than handing it to a thread:
under the GIL reader threads add no parallelism to this mostly-Python work, and the hand-off plus
the GIL contention of a pool of readers more than doubled the CPU of a concurrent context query
(4.8 against 2.1 ms, 20 concurrent queries in ``bench/service.py``'s data). The store may still be
shared by coroutines of several event loops and threads: each thread has its own connection.
(An in-memory database cannot be shared between connections, so ":memory:" does everything, reads
included, on the writer thread.)

Several processes may open the same file: their in-memory indexes follow each other's writes
through the file's change log (changefeed.py), and one of them at a time consumes the episode
queue (queuelock.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, TypeVar, cast

import numpy as np

from chronomem.domain import Community, Entity, Episode, EpisodeStatus, Fact, FactVersion
from chronomem.errors import InvalidInputError, NotFoundError, StoreError, StoreUnavailableError
from chronomem.filters import SearchFilters
from chronomem.store.base import BfsResult, GraphWrite, GroupStats, QueueDepth, Scope, ScoredId, WeightedEdge
from chronomem.store.sqlite import reads
from chronomem.store.sqlite.ann import ANN_FROM
from chronomem.store.sqlite.changefeed import ChangeFeed, head
from chronomem.store.sqlite.codec import EPISODE_COLUMNS, dumps, episode_from_row, from_us
from chronomem.store.sqlite.connection import apply_migrations, connect
from chronomem.store.sqlite.graph import breadth_first
from chronomem.store.sqlite.indexes import DEFAULT_MEMORY_BUDGET, IndexChange, IndexRegistry, Kind
from chronomem.store.sqlite.queuelock import QueueLock
from chronomem.store.sqlite.text import TextIndex, query_terms
from chronomem.store.sqlite.timemask import NULL_TIME, fact_time_mask
from chronomem.store.sqlite.vectors import VectorIndex
from chronomem.store.sqlite.writes import TEXT_SQL, apply_write, check_batch, find_group, insert_episode_row

__all__ = ["SQLiteStore"]

T = TypeVar("T")
_EMPTY_STATS = GroupStats(0, 0, 0, 0, 0)


def _translate(exc: sqlite3.Error) -> StoreError:
    message = str(exc)
    if "locked" in message or "busy" in message:
        return StoreUnavailableError(f"SQLite is busy: {message}")
    return StoreError(f"SQLite failed: {message}")


class SQLiteStore:
    """Implements :class:`chronomem.store.Store`; open with :meth:`open`."""

    def __init__(
        self,
        path: str,
        writer: sqlite3.Connection,
        *,
        index_memory: int = DEFAULT_MEMORY_BUDGET,
        ann_from: int = ANN_FROM,
    ) -> None:
        self._path = path
        self._ann_from = ann_from
        self._writer = writer
        self._in_memory = path == ":memory:"
        self._write_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chronomem-sqlite-writer")
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._indexes = IndexRegistry(index_memory)
        # Other processes' writes reach this one's indexes through the file's change log.
        self._feed = ChangeFeed(self._indexes, applied=head(writer))
        self._queue_lock = None if self._in_memory else QueueLock(path)
        self._closed = False

    @classmethod
    async def open(
        cls, path: str, *, index_memory: int = DEFAULT_MEMORY_BUDGET, ann_from: int = ANN_FROM
    ) -> SQLiteStore:
        """Open (creating if needed) the database at ``path`` (or ``":memory:"``) and migrate it.

        ``index_memory`` bounds the bytes of in-memory search indexes (least recently searched
        groups are dropped past it and rebuilt on their next search). A (group, scope) of at least
        ``ann_from`` vectors is searched through an approximate index (store/sqlite/ann.py) once it
        is trained in the background; smaller ones, exactly."""

        def prepare() -> sqlite3.Connection:
            conn = connect(path)
            try:
                apply_migrations(conn)
            except BaseException:
                conn.close()
                raise
            return conn

        writer = await asyncio.to_thread(prepare)
        return cls(path, writer, index_memory=index_memory, ann_from=ann_from)

    @property
    def path(self) -> str:
        return self._path

    # -- plumbing ----------------------------------------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        if self._in_memory:
            return self._writer
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self._path, reader=True)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    async def _run(self, pool: ThreadPoolExecutor, fn: Callable[..., T], *args: Any) -> T:
        if self._closed:
            raise StoreError("the store is closed")

        def call() -> T:
            try:
                return fn(*args)
            except sqlite3.Error as exc:
                raise _translate(exc) from exc

        return await asyncio.get_running_loop().run_in_executor(pool, call)

    async def _read(self, fn: Callable[[], T]) -> T:
        """Run a read on this thread (see the module docstring), or on the writer thread for an
        in-memory database, whose one connection the writer thread owns."""
        if self._in_memory:
            return await self._run(self._write_pool, fn)
        if self._closed:
            raise StoreError("the store is closed")
        try:
            return fn()
        except sqlite3.Error as exc:
            raise _translate(exc) from exc

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._run(self._write_pool, lambda: fn(self._writer, *args))

    def _transaction(
        self, conn: sqlite3.Connection, body: Callable[[sqlite3.Connection], tuple[T, list[IndexChange]]]
    ) -> T:
        """Run ``body`` in one write transaction that also logs its index changes; the indexes of
        this process change after the commit (with any other process's changes not yet applied)."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            result, own = body(conn)
            changes, newest = self._feed.before_commit(conn, own)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._feed.after_commit(changes, newest)
        return result

    async def _catch_up(self) -> None:
        """Apply what other processes wrote since this one last looked. ``data_version`` changes
        only when another connection commits, so most searches stop at that pragma."""
        if self._in_memory:
            return
        conn = self._reader()
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if version == getattr(self._local, "data_version", None):
            return
        if self._feed.behind(conn):
            await self._write(self._feed.catch_up)
        self._local.data_version = version

    async def _read_group(self, group_id: str, fn: Callable[..., T], *args: Any, default: T) -> T:
        """Run ``fn(conn, gid, *args)`` on a reader; ``default`` if the group was never written."""

        def read() -> T:
            conn = self._reader()
            gid = find_group(conn, group_id)
            return default if gid is None else fn(conn, gid, *args)

        return await self._read(read)

    # -- lifecycle ---------------------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await asyncio.to_thread(self._shutdown)

    def _shutdown(self) -> None:
        self._write_pool.shutdown(wait=True)
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()
        self._writer.close()
        self._indexes.clear()
        if self._queue_lock is not None:
            self._queue_lock.release()

    async def list_groups(self) -> list[str]:
        def query() -> list[str]:
            rows = self._reader().execute(
                "SELECT name FROM groups g WHERE EXISTS (SELECT 1 FROM episodes WHERE gid = g.gid) "
                "OR EXISTS (SELECT 1 FROM entities WHERE gid = g.gid) "
                "OR EXISTS (SELECT 1 FROM facts WHERE gid = g.gid) "
                "OR EXISTS (SELECT 1 FROM communities WHERE gid = g.gid)"
            )
            return sorted(r[0] for r in rows)

        return await self._read(query)

    async def delete_group(self, group_id: str) -> None:
        def delete(conn: sqlite3.Connection) -> tuple[None, list[IndexChange]]:
            gid = find_group(conn, group_id)
            if gid is None:
                return None, []
            for table in (
                "episodes",
                "entities",
                "entity_names",
                "entity_labels",
                "facts",
                "fact_versions",
                "fact_entities",
                "fact_episodes",
                "mentions",
                "communities",
                "community_members",
                "vectors",
                "groups",
            ):
                conn.execute(f"DELETE FROM {table} WHERE gid = ?", (gid,))
            return None, [IndexChange("group", group_id, "", "", None)]

        await self._write(self._transaction, delete)

    async def stats(self, group_id: str) -> GroupStats:
        return await self._read_group(group_id, reads.group_stats, default=_EMPTY_STATS)

    # -- writes ------------------------------------------------------------------------------------

    async def insert_episode(self, episode: Episode) -> tuple[Episode, bool]:
        def insert(conn: sqlite3.Connection) -> tuple[tuple[Episode, bool], list[IndexChange]]:
            inserted, changes = insert_episode_row(conn, episode)
            return (_episode(conn, episode.group_id, episode.id), inserted), changes

        return await self._write(self._transaction, insert)

    async def write(self, batch: GraphWrite) -> None:
        check_batch(batch)
        if batch.is_empty():
            return
        await self._write(self._transaction, lambda conn: (None, apply_write(conn, batch)))

    @contextlib.asynccontextmanager
    async def bulk_load(self, group_id: str) -> AsyncIterator[None]:
        """Nothing to defer: every write brings the full-text and vector indexes up to date in its
        own transaction, at a cost that grows with the write, not with the group."""
        yield

    async def set_episode_status(
        self, group_id: str, episode_id: str, status: EpisodeStatus, *, error: str | None = None
    ) -> Episode:
        status = EpisodeStatus(status)

        def update(conn: sqlite3.Connection) -> Episode:
            gid = find_group(conn, group_id)
            changed = None
            if gid is not None:
                changed = conn.execute(
                    "UPDATE episodes SET status = ?, attempts = attempts + ?, "
                    "last_error = CASE WHEN ? THEN NULL WHEN ? IS NOT NULL THEN ? ELSE last_error END "
                    "WHERE gid = ? AND id = ? RETURNING 1",
                    (
                        status.value,
                        int(status is EpisodeStatus.PROCESSING),
                        status is EpisodeStatus.DONE,
                        error,
                        error,
                        gid,
                        episode_id,
                    ),
                ).fetchone()
            if changed is None:
                raise NotFoundError(f"no episode {episode_id!r} in group {group_id!r}")
            return _episode(conn, group_id, episode_id)

        return await self._write(update)

    async def set_episode_metadata(self, group_id: str, episode_id: str, metadata: dict[str, Any]) -> Episode:
        text = dumps(metadata)

        def update(conn: sqlite3.Connection) -> Episode:
            changed = conn.execute(
                "UPDATE episodes SET metadata = ? WHERE gid = (SELECT gid FROM groups WHERE name = ?) AND id = ? "
                "RETURNING 1",
                (text, group_id, episode_id),
            ).fetchone()
            if changed is None:
                raise NotFoundError(f"no episode {episode_id!r} in group {group_id!r}")
            return _episode(conn, group_id, episode_id)

        return await self._write(update)

    async def reset_processing(self) -> int:
        """Also makes this process the file's one queue consumer (see queuelock.py): raises
        ``StoreError`` while another process is."""
        if self._queue_lock is not None:
            self._queue_lock.acquire()

        def reset(conn: sqlite3.Connection) -> int:
            cursor = conn.execute(
                "UPDATE episodes SET status = ? WHERE status = ?",
                (EpisodeStatus.PENDING.value, EpisodeStatus.PROCESSING.value),
            )
            return cursor.rowcount

        return await self._write(reset)

    async def pending_groups(self) -> list[str]:
        def query() -> list[str]:
            rows = self._reader().execute(
                "SELECT g.name FROM groups g WHERE g.gid IN (SELECT gid FROM episodes WHERE status = ?)",
                (EpisodeStatus.PENDING.value,),
            )
            return sorted(r[0] for r in rows)

        return await self._read(query)

    async def queue_depth(self) -> dict[EpisodeStatus, QueueDepth]:
        queued = (EpisodeStatus.PENDING, EpisodeStatus.PROCESSING)

        def query() -> dict[EpisodeStatus, QueueDepth]:
            rows = self._reader().execute(
                "SELECT status, COUNT(*), MIN(created_at) FROM episodes WHERE status IN (?, ?) GROUP BY status",
                tuple(s.value for s in queued),
            )
            # created_at is NOT NULL, so a state with episodes has an oldest one
            return {EpisodeStatus(status): QueueDepth(count, cast(datetime, from_us(oldest)))
                    for status, count, oldest in rows}

        return await self._read(query)

    # -- reads by id -------------------------------------------------------------------------------

    async def get_episodes(self, group_id: str, ids: Sequence[str]) -> list[Episode]:
        return await self._read_group(group_id, reads.episodes_by_ids, group_id, list(ids), default=[])

    async def get_entities(self, group_id: str, ids: Sequence[str]) -> list[Entity]:
        return await self._read_group(group_id, reads.entities_by_ids, group_id, list(ids), default=[])

    async def get_facts(self, group_id: str, ids: Sequence[str], *, known_at: datetime | None = None) -> list[Fact]:
        return await self._read_group(group_id, reads.facts_by_ids, group_id, list(ids), known_at, default=[])

    async def fact_history(self, group_id: str, fact_id: str) -> list[FactVersion]:
        return await self._read_group(group_id, reads.fact_history, group_id, fact_id, default=[])

    async def get_communities(self, group_id: str, ids: Sequence[str]) -> list[Community]:
        return await self._read_group(group_id, reads.communities_by_ids, group_id, list(ids), default=[])

    async def get_vectors(self, group_id: str, scope: Scope, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return await self._read_group(group_id, reads.vectors_by_ids, Scope(scope), list(ids), default={})

    # -- listings ----------------------------------------------------------------------------------

    async def list_episodes(
        self,
        group_id: str,
        *,
        limit: int | None = None,
        before: datetime | None = None,
        statuses: Sequence[EpisodeStatus] | None = None,
        newest_first: bool = True,
    ) -> list[Episode]:
        return await self._read_group(
            group_id,
            lambda conn, gid: reads.list_episodes(
                conn, gid, group_id, limit=limit, before=before, statuses=statuses, newest_first=newest_first
            ),
            default=[],
        )

    async def list_entities(self, group_id: str, *, limit: int | None = None, offset: int = 0) -> list[Entity]:
        return await self._read_group(
            group_id, lambda conn, gid: reads.list_entities(conn, gid, group_id, limit=limit, offset=offset), default=[]
        )

    async def list_facts(
        self,
        group_id: str,
        *,
        filters: SearchFilters | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Fact]:
        return await self._read_group(
            group_id,
            lambda conn, gid: reads.list_facts(conn, gid, group_id, filters=filters, limit=limit, offset=offset),
            default=[],
        )

    async def list_communities(self, group_id: str) -> list[Community]:
        return await self._read_group(group_id, reads.list_communities, group_id, default=[])

    # -- lookups -----------------------------------------------------------------------------------

    async def find_entities_by_names(self, group_id: str, names: Sequence[str]) -> list[Entity]:
        return await self._read_group(group_id, reads.entities_by_names, group_id, list(names), default=[])

    async def facts_between(self, group_id: str, a: str, b: str, *, include_superseded: bool = False) -> list[Fact]:
        return await self._read_group(
            group_id,
            lambda conn, gid: reads.facts_between(conn, gid, group_id, a, b, include_superseded=include_superseded),
            default=[],
        )

    async def facts_of_entities(
        self, group_id: str, entity_ids: Sequence[str], *, include_superseded: bool = False
    ) -> list[Fact]:
        ids = list(entity_ids)
        return await self._read_group(
            group_id,
            lambda conn, gid: reads.facts_of_entities(conn, gid, group_id, ids, include_superseded=include_superseded),
            default=[],
        )

    async def facts_of_episode(self, group_id: str, episode_id: str) -> list[Fact]:
        return await self._read_group(group_id, reads.facts_of_episode, group_id, episode_id, default=[])

    async def entities_of_episodes(self, group_id: str, episode_ids: Sequence[str]) -> dict[str, list[str]]:
        ids = list(episode_ids)
        return await self._read_group(
            group_id, reads.entities_of_episodes, ids, default={i: [] for i in dict.fromkeys(ids)}
        )

    async def entities_of_facts(self, group_id: str, fact_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
        ids = list(dict.fromkeys(fact_ids))
        return await self._read_group(group_id, reads.entities_of_facts, ids, default={})

    async def episodes_of_entities(self, group_id: str, entity_ids: Sequence[str]) -> dict[str, list[str]]:
        ids = list(entity_ids)
        return await self._read_group(
            group_id, reads.episodes_of_entities, ids, default={i: [] for i in dict.fromkeys(ids)}
        )

    async def entity_edges(self, group_id: str) -> tuple[list[str], list[WeightedEdge]]:
        return await self._read_group(group_id, reads.entity_edges, default=([], []))

    # -- search ------------------------------------------------------------------------------------

    async def fulltext_search(
        self, group_id: str, scope: Scope, query: str, *, limit: int = 10, filters: SearchFilters | None = None
    ) -> list[ScoredId]:
        scope, terms = Scope(scope), query_terms(query)
        if not terms or limit <= 0:
            return []
        # Rows matching no word score 0; every real BM25 score is above this floor.
        return await self._ranked_search("text", group_id, scope, terms, limit, filters, 1e-12)

    async def vector_search(
        self,
        group_id: str,
        scope: Scope,
        vector: np.ndarray,
        *,
        limit: int = 10,
        filters: SearchFilters | None = None,
        min_score: float | None = None,
    ) -> list[ScoredId]:
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(query)) if query.size else 0.0
        if not np.isfinite(norm) or norm == 0.0:
            raise InvalidInputError("the query vector must be non-empty, finite and non-zero")
        if limit <= 0:
            return []
        return await self._ranked_search("vector", group_id, Scope(scope), query / norm, limit, filters, min_score)

    async def _ranked_search(
        self,
        kind: Kind,
        group_id: str,
        scope: Scope,
        query: object,
        limit: int,
        filters: SearchFilters | None,
        min_score: float | None,
    ) -> list[ScoredId]:
        await self._catch_up()
        index = self._indexes.get(kind, group_id, scope.value)
        if index is None:  # (an empty index is falsy: compare with None)
            index = await self._write(self._load_index, kind, group_id, scope)
        if index is None:
            return []
        if isinstance(index, VectorIndex) and index.dimension not in (None, np.asarray(query).shape[0]):
            raise InvalidInputError(
                f"query vector of dimension {np.asarray(query).shape[0]}; this group's are {index.dimension}"
            )

        # Fact vectors check the time filters in memory; SQL is asked only about labels and types.
        in_memory_times = isinstance(index, VectorIndex) and scope is Scope.FACTS
        mask = fact_time_mask(filters) if in_memory_times else None
        known = filters.known_at if in_memory_times and filters is not None else None

        def search(conn: sqlite3.Connection, gid: int) -> list[ScoredId]:
            def accept(ids: list[str]) -> set[str]:
                passing = reads.accepted_ids(conn, gid, scope, filters, ids, time_clauses=not in_memory_times)
                return set(ids) if passing is None else passing

            probe = reads.accepted_ids(conn, gid, scope, filters, [], time_clauses=not in_memory_times)
            checked = accept if probe is not None else None
            if isinstance(index, VectorIndex):
                # known at t': facts changed since are judged by the version in force at t'
                overrides = None if known is None else reads.versions_in_force(conn, gid, known)
                return index.search(query, limit, min_score=min_score, accept=checked, mask=mask, overrides=overrides)
            return index.search(query, limit, min_score=min_score, accept=checked)

        return await self._read_group(group_id, search, default=[])

    def _load_index(
        self, conn: sqlite3.Connection, kind: Kind, group_id: str, scope: Scope
    ) -> VectorIndex | TextIndex | None:
        """Build a (group, scope) index; on the writer thread, so no write lands in between."""
        loaded = self._indexes.get(kind, group_id, scope.value)
        if loaded is not None:
            return loaded
        gid = find_group(conn, group_id)
        if gid is None:
            return None
        index: VectorIndex | TextIndex
        if kind == "vector" and scope is Scope.FACTS:
            rows = conn.execute(
                "SELECT v.id, v.vec, f.valid_at, f.invalid_at, f.created_at, f.expired_at FROM vectors v "
                "JOIN facts f ON f.gid = v.gid AND f.id = v.id WHERE v.gid = ? AND v.scope = ?",
                (gid, scope.value),
            ).fetchall()
            stamps = np.array([r[2:] for r in rows], dtype=object).reshape(len(rows), 4)
            times = np.where(stamps == None, NULL_TIME, stamps).astype(np.int64)  # noqa: E711 (elementwise)
            index = VectorIndex([r[0] for r in rows], [r[1] for r in rows], times=times, ann_from=self._ann_from)
        elif kind == "vector":
            rows = conn.execute(
                "SELECT id, vec FROM vectors WHERE gid = ? AND scope = ?", (gid, scope.value)
            ).fetchall()
            index = VectorIndex([r[0] for r in rows], [r[1] for r in rows], ann_from=self._ann_from)
        else:
            index = TextIndex.build(conn.execute(TEXT_SQL[scope], (gid,)))
        self._indexes.install(kind, group_id, scope.value, index)
        return index

    async def vector_index_info(
        self, group_id: str, scope: Scope = Scope.FACTS, *, wait_seconds: float = 0.0
    ) -> dict[str, float] | None:
        """What the loaded vector index of (group, scope) holds (see ``VectorIndex.describe``),
        after waiting up to ``wait_seconds`` for a background build; None when it is not loaded."""
        index = self._indexes.get("vector", group_id, Scope(scope).value)
        if not isinstance(index, VectorIndex):
            return None
        if wait_seconds > 0:
            await asyncio.to_thread(index.wait_for_index, wait_seconds)
        return index.describe()

    async def bfs(
        self,
        group_id: str,
        seed_entity_ids: Sequence[str],
        *,
        max_hops: int = 2,
        seed_episode_ids: Sequence[str] = (),
        filters: SearchFilters | None = None,
        limit: int | None = None,
    ) -> BfsResult:
        entity_seeds, episode_seeds = list(seed_entity_ids), list(seed_episode_ids)
        return await self._read_group(
            group_id,
            lambda conn, gid: breadth_first(
                conn, gid, entity_seeds, max_hops=max_hops, seed_episode_ids=episode_seeds, filters=filters, limit=limit
            ),
            default=BfsResult(entities={}, facts={}),
        )


def _episode(conn: sqlite3.Connection, group_id: str, episode_id: str) -> Episode:
    row = conn.execute(
        f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE gid = (SELECT gid FROM groups WHERE name = ?) AND id = ?",
        (group_id, episode_id),
    ).fetchone()
    return episode_from_row(group_id, row)
