"""Entity resolution, the pure part: name keys, similarity signals and the match/ask/new decision.

Deterministic first (DESIGN §2, step 4): an exact normalized name or alias, a near-identical spelling
(fuzzy ratio) or a near-identical name embedding merges without a model. Weaker signals (a partial
name, a nickname, a similar spelling or embedding) make a name *ambiguous*: it goes, with its few
best candidates, to the one batched model call. No signal at all makes a new entity. Graphiti asks
the model about every extracted entity; here a repeated exact name costs nothing.

Everything here is pure: candidates are gathered by the stage (cosine and BM25 over the store) and
passed in.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from rapidfuzz import fuzz

from chronomem.domain import Entity, normalize_name
from chronomem.ingest.ontology import GENERIC_LABEL
from chronomem.ingest.prompts import ExtractedEntity

__all__ = [
    "Candidate",
    "EntityDecision",
    "ResolutionThresholds",
    "Verdict",
    "decide",
    "labels_compatible",
    "match_key",
    "merge_extracted",
    "name_tokens",
    "search_query",
]

_ARTICLES = ("the ", "a ", "an ")
_STOPWORDS = frozenset({"the", "a", "an", "of", "and", "my", "our", "his", "her", "their", "for", "to", "in", "at"})

# Nickname groups of common English given names: a nickname is a *candidate* signal, never a merge.
_NICKNAMES = (
    "robert bob bobby rob robbie", "william bill billy will willy liam", "james jim jimmy jamie",
    "michael mike mikey mick", "elizabeth liz lizzie beth betty eliza", "katherine catherine kate katie cathy",
    "thomas tom tommy", "richard rick ricky dick rich", "david dave davy", "daniel dan danny",
    "joseph joe joey", "samuel samantha sam sammy", "alexander alexandra alex", "christopher christine chris",
    "matthew matt", "nicholas nick nicky", "anthony tony", "steven stephen steve", "benjamin ben benny",
    "edward ed eddie ted", "jennifer jen jenny", "margaret meg maggie peggy", "susan sue susie",
    "andrew andy drew", "gregory greg", "patrick patricia pat", "nathan nathaniel nate", "melanie melissa mel",
    "caroline carrie caro", "jonathan jon johnny john", "charles charlie chuck", "theodore theo teddy",
)
_CANONICAL = {alias: group.split()[0] for group in _NICKNAMES for alias in group.split()}


@functools.lru_cache(maxsize=65536)
def match_key(name: str) -> str:
    """The exact-match form: :func:`normalize_name` without a leading article ("The Acme" = "acme")."""
    key = normalize_name(name)
    for article in _ARTICLES:
        if key.startswith(article) and len(key) > len(article):
            return key[len(article) :]
    return key


@functools.lru_cache(maxsize=65536)
def name_tokens(name: str) -> frozenset[str]:
    """Content words of a name, nicknames mapped to their given name ("Bob" → {"robert"})."""
    return frozenset(_CANONICAL.get(t, t) for t in match_key(name).split() if t not in _STOPWORDS)


def search_query(name: str) -> str:
    """Full-text query for a name: its words plus the given names its nicknames stand for."""
    words = match_key(name).split()
    extra = [_CANONICAL[w] for w in words if w in _CANONICAL and _CANONICAL[w] != w]
    return " ".join(dict.fromkeys(words + extra))


def labels_compatible(a: Iterable[str], b: Iterable[str]) -> bool:
    """Generic entities match anything; two typed entities must share a type."""
    specific_a, specific_b = set(a) - {GENERIC_LABEL}, set(b) - {GENERIC_LABEL}
    return not specific_a or not specific_b or bool(specific_a & specific_b)


@dataclass(frozen=True, slots=True)
class ResolutionThresholds:
    fuzzy_merge: float = 0.92
    embedding_merge: float = 0.95
    fuzzy_ambiguous: float = 0.75
    embedding_ambiguous: float = 0.80
    max_candidates: int = 5


@dataclass(frozen=True, slots=True)
class Candidate:
    """An existing entity found for a name, with its name-embedding cosine (``None`` if unknown)."""

    entity: Entity
    cosine: float | None = None


class Verdict(StrEnum):
    MATCH = "match"  # deterministic merge into ``match``
    AMBIGUOUS = "ambiguous"  # ask the model among ``candidates``
    NEW = "new"


@dataclass(frozen=True, slots=True)
class EntityDecision:
    verdict: Verdict
    match: Entity | None = None
    candidates: tuple[Entity, ...] = ()
    reason: str = ""


def _fuzzy(name: str, entity: Entity) -> float:
    key = match_key(name)
    return max(fuzz.ratio(key, match_key(other)) for other in (entity.name, *entity.aliases)) / 100.0


def _partial(name: str, entity: Entity) -> bool:
    """One name's words are a subset of the other's (after nicknames): "Bob" / "Robert Smith"."""
    mine = name_tokens(name)
    if not mine:
        return False
    for other in (entity.name, *entity.aliases):
        theirs = name_tokens(other)
        if theirs and (mine <= theirs or theirs <= mine):
            return True
    return False


def decide(
    name: str, labels: Sequence[str], candidates: Sequence[Candidate], thresholds: ResolutionThresholds
) -> EntityDecision:
    """Match, ask or create, for a name that had no exact match."""
    scored = []
    for candidate in candidates:
        if not labels_compatible(labels, candidate.entity.labels):
            continue
        fuzzy = _fuzzy(name, candidate.entity)
        cosine = candidate.cosine if candidate.cosine is not None else 0.0
        if fuzzy >= thresholds.fuzzy_merge or cosine >= thresholds.embedding_merge:
            scored.append((2.0 + max(fuzzy, cosine), candidate.entity))
        elif fuzzy >= thresholds.fuzzy_ambiguous or cosine >= thresholds.embedding_ambiguous:
            scored.append((1.0 + max(fuzzy, cosine), candidate.entity))
        elif _partial(name, candidate.entity):
            scored.append((1.0 + fuzzy / 10, candidate.entity))
    if not scored:
        return EntityDecision(Verdict.NEW, reason="no candidate resembles the name")
    scored.sort(key=lambda pair: -pair[0])
    best_score, best = scored[0]
    if best_score >= 2.0:
        return EntityDecision(Verdict.MATCH, match=best, reason="near-identical name")
    ambiguous = tuple(entity for _, entity in scored[: thresholds.max_candidates])
    return EntityDecision(Verdict.AMBIGUOUS, candidates=ambiguous, reason="similar or partial name")


def merge_extracted(entities: Iterable[ExtractedEntity]) -> list[ExtractedEntity]:
    """One entry per distinct name of an episode, first mention first; a specific type beats "Entity"."""
    merged: dict[str, ExtractedEntity] = {}
    for entity in entities:
        name = re.sub(r"\s+", " ", entity.name).strip()
        key = match_key(name)
        if not key:
            continue
        if key not in merged:
            merged[key] = entity.model_copy(update={"name": name})
            continue
        kept = merged[key]
        kind = kept.type if kept.type != GENERIC_LABEL else entity.type
        merged[key] = kept.model_copy(update={"type": kind, "attributes": {**entity.attributes, **kept.attributes}})
    return list(merged.values())
