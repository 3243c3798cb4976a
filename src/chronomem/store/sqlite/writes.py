"""Applying writes on the single writer connection: GraphWrite batches and queue inserts.

Each batch is one ``BEGIN IMMEDIATE … COMMIT`` that the caller (the store) owns: refused batches
never reach SQL, and any failure inside rolls everything back. The in-memory indexes (vectors,
BM25) change only after the commit, from the returned changes.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chronomem.domain import Community, Entity, Episode, Fact, FactVersion, Mention
from chronomem.errors import InvalidInputError
from chronomem.store.base import GraphWrite, Scope, fact_attributes_column
from chronomem.store.history import check_restored, revise
from chronomem.store.sqlite.codec import (
    FACT_COLUMNS,
    VERSION_COLUMNS,
    dump_sources,
    dumps,
    fact_from_row,
    to_us,
    vector_blob,
)
from chronomem.store.sqlite.indexes import IndexChange
from chronomem.store.sqlite.timemask import time_row

__all__ = ["TEXT_SQL", "apply_write", "check_batch", "ensure_group", "find_group", "insert_episode_row"]

# What BM25 indexes in each scope (the episode text as Episode.text renders it).
TEXT_SQL = {
    Scope.FACTS: "SELECT id, fact FROM facts WHERE gid = ?",
    Scope.ENTITIES: "SELECT id, name || ' ' || summary FROM entities WHERE gid = ?",
    Scope.EPISODES: (
        "SELECT id, CASE WHEN kind = 'message' AND coalesce(speaker, '') != '' THEN speaker || ': ' || content "
        "ELSE content END FROM episodes WHERE gid = ?"
    ),
    Scope.COMMUNITIES: "SELECT id, name || ' ' || summary FROM communities WHERE gid = ?",
}

_TABLES = {
    Scope.EPISODES: "episodes",
    Scope.ENTITIES: "entities",
    Scope.FACTS: "facts",
    Scope.COMMUNITIES: "communities",
}


@dataclass(slots=True)
class _Tx:
    """What one transaction needs: the connection, the group, and the vector changes so far."""

    conn: sqlite3.Connection
    group_id: str
    gid: int
    changes: list[IndexChange] = field(default_factory=list)
    created: set[tuple[Scope, str]] = field(default_factory=set)  # objects new in this batch: no vector yet
    vector_bytes: dict[Scope, int] = field(default_factory=dict)

    def text(self, scope: Scope, object_id: str, text: str | None) -> None:
        self.changes.append(IndexChange("text", self.group_id, scope.value, object_id, text))


def find_group(conn: sqlite3.Connection, group_id: str) -> int | None:
    """The integer id of a group, or None if it was never written."""
    row = conn.execute("SELECT gid FROM groups WHERE name = ?", (group_id,)).fetchone()
    return None if row is None else row[0]


def ensure_group(conn: sqlite3.Connection, group_id: str) -> int:
    found = find_group(conn, group_id)
    if found is not None:
        return found
    # fts_key: a hash-derived name reserved for per-group index tables (unused since BM25 moved to memory)
    key = hashlib.sha256(group_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    inserted = conn.execute("INSERT INTO groups (name, fts_key) VALUES (?, ?) RETURNING gid", (group_id, key))
    gid: int = inserted.fetchone()[0]
    return gid


def check_batch(batch: GraphWrite) -> None:
    """Refuse a batch that names another group anywhere (before anything is written)."""
    if not batch.group_id:
        raise InvalidInputError("a write needs a group_id")
    objects: Iterable[Episode | Entity | Fact | Mention | Community] = (
        *batch.episodes,
        *batch.entities,
        *batch.facts,
        *batch.mentions,
        *batch.communities,
        *batch.delete_mentions,
        *(v.fact for v in batch.fact_history),
    )
    for obj in objects:
        if obj.group_id != batch.group_id:
            raise InvalidInputError(
                f"{type(obj).__name__} of group {obj.group_id!r} in a write to group {batch.group_id!r}"
            )
    check_restored(batch.facts, batch.fact_history)


def apply_write(conn: sqlite3.Connection, batch: GraphWrite) -> list[IndexChange]:
    """Write a checked, non-empty batch inside the caller's transaction."""
    tx = _Tx(conn, batch.group_id, ensure_group(conn, batch.group_id))
    _apply_deletions(tx, batch)
    _apply_upserts(tx, batch)
    return tx.changes


