"""Indexes of a group's graph, created on the first write that puts something in it.

A graph is created by its first write, so reads never create graphs (a group with no objects has
no key). Vector indexes need the embedding dimension, so each is created when the first vector of
its label arrives. What exists is cached per process; creating an index that another process just
created is not an error.

The first write of a process to a graph also brings a graph of an older layout up to date, in
batches (no query holds the graph's write lock for long): facts get ``valid_from`` (see records)
before the index on it is created, so the index exists only once every fact has the property,
which is what :meth:`SchemaManager.has_range_index` tells readers; fact vector holders get their
link to their fact (see cypher.VECTOR_LINK), which readers check by counting.

A bulk load (:meth:`SchemaManager.defer_vector_indexes`) writes a new graph's vectors with no vector
index, and :meth:`SchemaManager.build_deferred` builds each HNSW index once, over every holder, at the
end: the writes no longer wait for HNSW inserts (the build costs the server the same CPU as the
inserts would have: docs/retrieval.md, "FalkorDB bulk load"). A load cut short leaves holders
without their index; the next process's first write to the graph creates it (and waits for it no
longer than for any new index: searches see the part built so far, as after a server restart).
"""

from __future__ import annotations

import asyncio
import time

from chronomem.errors import InvalidInputError, StoreError
from chronomem.store.falkordb.connection import FalkorConnection, MissingGraphError
from chronomem.store.falkordb.cypher import (
    FULLTEXT_INDEXES,
    LABELS,
    RANGE_INDEXES,
    VECTOR_LINK,
    vector_index_statement,
    vector_label,
)
from chronomem.store.falkordb.records import EARLIEST

__all__ = ["LINK_COUNTS", "SchemaManager"]


def _range_statement(label: str, prop: str) -> str:
    return f"CREATE INDEX FOR (n:{label}) ON (n.{prop})"


_BACKFILL_BATCH = 10_000
_BACKFILL_VALID_FROM = (
    "MATCH (f:Fact) WHERE f.valid_from IS NULL WITH f LIMIT $batch "
    "SET f.valid_from = coalesce(f.valid_at, $earliest) RETURN count(f)"
)
LINK_COUNTS = (
    "CALL db.meta.stats() YIELD labels, relTypes "
    f"RETURN coalesce(labels['{vector_label('Fact')}'], 0), coalesce(relTypes['{VECTOR_LINK}'], 0)"
)
_BACKFILL_LINKS = (
    f"MATCH (h:{vector_label('Fact')}) WHERE NOT (:Fact)-[:{VECTOR_LINK}]->(h) MATCH (f:Fact {{id: h.id}}) "
    f"WITH f, h LIMIT $batch CREATE (f)-[:{VECTOR_LINK}]->(h) RETURN count(*)"
)


def _fulltext_statement(label: str, props: tuple[str, ...]) -> str:
    fields = ", ".join(f"'{p}'" for p in props)
    return f"CALL db.idx.fulltext.createNodeIndex({{label: '{label}', stopwords: []}}, {fields})"


