"""Entity resolution, the pure part: name keys, similarity signals and the match/ask/new decision.

A merge without a model needs evidence (docs/design.md §2, step 4), one of:

- the two names are equal under the conservative :func:`~chronomem.text.names.name_key` (case, spacing,
  accents, typographic variants, a leading article, a leading "St." for Saint, ...);
- one is the other with a legal form ("Google LLC" / "Google"), the bare one written as a proper
  name (capitalized: "apple" the fruit is not "Apple Inc."), and no name of the entity carries a
  different form ("Acme Ltd" and "Acme Inc" are never merged, not even through a bare "Acme");
- the name is an alias of the entity, or the episode itself gives the extracted entity an alias that
  names an existing one ("International Business Machines (IBM)" then "IBM", either order). Such a
  declared alias is kept only if the episode contains it (``stages.entities``).

A match that points at two different entities is no evidence for either. Look-alikes are not evidence:
"UA 1234" and "UA 1235", "Windows 10" and "11", "Henry VII" and "VIII", "C#" and "C" differ in what
they name, however close their spelling or embedding. So a similar spelling, a similar embedding, a
partial name or a nickname only makes a name *ambiguous*: it goes, with its few best candidates, to
the one batched model call (none is configured: a new entity). So does another name of the same
place in the GeoNames gazetteer ("München" for "Munich", :mod:`chronomem.ingest.places`): an exonym
is found even where no embedding brings it close, but it is not merged on the gazetteer's word, since
the mention may not be the place ("Torino" may be the Ford). No signal at all makes a new entity.
Graphiti asks the model about every extracted entity; here a repeated name costs nothing.

The share of merges this gets right is measured on a labelled set of look-alike pairs by
``bench/resolution.py`` (``bench/data/resolution_pairs.json``). Everything here is pure: candidates
are gathered by the stage (cosine and BM25 over the store) and passed in.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from rapidfuzz import fuzz

from chronomem.domain import Entity
from chronomem.ingest.ontology import GENERIC_LABEL
from chronomem.ingest.places import place_of
from chronomem.ingest.prompts import ExtractedEntity
from chronomem.text.names import name_key, split_legal_form

__all__ = [
    "Candidate",
    "EntityDecision",
    "ResolutionThresholds",
    "Verdict",
    "decide",
    "exact_match",
    "labels_compatible",
    "match_key",
    "merge_extracted",
    "name_tokens",
    "names_of",
    "same_name",
    "same_place",
    "search_query",
]

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


def match_key(name: str) -> str:
    """The form two names must share to merge without a model: :func:`~chronomem.text.names.name_key`."""
    return name_key(name)


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
    """When a candidate is worth asking the model about (never a merge: that takes equal names)."""

    fuzzy_ambiguous: float = 0.75
    embedding_ambiguous: float = 0.80
    max_candidates: int = 5
    place_names: bool = True  # another name of the place the gazetteer knows by this name


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


def names_of(entity: Entity) -> tuple[str, ...]:
    return (entity.name, *entity.aliases)


def _proper(name: str) -> bool:
    """Written as a proper name, with a capital ("Apple", "eBay"), not as a common noun ("apple")."""
    return any(c.isupper() for c in name)


def _same_but_legal_form(name: str, names: Sequence[str]) -> bool:
    """``name`` is one of ``names`` with or without a legal form, and the names know no other form."""
    bare, form = split_legal_form(name)
    forms = {f for f in (split_legal_form(n)[1] for n in names) if f is not None}
    if form is not None:  # "Google LLC" against a bare "Google"
        return not forms - {form} and any(name_key(n) == bare and _proper(n) for n in names)
    # a bare "Google" against "Google LLC": one form only, else the bare name could be either company
    return len(forms) == 1 and _proper(name) and any(split_legal_form(n)[0] == bare for n in names)


def same_place(name: str, entity: Entity) -> bool:
    """Does the gazetteer know ``name`` and one of ``entity``'s names as names of one place (and of
    no other)? A reason to ask the model, never a merge: the mention may not be the place."""
    place = place_of(name)
    return place is not None and any(place_of(other) == place for other in names_of(entity))


def same_name(name: str, entity: Entity) -> bool:
    """Does ``name`` name ``entity`` by itself: the same key as one of its names, or a legal form apart?"""
    key = match_key(name)
    return any(match_key(other) == key for other in names_of(entity)) or _same_but_legal_form(
        name, names_of(entity))


def exact_match(
    name: str, aliases: Sequence[str], labels: Sequence[str], entities: Sequence[Entity]
) -> Entity | None:
    """The entity of ``entities`` (oldest first) that ``name`` or its declared ``aliases`` name, or ``None``.

    In order: the same name (the oldest such entity: an earlier write may have left two); the same
    but for a legal form; a declared alias equal to one of its names. The last two only when exactly
    one entity qualifies: "Acme" with both "Acme Ltd" and "Acme Inc" known goes to the model.
    """
    compatible = [e for e in entities if labels_compatible(labels, e.labels)]
    key = match_key(name)
    same = next((e for e in compatible if any(match_key(n) == key for n in names_of(e))), None)
    if same is not None:
        return same
    by_legal_form = {e.id: e for e in compatible if _same_but_legal_form(name, names_of(e))}
    if by_legal_form:
        return _only(by_legal_form)
    return _only({e.id: e for e in compatible if any(same_name(alias, e) for alias in aliases)})


def _only(found: dict[str, Entity]) -> Entity | None:
    return next(iter(found.values())) if len(found) == 1 else None


def decide(
    name: str, labels: Sequence[str], candidates: Sequence[Candidate], thresholds: ResolutionThresholds
) -> EntityDecision:
    """Match (the same name), ask (a resemblance) or create, for a name the exact lookup did not bind."""
    compatible = [c for c in candidates if labels_compatible(labels, c.entity.labels)]
    same = exact_match(name, (), labels, [c.entity for c in compatible])  # a bare name of two companies: ask
    if same is not None:
        return EntityDecision(Verdict.MATCH, match=same, reason="the same name")
    scored = []
    for candidate in compatible:
        fuzzy = _fuzzy(name, candidate.entity)
        cosine = candidate.cosine if candidate.cosine is not None else 0.0
        if thresholds.place_names and same_place(name, candidate.entity):
            scored.append((3.0, candidate.entity))  # the same place under another name: asked first
        elif fuzzy >= thresholds.fuzzy_ambiguous or cosine >= thresholds.embedding_ambiguous:
            scored.append((1.0 + max(fuzzy, cosine), candidate.entity))
        elif _partial(name, candidate.entity):
            scored.append((1.0 + fuzzy / 10, candidate.entity))
    if not scored:
        return EntityDecision(Verdict.NEW, reason="no candidate resembles the name")
    scored.sort(key=lambda pair: -pair[0])
    ambiguous = tuple(entity for _, entity in scored[: thresholds.max_candidates])
    return EntityDecision(Verdict.AMBIGUOUS, candidates=ambiguous, reason="similar or partial name, or the same place")


def merge_extracted(entities: Iterable[ExtractedEntity]) -> list[ExtractedEntity]:
    """One entry per distinct name of an episode, first mention first; a specific type beats "Entity",
    the aliases of every mention are kept."""
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
        aliases = list(dict.fromkeys((*kept.aliases, *entity.aliases)))
        merged[key] = kept.model_copy(update={
            "type": kind, "aliases": aliases, "attributes": {**entity.attributes, **kept.attributes}})
    return list(merged.values())