def insert_episode_row(conn: sqlite3.Connection, episode: Episode) -> tuple[bool, list[IndexChange]]:
    """Insert unless the id exists in the group (inside the caller's transaction); True if inserted now."""
    tx = _Tx(conn, episode.group_id, ensure_group(conn, episode.group_id))
    inserted = _upsert_episode(tx, episode, replace=False)
    return inserted, tx.changes


# -- deletions -------------------------------------------------------------------------------------


def _apply_deletions(tx: _Tx, batch: GraphWrite) -> None:
    for mention in batch.delete_mentions:
        tx.conn.execute(
            "DELETE FROM mentions WHERE gid = ? AND episode_id = ? AND entity_id = ?",
            (tx.gid, mention.episode_id, mention.entity_id),
        )
    for fact_id in batch.delete_fact_ids:
        _delete_fact(tx, fact_id)
    for entity_id in batch.delete_entity_ids:
        _delete_entity(tx, entity_id)
    for episode_id in batch.delete_episode_ids:
        _delete_episode(tx, episode_id)
    community_ids = list(batch.delete_community_ids)
    if batch.replace_communities:
        keep = {c.id for c in batch.communities}
        stored = [r[0] for r in tx.conn.execute("SELECT id FROM communities WHERE gid = ?", (tx.gid,))]
        community_ids += [c for c in stored if c not in keep]
    for community_id in community_ids:
        _delete_community(tx, community_id)


def _delete_row(tx: _Tx, scope: Scope, object_id: str) -> None:
    """The object's row, its text in the BM25 index and its vector."""
    row = tx.conn.execute(
        f"DELETE FROM {_TABLES[scope]} WHERE gid = ? AND id = ? RETURNING 1", (tx.gid, object_id)
    ).fetchone()
    if row is not None:
        tx.text(scope, object_id, None)
    _delete_vector(tx, scope, object_id)


def _delete_vector(tx: _Tx, scope: Scope, object_id: str) -> None:
    removed = tx.conn.execute(
        "DELETE FROM vectors WHERE gid = ? AND scope = ? AND id = ? RETURNING 1", (tx.gid, scope.value, object_id)
    ).fetchone()
    if removed is not None:
        tx.changes.append(IndexChange("vector", tx.group_id, scope.value, object_id, None))


def _delete_fact(tx: _Tx, fact_id: str) -> None:
    """A deleted fact takes its whole history with it (deletion is erasure, not a new version)."""
    tx.conn.execute("DELETE FROM fact_versions WHERE gid = ? AND fact_id = ?", (tx.gid, fact_id))
    tx.conn.execute("DELETE FROM fact_entities WHERE gid = ? AND fact_id = ?", (tx.gid, fact_id))
    tx.conn.execute("DELETE FROM fact_episodes WHERE gid = ? AND fact_id = ?", (tx.gid, fact_id))
    _delete_row(tx, Scope.FACTS, fact_id)


def _delete_entity(tx: _Tx, entity_id: str) -> None:
    for table in ("mentions", "community_members", "entity_names", "entity_labels"):
        tx.conn.execute(f"DELETE FROM {table} WHERE gid = ? AND entity_id = ?", (tx.gid, entity_id))
    _delete_row(tx, Scope.ENTITIES, entity_id)


def _delete_episode(tx: _Tx, episode_id: str) -> None:
    tx.conn.execute("DELETE FROM mentions WHERE gid = ? AND episode_id = ?", (tx.gid, episode_id))
    _delete_row(tx, Scope.EPISODES, episode_id)


def _delete_community(tx: _Tx, community_id: str) -> None:
    tx.conn.execute("DELETE FROM community_members WHERE gid = ? AND community_id = ?", (tx.gid, community_id))
    _delete_row(tx, Scope.COMMUNITIES, community_id)


# -- upserts ---------------------------------------------------------------------------------------