class SchemaManager:
    """Makes sure a graph carries the backend's indexes before data goes in."""

    def __init__(self, connection: FalkorConnection) -> None:
        self._connection = connection
        self._deferred: set[str] = set()  # graphs being bulk-loaded: no vector index until build_deferred
        self._existing: dict[str, set[str]] = {}
        self._ready: dict[str, set[str]] = {}  # range indexes readers found operational
        self._dimensions: dict[str, dict[str, int]] = {}  # graph key → object label → vector dimension
        self._locks: dict[str, asyncio.Lock] = {}

    async def _load(self, key: str) -> set[str]:
        try:
            rows = await self._connection.query(
                key, "CALL db.indexes() YIELD label, types, options RETURN label, types, options", read_only=True
            )
        except MissingGraphError:
            return set()
        found: set[str] = set()
        for label, types, options in rows:
            for prop, kinds in types.items():
                found.update(f"{label}.{prop}:{kind}" for kind in kinds)
            dimension = ((options or {}).get("emb") or {}).get("dimension")
            if dimension and label.endswith("Vec"):
                self._dimensions.setdefault(key, {})[label.removesuffix("Vec")] = int(dimension)
        return found

    def check_dimensions(self, key: str, vector_dimensions: dict[str, int]) -> None:
        """Refuse vectors whose dimension differs from the one the group's index was built for
        (call after :meth:`ensure`, which learns the dimensions)."""
        known = self._dimensions.get(key, {})
        for label, dimension in vector_dimensions.items():
            if known.get(label, dimension) != dimension:
                raise InvalidInputError(
                    f"{label.lower()} vectors of this group have {known[label]} dimensions, not {dimension}"
                )

    async def _create(self, key: str, statement: str) -> bool:
        try:
            await self._connection.query(key, statement)
        except StoreError as exc:
            if "already" not in str(exc).lower():  # a concurrent writer got there first
                raise
            return False
        return True

    async def _wait_operational(self, key: str, timeout: float | None = 30.0) -> None:
        """Index creation is asynchronous, even on an empty graph: writes and reads that come
        before the index is OPERATIONAL can miss it (seen under load as searches finding nothing).
        ``timeout`` None waits as long as the build takes (a bulk load's index over 1M holders)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.01
        while deadline is None or time.monotonic() < deadline:
            rows = await self._connection.query(key, "CALL db.indexes() YIELD status RETURN status", read_only=True)
            if all(status == "OPERATIONAL" for (status,) in rows):
                return
            await asyncio.sleep(pause)
            pause = min(pause * 2, 1.0)  # a long build is not polled a hundred times a second

    async def _backfill(self, key: str, text: str, params: dict[str, int]) -> None:
        while True:
            rows = await self._connection.query(key, text, {**params, "batch": _BACKFILL_BATCH})
            if not rows or rows[0][0] < _BACKFILL_BATCH:
                return

    async def _upgrade(self, key: str, existing: set[str]) -> None:
        """Bring a graph written by an earlier version of the backend up to the current layout."""
        if "Fact.valid_from:RANGE" not in existing:  # before the index: see the module docstring
            await self._backfill(key, _BACKFILL_VALID_FROM, {"earliest": EARLIEST})
        counts = await self._connection.query(key, LINK_COUNTS, read_only=True)
        if counts and counts[0][0] != counts[0][1]:
            await self._backfill(key, _BACKFILL_LINKS, {})
        if key not in self._deferred:
            await self._index_orphan_holders(key, existing)

    async def _index_orphan_holders(self, key: str, existing: set[str]) -> None:
        """Vector indexes for holders written without one (a bulk load that stopped before its end),
        built for the dimension of the holders themselves."""
        for label in LABELS.values():
            holder = vector_label(label)
            if f"{holder}.emb:VECTOR" in existing:
                continue
            rows = await self._connection.query(key, f"MATCH (h:{holder}) RETURN h.emb LIMIT 1", read_only=True)
            if not rows:
                continue
            dimension = len(rows[0][0])
            self._dimensions.setdefault(key, {})[label] = dimension
            statement = vector_index_statement(holder, dimension, self._connection.settings.ef_runtime)
            if await self._create(key, statement):
                await self._wait_operational(key)
            existing.add(f"{holder}.emb:VECTOR")

    async def has_range_index(self, key: str, label: str, prop: str) -> bool:
        """Does the graph have an operational range index on ``label.prop``? For readers, which never
        create indexes: a yes is cached, a no is asked again next time."""
        name = f"{label}.{prop}:RANGE"
        if name in self._existing.get(key, set()) or name in self._ready.get(key, set()):
            return True
        try:
            rows = await self._connection.query(
                key, "CALL db.indexes() YIELD label, types, status WHERE label = $label RETURN types, status",
                {"label": label}, read_only=True,
            )
        except MissingGraphError:
            return False
        if any("RANGE" in (types.get(prop) or []) and status == "OPERATIONAL" for types, status in rows):
            self._ready.setdefault(key, set()).add(name)
            return True
        return False

    async def ensure(self, key: str, vector_dimensions: dict[str, int]) -> None:
        wanted = self._wanted(vector_dimensions)
        if wanted <= self._existing.get(key, set()):
            return
        async with self._locks.setdefault(key, asyncio.Lock()):
            existing = self._existing.get(key)
            if not existing:  # this process's first write to the graph
                existing = await self._load(key)
                if existing:
                    await self._upgrade(key, existing)
            statements = [_range_statement(label, prop) for label, prop in RANGE_INDEXES
                          if f"{label}.{prop}:RANGE" not in existing]
            statements += [_fulltext_statement(label, props) for label, props in FULLTEXT_INDEXES
                           if f"{label}.{props[0]}:FULLTEXT" not in existing]
            ef_runtime = self._connection.settings.ef_runtime
            deferred = key in self._deferred
            for label, dimension in vector_dimensions.items():
                if f"{vector_label(label)}.emb:VECTOR" not in existing:
                    self._dimensions.setdefault(key, {}).setdefault(label, dimension)
                    if not deferred:
                        statements.append(vector_index_statement(vector_label(label), dimension, ef_runtime))
            created = [await self._create(key, statement) for statement in statements]
            if any(created):
                await self._wait_operational(key)
            if deferred:  # still wanted: the next write comes back here (no query) until build_deferred
                wanted = {name for name in wanted if not name.endswith(":VECTOR")}
            self._existing[key] = existing | wanted

    def defer_vector_indexes(self, key: str) -> None:
        """Until :meth:`build_deferred`, writes to ``key`` create no vector index (their dimensions
        are still learned and checked); vector searches of the graph find nothing meanwhile."""
        self._deferred.add(key)

    async def build_deferred(self, key: str) -> None:
        """Create the vector indexes the deferred writes to ``key`` needed, and wait until they are
        built over every holder, however long that takes."""
        if key not in self._deferred:
            return
        self._deferred.discard(key)
        dimensions = dict(self._dimensions.get(key, {}))
        async with self._locks.setdefault(key, asyncio.Lock()):
            existing = self._existing.get(key) or await self._load(key)
            ef_runtime = self._connection.settings.ef_runtime
            names = {label: f"{vector_label(label)}.emb:VECTOR" for label in dimensions}
            created = [await self._create(key, vector_index_statement(vector_label(label), dimension, ef_runtime))
                       for label, dimension in dimensions.items() if names[label] not in existing]
            if any(created):
                await self._wait_operational(key, timeout=None)
            self._existing[key] = existing | set(names.values())

    @staticmethod
    def _wanted(vector_dimensions: dict[str, int]) -> set[str]:
        wanted = {f"{label}.{prop}:RANGE" for label, prop in RANGE_INDEXES}
        wanted |= {f"{label}.{props[0]}:FULLTEXT" for label, props in FULLTEXT_INDEXES}
        return wanted | {f"{vector_label(label)}.emb:VECTOR" for label in vector_dimensions}

    def forget(self, key: str) -> None:
        """The graph was deleted: its indexes went with it."""
        self._existing.pop(key, None)
        self._deferred.discard(key)
        self._ready.pop(key, None)
        self._dimensions.pop(key, None)
