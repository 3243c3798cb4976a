"""The Cypher of the FalkorDB backend: schema, filters and the reusable query fragments.

Query texts depend only on the *shape* of a request (which filters are present), never on its
values, which travel as ``$parameters``; FalkorDB caches one plan per distinct text.
Labels and property names below are constants of this module.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chronomem.filters import SearchFilters, TimeRange
from chronomem.store.base import Scope
from chronomem.store.falkordb.records import (
    COMMUNITY_FIELDS,
    ENTITY_FIELDS,
    EPISODE_FIELDS,
    FACT_FIELDS,
    to_micros,
)
from chronomem.timeutil import utc_now

__all__ = [
    "FULLTEXT_INDEXES",
    "LABELS",
    "RANGE_INDEXES",
    "VECTOR_LINK",
    "VERSION_LINK",
    "FactFilter",
    "columns",
    "entity_label_condition",
    "vector_index_statement",
    "vector_label",
]

LABELS = {Scope.EPISODES: "Episode", Scope.ENTITIES: "Entity", Scope.FACTS: "Fact", Scope.COMMUNITIES: "Community"}


def vector_label(label: str) -> str:
    """Embeddings live on holder nodes (:FactVec {id, emb}) that are created once and never updated:
    on FalkorDB 4.16.3, overwriting or clearing an indexed vector property leaves the HNSW index
    stale (searches keep finding the old vector, or lose the node). A new vector replaces the
    holder node instead."""
    return f"{label}Vec"


# The one relationship of the layout: (:Fact)-[:HAS_VECTOR]->(:FactVec), created with the holder.
# Following it costs a fraction of a lookup by id (≈ 1 µs against ≈ 4 µs on FalkorDB 4.16.3),
# which is what ranking thousands of facts exactly, or joining HNSW candidates, spends its time on.
# A graph whose every holder has its link has as many links as holders (see graph_reads).
VECTOR_LINK = "HAS_VECTOR"
# (:Fact)-[:HAS_VERSION]->(:FactVersion): the earlier versions of a fact (append-only history).
VERSION_LINK = "HAS_VERSION"

_FIELDS = {"Episode": EPISODE_FIELDS, "Entity": ENTITY_FIELDS, "Fact": FACT_FIELDS, "Community": COMMUNITY_FIELDS}

# Exact-match lookups. Entity names are looked up through `norm_names` (an array index), never with
# `name IN $names`: FalkorDB 4.16.3 segfaults on that shape when `name` also has a full-text index
# with stop words (see docs/falkordb.md).
# `Fact.valid_from` and `Fact.created_at` bound the facts a point in time (as_of, known_at) can
# admit; see FactFilter.bound. A graph gets `valid_from` on every fact before its index exists
# (SchemaManager), so the index's presence says the bound is safe to use.
RANGE_INDEXES = (
    ("Episode", "id"), ("Episode", "status"), ("Entity", "id"), ("Entity", "norm_names"),
    ("Fact", "id"), ("Fact", "entity_ids"), ("Fact", "episode_ids"), ("Fact", "valid_from"), ("Fact", "created_at"),
    ("Community", "id"), ("Mention", "episode_id"), ("Mention", "entity_id"),
    *((vector_label(label), "id") for label in LABELS.values()),
)
# Full-text indexes are created without stop words: "The" or "It" are real entity names, and an
# empty stop-word list is the other half of the guard against the crash above.
# They index accent-folded copies (see fulltext.fold), so "cafe" finds "Café".
FULLTEXT_INDEXES = (
    ("Episode", ("text_ft",)), ("Entity", ("name_ft", "summary_ft")), ("Fact", ("fact_ft",)),
    ("Community", ("name_ft", "summary_ft")),
)
HNSW_M, HNSW_EF_CONSTRUCTION = 16, 200


def vector_index_statement(label: str, dimension: int, ef_runtime: int) -> str:
    # Index DDL takes no parameters; label comes from LABELS and dimension is a checked int.
    if label not in {vector_label(x) for x in _FIELDS} or not all(
        isinstance(n, int) and n > 0 for n in (dimension, ef_runtime)
    ):
        raise ValueError(f"bad vector index request: {label!r}, {dimension!r}, {ef_runtime!r}")
    return (
        f"CREATE VECTOR INDEX FOR (n:{label}) ON (n.emb) OPTIONS {{dimension:{dimension}, "
        f"similarityFunction:'cosine', M:{HNSW_M}, efConstruction:{HNSW_EF_CONSTRUCTION}, "
        f"efRuntime:{ef_runtime}}}"
    )


def columns(label: str, alias: str) -> str:
    """``alias.f1, alias.f2, …`` in the order the record decoders expect."""
    return ", ".join(f"{alias}.{name}" for name in _FIELDS[label])


class FactFilter:
    """Translates :class:`SearchFilters` into a WHERE condition over a fact node, plus parameters.

    ``labels`` needs the endpoints' labels, which are not on the fact: :meth:`clauses` adds the two
    optional matches that bring them in, and ``known_at`` the fact's version held then.

    ``bound`` is, for a point in time, a looser condition that a range index answers, as
    (indexed property, condition): every fact the filters admit satisfies it. The condition
    itself spells nulls out (``valid_at IS NULL OR …``), a shape FalkorDB's planner answers with
    a label scan.
    """

    def __init__(self, filters: SearchFilters | None, *, alias: str = "f", default_current: bool = True) -> None:
        self.alias = alias
        self.params: dict[str, Any] = {}
        self._conditions: list[str] = []
        self.labels: tuple[str, ...] | None = None
        self.bound: tuple[str, str] | None = None
        self._known = ""
        if filters is None:
            if default_current:
                self._current(utc_now())
            return
        self._build(filters)

    def _param(self, name: str, value: Any) -> str:
        self.params[f"flt_{name}"] = value
        return f"$flt_{name}"

    def _current(self, now: datetime) -> None:
        f = self.alias
        now_p = self._param("now", to_micros(now))
        self._conditions.append(f"{f}.expired_at IS NULL AND ({f}.invalid_at IS NULL OR {f}.invalid_at > {now_p})")

    def _range(self, name: str, time_range: TimeRange) -> None:
        prop = f"{self.alias}.{name}"
        bounds = [f"{prop} IS NOT NULL"]
        if time_range.start is not None:
            bounds.append(f"{prop} >= {self._param(name + '_start', to_micros(time_range.start))}")
        if time_range.end is not None:
            bounds.append(f"{prop} < {self._param(name + '_end', to_micros(time_range.end))}")
        inside = " AND ".join(bounds)
        self._conditions.append(f"({prop} IS NULL OR ({inside}))" if time_range.include_null else f"({inside})")

    def _between(self, name: str, start: str, end: str, at: datetime) -> None:
        f, at_p = self.alias, self._param(name, to_micros(at))
        self._conditions.append(
            f"({f}.{start} IS NULL OR {f}.{start} <= {at_p}) AND ({f}.{end} IS NULL OR {at_p} < {f}.{end})"
        )

    def _build(self, filters: SearchFilters) -> None:
        if filters.known_at is None:
            self._conditions += self._clauses(filters, self.alias)
        else:
            self._known = self._as_known(filters)
        if filters.as_of is not None:
            self.bound = ("valid_from", f"{self.alias}.valid_from <= $flt_as_of")
        if filters.known_at is not None:
            # created_at is never null and the same in every version (valid_at may be corrected)
            self.bound = ("created_at", f"{self.alias}.created_at <= $flt_known_at")
            self._conditions.append(self.bound[1])
        if filters.labels is not None:
            self.labels = filters.labels
            self.params["flt_labels"] = list(filters.labels)

    def _as_known(self, filters: SearchFilters) -> str:
        """Clauses judging the fact as the version held at known_at: the node itself when its latest
        version was recorded by then, else its earlier version in force then (at most one). FalkorDB
        4.16 takes no pattern comprehension in WHERE, hence a clause rather than a condition."""
        f, t = self.alias, self._param("known_at", to_micros(filters.known_at))
        latest = " AND ".join(self._clauses(filters, f)) or "true"
        earlier = " AND ".join(self._clauses(filters, "kv")) or "true"
        return (f" OPTIONAL MATCH ({f})-[:{VERSION_LINK}]->(kv:FactVersion) WHERE kv.recorded_to > {t} "
                f"AND kv.recorded_at <= {t} WITH {{carry}}, kv WHERE (kv IS NULL AND "
                f"coalesce({f}.recorded_at, {f}.created_at) <= {t} AND {latest}) OR (kv IS NOT NULL AND {earlier}) "
                "WITH {carry}")

    def _clauses(self, filters: SearchFilters, alias: str) -> list[str]:
        """The conditions of every filter but labels, on the fact (or version) node ``alias``."""
        saved, self.alias, self._conditions = (self.alias, self._conditions), alias, []
        try:
            if filters.relation_types is not None:
                self._conditions.append(f"{alias}.relation_type IN {self._param('rel', list(filters.relation_types))}")
            for name in ("valid_at", "invalid_at", "created_at", "expired_at"):
                time_range: TimeRange | None = getattr(filters, name)
                if time_range is not None:
                    self._range(name, time_range)
            if filters.as_of is not None:
                self._between("as_of", "valid_at", "invalid_at", filters.as_of)
            if filters.known_at is not None:
                t = self._param("known_at", to_micros(filters.known_at))
                if filters.as_of is None:  # alone, known_at keeps what was current then (see filters)
                    self._between("known_at", "created_at", "expired_at", filters.known_at)
                else:
                    self._conditions.append(f"{alias}.created_at <= {t}")
            if filters.current_only:
                self._current(filters.effective_now())
            return self._conditions
        finally:
            self.alias, self._conditions = saved

    def condition(self) -> str:
        """The conditions joined with AND (``true`` when there are none)."""
        return " AND ".join(f"({c})" for c in self._conditions) or "true"

    def clauses(self, carry: str) -> str:
        """Clauses after the WHERE of :meth:`condition` ('' if none are needed): the version held at
        ``known_at``, and labels (facts whose source or target has a wanted label).

        ``carry`` lists the variables the rest of the query needs (the fact alias among them).
        """
        known = self._known.replace("{carry}", carry)
        if self.labels is None:
            return known
        f = self.alias
        return known + (
            f" OPTIONAL MATCH (ls:Entity {{id: {f}.source_id}}) OPTIONAL MATCH (lt:Entity {{id: {f}.target_id}})"
            f" WITH {carry}, ls, lt WHERE any(l IN coalesce(ls.labels, []) + coalesce(lt.labels, [])"
            " WHERE l IN $flt_labels)"
            f" WITH {carry}"
        )


def entity_label_condition(filters: SearchFilters | None, alias: str, params: dict[str, Any]) -> str:
    """The entity side of ``labels``: entities carrying any of them."""
    if filters is None or filters.labels is None:
        return "true"
    params["flt_labels"] = list(filters.labels)
    return f"any(l IN {alias}.labels WHERE l IN $flt_labels)"