def _apply_upserts(tx: _Tx, batch: GraphWrite) -> None:
    for episode in batch.episodes:
        _upsert_episode(tx, episode, replace=True)
    for entity in batch.entities:
        _upsert_entity(tx, entity)
    _refuse_history_of_stored_facts(tx, batch)
    for fact in batch.facts:
        _upsert_fact(tx, fact)
    for version in batch.fact_history:
        _keep_version(tx, version)
    tx.conn.executemany(
        "INSERT OR IGNORE INTO mentions (gid, episode_id, entity_id) VALUES (?, ?, ?)",
        [(tx.gid, m.episode_id, m.entity_id) for m in batch.mentions],
    )
    for community in batch.communities:
        _upsert_community(tx, community)
    written = {
        Scope.EPISODES: {e.id for e in batch.episodes},
        Scope.ENTITIES: {e.id for e in batch.entities},
        Scope.FACTS: {f.id for f in batch.facts},
        Scope.COMMUNITIES: {c.id for c in batch.communities},
    }
    for scope, vectors in (
        (Scope.EPISODES, batch.episode_vectors),
        (Scope.ENTITIES, batch.entity_vectors),
        (Scope.FACTS, batch.fact_vectors),
        (Scope.COMMUNITIES, batch.community_vectors),
    ):
        for object_id, vector in vectors.items():
            _upsert_vector(tx, scope, object_id, vector, written[scope])


def _refuse_history_of_stored_facts(tx: _Tx, batch: GraphWrite) -> None:
    """A restored history is a stored fact's only one: restoring beside an existing history would
    interleave two of them (after this batch's deletions, so a deleted fact may be restored)."""
    restored = sorted({v.fact.id for v in batch.fact_history})
    if not restored:
        return
    stored = [r[0] for r in tx.conn.execute(
        "SELECT id FROM facts WHERE gid = ? AND id IN (SELECT value FROM json_each(?))", (tx.gid, dumps(restored))
    )]
    if stored:
        raise InvalidInputError(f"earlier versions restored for facts the group already holds: {sorted(stored)}")


def _reindex_text(tx: _Tx, scope: Scope, object_id: str, old: str | None, new: str) -> None:
    """Queue a BM25 update when the indexed text changed (an unchanged text costs nothing)."""
    if old != new:
        tx.text(scope, object_id, new)


