"""Fact resolution, the pure part: which existing facts a new fact may duplicate or contradict.

docs/design.md §2, step 6. Duplicates are looked for **only among facts between the same entity pair**;
contradiction candidates **only among facts sharing an endpoint, in the same role (same source or
same target), and close in meaning**. Graphiti
compares against the whole group and unrelated facts retire each other; here a fact about Alice's
dog cannot end her job. Three cases need no model at all:

- identical text between the same pair: a restatement, the old fact gains provenance;
- a single-valued relation (ontology) with the same source: same target is a restatement, another
  target contradicts;
- no candidate at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from chronomem.domain import Fact
from chronomem.text.names import normalize_name

__all__ = [
    "FactCandidates",
    "FactOutcome",
    "identical_fact",
    "same_pair",
    "same_participants",
    "same_relation",
    "same_role",
    "select_candidates",
    "shares_endpoint",
    "single_valued_outcome",
]


def same_pair(a: Fact, b: Fact) -> bool:
    """Facts that may restate each other: the same two ends (either way), or the same participants.
    A further participant that one text names and the other does not ("Caroline went to the support
    group with Melanie" / "Caroline went to the support group") leaves the question to resolution."""
    return {a.source_id, a.target_id} == {b.source_id, b.target_id} or same_participants(a, b)


def same_participants(a: Fact, b: Fact) -> bool:
    """The same two entities, or for a hyperedge the same set of them."""
    return set(a.entity_ids) == set(b.entity_ids)


def shares_endpoint(a: Fact, b: Fact) -> bool:
    return bool(set(a.entity_ids) & set(b.entity_ids))


# the relation type a fact gets when none was given: it says nothing of what the fact is
GENERIC_RELATION = "RELATES_TO"


def same_relation(a: Fact, b: Fact) -> bool:
    """The facts name the same relation, other than the generic ``RELATES_TO``: a small model gives
    that to nearly every fact, and two such facts ("Ana's husband is Rui", "Ana and Rui moved to
    Porto") are no values of one thing."""
    return a.relation_type == b.relation_type != GENERIC_RELATION


def same_role(a: Fact, b: Fact) -> bool:
    """The facts share an entity in the same role: the same source (Alice works at X / Alice works at Y)
    or the same target (Bob manages Acme / Carol manages Acme)."""
    return a.source_id == b.source_id or a.target_id == b.target_id


def identical_fact(new: Fact, existing: Sequence[Fact]) -> Fact | None:
    """An existing fact of the same participants whose text is the same once normalized."""
    key = normalize_name(new.fact)
    for fact in existing:
        if same_participants(new, fact) and normalize_name(fact.fact) == key:
            return fact
    return None


@dataclass(frozen=True, slots=True)
class FactOutcome:
    """What becomes of a new fact: a restatement of ``duplicate_of``, or new and closing ``contradicts``."""

    duplicate_of: Fact | None = None
    contradicts: tuple[Fact, ...] = ()


def single_valued_outcome(new: Fact, existing: Sequence[Fact]) -> FactOutcome:
    """For a single-valued relation: the current value, restated or replaced (no model involved)."""
    same_relation = [
        f for f in existing
        if f.relation_type == new.relation_type and f.source_id == new.source_id and f.expired_at is None
    ]
    for fact in same_relation:
        if fact.target_id == new.target_id:
            return FactOutcome(duplicate_of=fact)
    return FactOutcome(contradicts=tuple(f for f in same_relation if f.target_id != new.target_id))


@dataclass(frozen=True, slots=True)
class FactCandidates:
    duplicates: tuple[Fact, ...] = ()  # same pair, close enough to restate the new fact
    contradictions: tuple[Fact, ...] = field(default=())  # share an endpoint and close in meaning

    def __bool__(self) -> bool:
        return bool(self.duplicates or self.contradictions)


def select_candidates(
    new: Fact,
    existing: Sequence[Fact],
    similarity: Mapping[str, float],
    *,
    duplicate_similarity: float,
    contradiction_similarity: float,
    same_relation_similarity: float,
    limit: int,
) -> FactCandidates:
    """The existing facts worth asking the model about, best first (current facts only).

    ``similarity``: cosine of each existing fact's embedding to the new fact's.

    "Close in meaning" is a fact-embedding cosine above a bound, or a lower one when the relation
    type is the same (a relation type is itself a strong signal of meaning).
    """
    scored: list[tuple[float, Fact]] = []
    for fact in existing:
        if fact.id == new.id or fact.expired_at is not None or fact.id not in similarity:
            continue
        scored.append((similarity[fact.id], fact))
    scored.sort(key=lambda pair: -pair[0])

    def close(score: float, fact: Fact, bound: float) -> bool:
        return score >= bound or (fact.relation_type == new.relation_type and score >= same_relation_similarity)

    duplicates = [f for s, f in scored if same_pair(new, f) and close(s, f, duplicate_similarity)]
    contradictions = [
        f for s, f in scored
        if same_role(new, f) and close(s, f, contradiction_similarity) and f not in duplicates
    ]
    return FactCandidates(tuple(duplicates[:limit]), tuple(contradictions[:limit]))