def _previous(tx: _Tx, table: str, columns: str, object_id: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = tx.conn.execute(
        f"SELECT {columns} FROM {table} WHERE gid = ? AND id = ?", (tx.gid, object_id)
    ).fetchone()
    return row


def _upsert_episode(tx: _Tx, episode: Episode, *, replace: bool) -> bool:
    values = (
        tx.gid,
        episode.id,
        episode.kind.value,
        episode.content,
        episode.speaker,
        episode.role,
        to_us(episode.reference_time),
        to_us(episode.created_at),
        episode.source_description,
        dumps(episode.metadata),
        episode.status.value,
        episode.attempts,
        episode.last_error,
        dumps(episode.usage),
    )
    previous = _previous(tx, "episodes", "1, kind, content, speaker", episode.id)
    if previous is not None and not replace:
        return False
    conflict = (
        "DO UPDATE SET kind = excluded.kind, content = excluded.content, speaker = excluded.speaker, "
        "role = excluded.role, reference_time = excluded.reference_time, created_at = excluded.created_at, "
        "source_description = excluded.source_description, "  # metadata: set_episode_metadata's
        "status = excluded.status, attempts = excluded.attempts, last_error = excluded.last_error, "
        "usage = excluded.usage"
    )
    tx.conn.execute(
        "INSERT INTO episodes (gid, id, kind, content, speaker, role, reference_time, created_at, "
        "source_description, metadata, status, attempts, last_error, usage) "
        f"VALUES ({', '.join('?' * 14)}) ON CONFLICT (gid, id) {conflict}",
        values,
    )
    old_text = None if previous is None else _episode_text(previous[1], previous[2], previous[3])
    _reindex_text(tx, Scope.EPISODES, episode.id, old_text, episode.text)
    return True


def _episode_text(kind: str, content: str, speaker: str | None) -> str:
    return f"{speaker}: {content}" if kind == "message" and speaker else content


def _upsert_entity(tx: _Tx, entity: Entity) -> None:
    previous = _previous(tx, "entities", "1, name, summary", entity.id)
    if previous is None:
        tx.created.add((Scope.ENTITIES, entity.id))
    tx.conn.execute(
        "INSERT INTO entities (gid, id, name, labels, summary, aliases, attributes, created_at, summary_source) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (gid, id) DO UPDATE SET name = excluded.name, "
        "labels = excluded.labels, summary = excluded.summary, aliases = excluded.aliases, "
        "attributes = excluded.attributes, created_at = excluded.created_at, "
        "summary_source = excluded.summary_source",
        (
            tx.gid,
            entity.id,
            entity.name,
            dumps(list(entity.labels)),
            entity.summary,
            dumps(list(entity.aliases)),
            dumps(entity.attributes),
            to_us(entity.created_at),
            entity.summary_source,
        ),
    )
    old_text = None if previous is None else f"{previous[1]} {previous[2]}"
    _reindex_text(tx, Scope.ENTITIES, entity.id, old_text, f"{entity.name} {entity.summary}")
    for table, column, values in (
        ("entity_names", "normalized", entity.normalized_names),
        ("entity_labels", "label", set(entity.labels)),
    ):
        if previous is not None:
            tx.conn.execute(f"DELETE FROM {table} WHERE gid = ? AND entity_id = ?", (tx.gid, entity.id))
        tx.conn.executemany(
            f"INSERT INTO {table} (gid, entity_id, {column}) VALUES (?, ?, ?)",
            [(tx.gid, entity.id, value) for value in values],
        )


def _stored_fact(tx: _Tx, fact_id: str) -> Fact | None:
    row = _previous(tx, "facts", FACT_COLUMNS, fact_id)
    return None if row is None else fact_from_row(tx.group_id, row)


def _upsert_fact(tx: _Tx, incoming: Fact) -> None:
    """Write the fact's latest version; a change to what it says first keeps the stored version."""
    previous = _stored_fact(tx, incoming.id)
    revision = revise(previous, incoming)
    fact = revision.head
    if revision.closed is not None:
        _keep_version(tx, revision.closed)
    tx.conn.execute(
        "INSERT INTO facts (gid, id, source_id, target_id, other_entity_ids, relation_type, fact, episode_ids, "
        "attributes, valid_at, invalid_at, created_at, expired_at, sources, version, recorded_at) "
        f"VALUES ({', '.join('?' * 16)}) "
        "ON CONFLICT (gid, id) DO UPDATE SET source_id = excluded.source_id, target_id = excluded.target_id, "
        "other_entity_ids = excluded.other_entity_ids, relation_type = excluded.relation_type, "
        "fact = excluded.fact, episode_ids = excluded.episode_ids, attributes = excluded.attributes, "
        "valid_at = excluded.valid_at, invalid_at = excluded.invalid_at, created_at = excluded.created_at, "
        "expired_at = excluded.expired_at, sources = excluded.sources, version = excluded.version, "
        "recorded_at = excluded.recorded_at",
        (tx.gid, *_fact_values(fact)),
    )
    _reindex_text(tx, Scope.FACTS, fact.id, None if previous is None else previous.fact, fact.fact)
    if previous is None:
        tx.created.add((Scope.FACTS, fact.id))
    if previous is None or previous.entity_ids != fact.entity_ids:
        _replace_links(tx, "fact_entities", "entity_id", fact.id, fact.entity_ids, previous is not None)
    if previous is None or previous.episode_ids != fact.episode_ids:
        _replace_links(tx, "fact_episodes", "episode_id", fact.id, fact.episode_ids, previous is not None)
    tx.changes.append(IndexChange("times", tx.group_id, Scope.FACTS.value, fact.id, None, times=_fact_times(fact)))


def _fact_values(fact: Fact) -> tuple[object, ...]:
    """One version of a fact as the columns ``facts`` and ``fact_versions`` share, in their order."""
    return (
        fact.id,
        fact.source_id,
        fact.target_id,
        dumps(list(fact.other_entity_ids)),
        fact.relation_type,
        fact.fact,
        dumps(list(fact.episode_ids)),
        dumps(fact_attributes_column(fact)),
        to_us(fact.valid_at),
        to_us(fact.invalid_at),
        to_us(fact.created_at),
        to_us(fact.expired_at),
        dump_sources(fact.sources),
        fact.version,
        to_us(fact.recorded_at),
    )


def _keep_version(tx: _Tx, closed: FactVersion) -> None:
    """Append a replaced version to the fact's history, unchanged, with its end on T'."""
    fact = closed.fact
    tx.conn.execute(
        f"INSERT INTO fact_versions (gid, {VERSION_COLUMNS}, recorded_to) VALUES ({', '.join('?' * 17)})",
        (tx.gid, *_fact_values(fact), to_us(closed.recorded_to)),
    )


def _replace_links(tx: _Tx, table: str, column: str, fact_id: str, values: Iterable[str], existed: bool) -> None:
    """A fact's rows in a link table (a new fact has none to delete)."""
    if existed:
        tx.conn.execute(f"DELETE FROM {table} WHERE gid = ? AND fact_id = ?", (tx.gid, fact_id))
    rows = [(tx.gid, value, fact_id) for value in values]
    if rows:
        tx.conn.executemany(f"INSERT OR IGNORE INTO {table} (gid, {column}, fact_id) VALUES (?, ?, ?)", rows)


def _fact_times(fact: Fact) -> np.ndarray:
    return time_row(to_us(fact.valid_at), to_us(fact.invalid_at), to_us(fact.created_at), to_us(fact.expired_at))


def _stored_fact_times(tx: _Tx, fact_id: str) -> np.ndarray:
    row = _previous(tx, "facts", "valid_at, invalid_at, created_at, expired_at", fact_id)
    assert row is not None  # _upsert_vector checked the fact exists
    return time_row(*row)


def _upsert_community(tx: _Tx, community: Community) -> None:
    previous = _previous(tx, "communities", "1, name, summary", community.id)
    tx.conn.execute(
        "INSERT INTO communities (gid, id, name, summary, created_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (gid, id) DO UPDATE SET name = excluded.name, summary = excluded.summary, "
        "created_at = excluded.created_at",
        (tx.gid, community.id, community.name, community.summary, to_us(community.created_at)),
    )
    old_text = None if previous is None else f"{previous[1]} {previous[2]}"
    _reindex_text(tx, Scope.COMMUNITIES, community.id, old_text, f"{community.name} {community.summary}")
    tx.conn.execute("DELETE FROM community_members WHERE gid = ? AND community_id = ?", (tx.gid, community.id))
    tx.conn.executemany(
        "INSERT OR IGNORE INTO community_members (gid, community_id, entity_id, position) VALUES (?, ?, ?, ?)",
        [(tx.gid, community.id, entity_id, position) for position, entity_id in enumerate(community.member_ids)],
    )


def _upsert_vector(tx: _Tx, scope: Scope, object_id: str, vector: np.ndarray, written: set[str]) -> None:
    """Store a unit vector for an object of this group (refused for unknown ids and odd dimensions)."""
    if object_id not in written and _previous(tx, _TABLES[scope], "1", object_id) is None:
        raise InvalidInputError(f"{scope.value} vector for {object_id!r}, which is not in group {tx.group_id!r}")
    blob = vector_blob(vector)
    if scope not in tx.vector_bytes:  # one group, one scope: one dimension (looked up once per batch)
        row = tx.conn.execute(
            "SELECT length(vec) FROM vectors WHERE gid = ? AND scope = ? LIMIT 1", (tx.gid, scope.value)
        ).fetchone()
        tx.vector_bytes[scope] = len(blob) if row is None else row[0]
    if tx.vector_bytes[scope] != len(blob):
        raise InvalidInputError(
            f"{scope.value} vector of dimension {len(blob) // 4} for {object_id!r}; "
            f"this group's are {tx.vector_bytes[scope] // 4}"
        )
    stored = (
        None
        if (scope, object_id) in tx.created
        else tx.conn.execute(
            "SELECT vec FROM vectors WHERE gid = ? AND scope = ? AND id = ?", (tx.gid, scope.value, object_id)
        ).fetchone()
    )
    if stored is not None and stored[0] == blob:
        return  # re-sent unchanged (a fact re-written with new timestamps): nothing to write or reindex
    tx.conn.execute(
        "INSERT INTO vectors (gid, scope, id, vec) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (gid, scope, id) DO UPDATE SET vec = excluded.vec",
        (tx.gid, scope.value, object_id, blob),
    )
    times = _stored_fact_times(tx, object_id) if scope is Scope.FACTS else None
    tx.changes.append(
        IndexChange("vector", tx.group_id, scope.value, object_id, np.frombuffer(blob, dtype=np.float32), times)
    )
