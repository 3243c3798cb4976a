"""Stage 4, entity resolution: deterministic matches, candidates by cosine and BM25, and the
batched answers for ambiguous names (given by their own call, or folded into fact extraction)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from rapidfuzz import fuzz

from chronomem.domain import Entity
from chronomem.ingest.apposition import holder_named
from chronomem.ingest.grounding import is_named
from chronomem.ingest.ontology import GENERIC_LABEL
from chronomem.ingest.places import names_of_place, place_of, places_named_in
from chronomem.ingest.places import ready as places_ready
from chronomem.ingest.prompts import (
    ENTITY_RESOLUTION,
    CandidateEntity,
    EntityMatch,
    EntityQuestion,
    EntityResolutionContext,
    EpisodeText,
    ExtractedEntity,
    ExtractedFact,
)
from chronomem.ingest.resolution import (
    Candidate,
    EntityDecision,
    ResolutionThresholds,
    Verdict,
    decide,
    exact_match,
    match_key,
    merge_extracted,
    name_tokens,
    names_of,
    same_place,
    search_query,
)
from chronomem.ingest.session import Session, stage
from chronomem.store.base import Scope
from chronomem.text.codes import codes_in
from chronomem.text.names import split_legal_form
from chronomem.text.organisations import organisations_named_in
from chronomem.text.timeparse import parse_time
from chronomem.text.titles import is_a_title

__all__ = [
    "NamedEntity",
    "ResolvedEntities",
    "named_entities",
    "resolve_entities",
    "resolve_left_out",
]


# -- 4. entity resolution ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NamedEntity:
    """An entity as extracted (by a model, a mapping or ``add_fact``), with its validated labels."""

    name: str
    labels: tuple[str, ...] = (GENERIC_LABEL,)
    attributes: dict[str, object] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()  # other names the episode gives it (grounded in its text)


def named_entities(
    session: Session, extracted: Iterable[ExtractedEntity], *, trusted: bool, text: EpisodeText | None = None
) -> list[NamedEntity]:
    """Merge an episode's mentions of one name, and keep only the types and attributes the ontology knows.

    ``trusted`` types (a declared JSON mapping, an ``add_fact`` call) are kept even if undeclared.
    With the episode's ``text`` (a model extracted the names), a name the current and previous
    messages do not contain is rejected: the model invented it; so is an alias the current message
    does not contain (:func:`_grounded_aliases`).
    """
    result = []
    messages = (text.current, *text.previous) if text is not None else ()
    merged = merge_extracted(extracted)
    names = {match_key(e.name) for e in merged}
    for entity in merged:
        if text is not None and not is_named(entity.name, messages):
            session.reject("entity", f"{entity.name!r} is named nowhere in the messages")
            continue
        if text is not None and _is_a_date(entity.name, text.reference_time):
            session.reject("entity", f"{entity.name!r} is a date: dates become the timestamps of facts")
            continue
        aliases = tuple(entity.aliases)
        apart: tuple[str, ...] = ()
        if text is not None:
            aliases = _grounded_aliases(session, entity.name, aliases, text.current, names)
            apart = tuple(a for a in aliases if _named_apart(entity.name, a, text.current))
            for alias in apart:
                session.warn(f"alias {alias!r} of {entity.name!r} made an entity of its own: the message "
                             "names the shorter name apart from it")
                names.add(match_key(alias))
            aliases = tuple(a for a in aliases if a not in apart)
        labels = session.ontology.entity_labels(entity.type)
        if trusted and entity.type != GENERIC_LABEL and entity.type not in labels:
            labels = (GENERIC_LABEL, entity.type)
        attributes = session.ontology.entity_attributes(labels, entity.attributes)
        if trusted and not attributes:
            attributes = dict(entity.attributes)
        result.append(NamedEntity(entity.name, labels, attributes, aliases))
        result.extend(NamedEntity(alias, labels) for alias in apart)
    if text is not None:
        result.extend(_left_out(session, "code", codes_in(text.current), result))
        if session.config.place_names:
            result.extend(_left_out(session, "place", places_named_in(text.current), result))
        # not beside a shorter name the model gave it ("Westcombe" for "Westcombe Academy"): that one is it
        shorter = [n for entity in result for n in (entity.name, *entity.aliases)]
        said = [name for name in organisations_named_in(text.current) if not any(is_named(n, [name]) for n in shorter)]
        result.extend(_left_out(session, "organisation", said, result))
    session.entities_extracted = len(result)
    return result


def _left_out(session: Session, kind: str, said: Sequence[str], named: Sequence[NamedEntity]) -> list[NamedEntity]:
    """The codes (a flight, a booking reference: :mod:`chronomem.text.codes`), places (a city a
    gazetteer knows by that name alone: :func:`~chronomem.ingest.places.places_named_in`) or
    organisations (a name with its head word, "Westcombe Academy":
    :func:`~chronomem.text.organisations.organisations_named_in`) the current message names that no
    extracted name holds: an entity each, so the fact the message states of one has its end. A small
    model skips them as often as not. Only the message's own words are added, so nothing is invented."""
    names = [n for entity in named for n in (entity.name, *entity.aliases)]
    added = []
    for name in said:
        if not is_named(name, names):
            session.warn(f"{kind} {name!r} made an entity: the model did not extract it")
            added.append(NamedEntity(name))
            names.append(name)
    return added


def _is_a_date(name: str, reference: datetime) -> bool:
    """Is ``name`` a date and nothing else ("March 18, 2024", "2024", "next week")? The entity prompt
    says no nodes for dates, times or years; models make them anyway. A single word without a digit
    stays ("Summer", "May" may be people)."""
    parsed = parse_time(name, reference)
    if not parsed.windows or re.search(r"\w", parsed.remainder):
        return False
    return any(char.isdigit() for char in name) or len(name.split()) > 1


def _named_apart(name: str, alias: str, current: str) -> bool:
    """Is ``alias`` a fuller form of ``name`` ("Tiago Silva" for "Tiago") that the current message
    uses beside the short name on its own? Then they may be two people ("my brother Tiago ... my
    cousin Tiago Silva"): the model calling one the other's alias is no evidence, and a split is
    mended by a later mention where a false merge is not. A fuller name the message uses alone, one
    that declares the short name in brackets or quotes ("Robert (Bob) Smith"), and a shorter alias
    ("IBM", "Maya") stay aliases."""
    if not name_tokens(name) < name_tokens(alias):
        return False
    rest = re.sub(re.escape(alias), " ", current, flags=re.IGNORECASE)
    rest = re.sub(rf"[(\"“']\s*{re.escape(name)}\s*[)\"”']", " ", rest, flags=re.IGNORECASE)
    return is_named(name, (rest,))


def _grounded_aliases(
    session: Session, name: str, aliases: Sequence[str], current: str, extracted: set[str]
) -> tuple[str, ...]:
    """The declared aliases that are evidence: named in the current message, and not the name of
    another entity the model extracted from it (then the model itself says they are two entities:
    "Jane Doe, formerly of Google" must not make Google an alias of Jane)."""
    own = match_key(name)
    kept = []
    for alias in aliases:
        key = match_key(alias)
        if not key or key == own:
            continue
        if key in extracted:
            session.warn(f"alias {alias!r} of {name!r} dropped: it is extracted as an entity of its own")
        elif not is_named(alias, (current,)):
            session.warn(f"alias {alias!r} of {name!r} dropped: the current message does not name it")
        elif _look_alike(name, alias) and not _stated_beside(name, alias, current):
            session.warn(f"alias {alias!r} of {name!r} dropped: a look-alike name the message does not give as "
                         "another name of it")
        else:
            kept.append(alias)
    return tuple(kept)


def _look_alike(name: str, alias: str) -> bool:
    """Two full names that share a word and differ in another ("Lena Ortiz", "Lena Ortega"), or that
    share no word but nearly the same letters ("Larkspur Roasters", "Lark & Spurr"): two people or
    firms as often as one, and a model that calls one the other's alias merges them for good."""
    ours, theirs = name_tokens(name), name_tokens(alias)
    if len(ours) < 2 or len(theirs) < 2 or not ours ^ theirs:
        return False
    if ours & theirs:
        return True
    # the letters as written, in order: the same every run, whatever order a set of tokens iterates in
    letters = sorted((_LETTERS_ONLY.sub("", name.lower()), _LETTERS_ONLY.sub("", alias.lower())), key=len)
    return len(letters[0]) >= _SPELLED_ALIKE_MIN and fuzz.partial_ratio(*letters) >= _SPELLED_ALIKE


# a name's words run together that nearly spell the other's ("larkspurr" in "larkspurroasters"): at
# least this long, and at least this alike (rapidfuzz's partial ratio, 0-100)
_SPELLED_ALIKE_MIN = 6
_LETTERS_ONLY = re.compile(r"[\W\d_]+")
_SPELLED_ALIKE = 80


# what may stand between a name and another name the text gives it: "Robert Smith (Bob)", "the
# European Union, or EU", "Lena Ortiz, also known as Lena Ortega", "Acme, formerly Acme Widgets"
_ALIAS_GAP = re.compile(
    r"[\s(),\"“”'‘’\-–—/]*(?:(?:also\s+|better\s+|now\s+|formerly\s+)?(?:known\s+as|called|named|nicknamed)|"
    r"a\.?k\.?a\.?|formerly|or|née|born|i\.e\.)?[\s(),:\"“”'‘’\-–—/]*",
    re.IGNORECASE,
)


def _stated_beside(name: str, alias: str, current: str) -> bool:
    """Does ``current`` give ``alias`` as another name of ``name``, next to it with nothing but
    brackets, quotes or "also known as", "formerly", "or" between ("Lena Ortiz (née Ortega)")?"""
    def spans(words: str) -> list[tuple[int, int]]:
        return [m.span() for m in re.finditer(re.escape(words), current, re.IGNORECASE)]

    for a_start, a_end in spans(name):
        for b_start, b_end in spans(alias):
            gap = current[a_end:b_start] if a_end <= b_start else current[b_end:a_start]
            if (a_end <= b_start or b_end <= a_start) and _ALIAS_GAP.fullmatch(gap):
                return True
    return False


@dataclass
class ResolvedEntities:
    """Which graph entity each extracted name is; new and changed entities are written later."""

    entities: dict[str, Entity] = field(default_factory=dict)  # id -> current version
    by_key: dict[str, str] = field(default_factory=dict)  # match_key of a name -> id
    mentioned: list[tuple[str, str]] = field(default_factory=list)  # (name as extracted, id), in order
    created: set[str] = field(default_factory=set)
    changed: set[str] = field(default_factory=set)
    renamed: set[str] = field(default_factory=set)  # existing entities given a more complete name
    ambiguous: list[tuple[NamedEntity, EntityDecision]] = field(default_factory=list)  # awaiting the model
    known: list[Entity] = field(default_factory=list)  # existing entities the exact lookup found

    def find(self, name: str) -> Entity | None:
        entity_id = self.by_key.get(match_key(name))
        return self.entities.get(entity_id) if entity_id else None

    def spellings(self, entities: Iterable[Entity] | None = None) -> dict[str, tuple[str, ...]]:
        """Each entity's names (by id): its name, its aliases and the names this episode gave it;
        of ``entities``, or of the episode's own."""
        names = {e.id: [e.name, *e.aliases] for e in (self.entities.values() if entities is None else entities)}
        for name, entity_id in self.mentioned:
            if entity_id in names:
                names[entity_id].append(name)
        return {entity_id: tuple(dict.fromkeys(found)) for entity_id, found in names.items()}

    def bind(self, named: NamedEntity, entity: Entity, *, created: bool) -> None:
        self.entities[entity.id] = entity
        for key in {match_key(named.name), *(match_key(n) for n in (entity.name, *entity.aliases))}:
            self.by_key.setdefault(key, entity.id)
        self.mentioned.append((named.name, entity.id))
        (self.created if created else self.changed).add(entity.id)

    def update(self, entity: Entity) -> None:
        self.entities[entity.id] = entity
        if entity.id not in self.created:
            self.changed.add(entity.id)

    def free_aliases(self, entity_id: str, aliases: Iterable[str]) -> tuple[str, ...]:
        """The ``aliases`` that name no *other* known entity: an alias shared by two entities
        would make every later mention of it an arbitrary pick between them."""
        taken = {match_key(n) for e in (*self.known, *self.entities.values()) if e.id != entity_id
                 for n in names_of(e)}
        return tuple(a for a in aliases if match_key(a) not in taken)


def _merge_into(resolved: ResolvedEntities, entity: Entity, named: NamedEntity) -> Entity:
    """``entity`` with what this mention adds: its name and declared aliases as aliases, a type, attributes."""
    update: dict[str, object] = {}
    keys = {match_key(n) for n in names_of(entity)}
    added = []
    for alias in (named.name, *resolved.free_aliases(entity.id, named.aliases)):
        if match_key(alias) not in keys:
            keys.add(match_key(alias))
            added.append(alias)
    if added:
        update["aliases"] = (*entity.aliases, *added)
    labels = tuple(dict.fromkeys((*entity.labels, *named.labels)))
    if labels != entity.labels:
        update["labels"] = labels
    if named.attributes and any(entity.attributes.get(k) != v for k, v in named.attributes.items()):
        update["attributes"] = {**entity.attributes, **named.attributes}
    return entity.model_copy(update=update) if update else entity


@stage("resolve_entities")
async def resolve_entities(
    session: Session, text: EpisodeText | None, named: Sequence[NamedEntity], *, defer_ambiguous: bool = False
) -> ResolvedEntities:
    """Deterministic matches first; ambiguous names go to one batched model call; the rest are new.

    With ``defer_ambiguous`` the ambiguous names wait in ``resolved.ambiguous``: the fact-extraction
    call answers them (staged extraction folds entity resolution into it).
    """
    resolved = ResolvedEntities()
    await session.vectors.embed([n.name for n in named] + ([text.current] if text else []))
    resolved.known = await _exact_candidates(session, named)
    pending = _bind_exact_matches(resolved, named)
    if not pending:
        return resolved
    decisions = await _decide_unmatched(session, pending, resolved.known)
    if defer_ambiguous and not session.deterministic and text is not None:
        resolved.ambiguous = [(n, d) for n, d in decisions if d.verdict is Verdict.AMBIGUOUS]
        decisions = [(n, d) for n, d in decisions if d.verdict is not Verdict.AMBIGUOUS]
    settle(session, resolved, decisions, await ask_about_ambiguous(session, text, decisions))
    return resolved


# words a model writes as a fact's end that are no name of their own: the speaker's or the reader's
_NOT_A_NAME = frozenset((
    "i", "me", "my", "mine", "we", "us", "our", "you", "your", "he", "him", "his", "she", "her", "hers",
    "they", "them", "their", "it", "its", "this", "that", "user", "assistant", "speaker", "someone",
))


async def resolve_left_out(  # part of the fact call's stage: its warnings and time are that stage's
    session: Session, text: EpisodeText, facts: Sequence[ExtractedFact], resolved: ResolvedEntities
) -> None:
    """Resolve the names that extracted facts give as their ends, or as the holder of a role in
    apposition, and the entity answer left out.

    A small model lists the people and places of a message, then writes a fact about one it did
    not list ("Lauren Hayes' husband Mike got a job at Summit Bank" with no "Mike"): that fact had
    no end, or lost the relation. A name (a word with a capital or a digit) that the current
    message names is an entity as if the entity answer had given it: matched to a known one when
    the match is certain, else new. A name whose match only a model could settle stays out, with
    its fact: that would cost a call the episode was not meant to make. Common nouns ("stomach")
    stay out too: the entity answer is where things that are not names get in; and so do titles
    ("CEO is Victor Lang"): a position is what an entity holds, not one.
    """
    said = [n for f in facts for n in (f.source, f.target, holder_named(f.fact)) if n]  # "X's husband Mike"
    names = dict.fromkeys(n.strip() for n in said if resolved.find(n) is None)
    named = [NamedEntity(name) for name in names
             if any(c.isupper() or c.isdigit() for c in name) and name.lower() not in _NOT_A_NAME
             and not is_a_title(name) and is_named(name, (text.current,))
             and not _is_a_date(name, text.reference_time)]
    if not named:
        return
    await session.vectors.embed([n.name for n in named])
    known = await _exact_candidates(session, named)
    resolved.known.extend(e for e in known if all(e.id != k.id for k in resolved.known))
    pending = _bind_exact_matches(resolved, named)
    decided = []
    for entity, decision in await _decide_unmatched(session, pending, known) if pending else []:
        if decision.verdict is Verdict.AMBIGUOUS:
            session.warn(f"{entity.name!r}, an end of a fact the entity answer left out, may be a known entity: "
                         "its facts are dropped")
        else:
            session.warn(f"{entity.name!r}, an end of a fact the entity answer left out, made an entity")
            decided.append((entity, decision))
    settle(session, resolved, decided, {})
    session.entities_extracted += len(named)


def _bind_exact_matches(resolved: ResolvedEntities, named: Sequence[NamedEntity]) -> list[NamedEntity]:
    """Bind each name an exact match settles (this episode's entities first: a name bound a moment
    ago is the one it means, then the known ones); the names left for candidates."""
    pending = []
    for entity in named:
        match = exact_match(entity.name, entity.aliases, entity.labels, [*resolved.entities.values(), *resolved.known])
        if match is not None:
            resolved.bind(entity, _merge_into(resolved, resolved.entities.get(match.id, match), entity),
                          created=match.id in resolved.created)
        else:
            pending.append(entity)
    return pending


def settle(
    session: Session,
    resolved: ResolvedEntities,
    decisions: Sequence[tuple[NamedEntity, EntityDecision]],
    answers: dict[str, Entity],
) -> None:
    """Bind each decided name: to the entity the model or a deterministic rule chose, else a new one."""
    for entity, decision in decisions:
        answered = answers.get(entity.name)
        match = answered or decision.match
        if answered is not None and all(c.name != answered.name for c in decision.candidates):
            resolved.renamed.add(answered.id)
        if match is not None:
            resolved.bind(entity, _merge_into(resolved, resolved.entities.get(match.id, match), entity),
                          created=match.id in resolved.created)
        elif (known := resolved.find(entity.name)) is not None:
            resolved.bind(entity, known, created=known.id in resolved.created)
        else:
            resolved.bind(entity, _new_entity(session, resolved, entity), created=True)


def _new_entity(session: Session, resolved: ResolvedEntities, named: NamedEntity) -> Entity:
    entity = Entity(
        group_id=session.group_id, name=named.name, labels=named.labels, attributes=dict(named.attributes),
        created_at=session.now,
    )
    aliases = resolved.free_aliases(entity.id, named.aliases)
    return entity.model_copy(update={"aliases": aliases}) if aliases else entity


async def _exact_candidates(session: Session, named: Sequence[NamedEntity]) -> list[Entity]:
    """Existing entities that may bear one of the names or declared aliases, oldest first (the
    store's lookup is coarse; :func:`~chronomem.ingest.resolution.exact_match` decides)."""
    names: set[str] = set()
    if session.config.place_names:
        await places_ready()
    for entity in named:
        for name in (entity.name, *entity.aliases):
            names |= {name, match_key(name), split_legal_form(name)[0]}
        if session.config.place_names and (place := place_of(entity.name)) is not None:
            names.update(names_of_place(place))  # "München" is a candidate for "Munich" (never a merge)
    found = await session.store.find_entities_by_names(session.group_id, sorted(names))
    return sorted(found, key=lambda e: (e.created_at, e.id))


async def _candidates_for(session: Session, name: str) -> tuple[dict[str, float], list[str]]:
    if not await session.has_vectors(Scope.ENTITIES):
        return {}, []
    limit = session.config.entity_candidates
    by_vector, by_text = await asyncio.gather(
        session.store.vector_search(session.group_id, Scope.ENTITIES, session.vectors[name], limit=limit),
        session.store.fulltext_search(session.group_id, Scope.ENTITIES, search_query(name), limit=limit),
    )
    return {hit.id: hit.score for hit in by_vector}, [hit.id for hit in by_text]


async def _decide_unmatched(
    session: Session, named: Sequence[NamedEntity], known: Sequence[Entity]
) -> list[tuple[NamedEntity, EntityDecision]]:
    """Gather candidates by cosine and BM25 (names and summaries), and those of the ``known`` entities
    the exact lookup found under another name of the name's place; then decide each name (pure)."""
    found = await asyncio.gather(*(_candidates_for(session, n.name) for n in named))
    ids = list(dict.fromkeys(i for cosines, texts in found for i in (*cosines, *texts)))
    text_only = [i for i in ids if not any(i in cosines for cosines, _ in found)]
    loaded, vectors = await asyncio.gather(  # BM25-only hits need their vectors for a cosine
        session.store.get_entities(session.group_id, ids),
        session.store.get_vectors(session.group_id, Scope.ENTITIES, text_only),
    ) if ids else ([], {})
    entities = {e.id: e for e in loaded} | {e.id: e for e in known}
    thresholds = ResolutionThresholds(session.config.fuzzy_ambiguous, session.config.embedding_ambiguous,
                                      place_names=session.config.place_names)
    decisions = []
    for entity, (cosines, texts) in zip(named, found, strict=True):
        # the exact lookup also asked for the other names of the entity's place ("München" for "Munich")
        placed = [e.id for e in known if thresholds.place_names and same_place(entity.name, e)]
        candidates = []
        for entity_id in dict.fromkeys((*cosines, *texts, *placed)):
            if entity_id not in entities:
                continue
            cosine = cosines.get(entity_id)
            if cosine is None and entity_id in vectors:
                cosine = float(vectors[entity_id] @ session.vectors[entity.name])
            candidates.append(Candidate(entities[entity_id], cosine))
        decisions.append((entity, decide(entity.name, entity.labels, candidates, thresholds)))
    return decisions


async def ask_about_ambiguous(
    session: Session, text: EpisodeText | None, decisions: Sequence[tuple[NamedEntity, EntityDecision]]
) -> dict[str, Entity]:
    """One call for every ambiguous name; returns name -> the existing entity it duplicates."""
    ambiguous = [(n, d) for n, d in decisions if d.verdict is Verdict.AMBIGUOUS]
    if not ambiguous or session.deterministic or text is None:
        return {}
    questions, numbering = entity_questions(ambiguous)
    answer = await session.ask(ENTITY_RESOLUTION, EntityResolutionContext(text, questions))
    return read_matches(session, ambiguous, questions, numbering, answer.matches)


def entity_questions(
    ambiguous: Sequence[tuple[NamedEntity, EntityDecision]],
) -> tuple[tuple[EntityQuestion, ...], dict[int, Entity]]:
    """The ambiguous names with their numbered candidates, as the model sees them."""
    questions: list[EntityQuestion] = []
    numbering: dict[int, Entity] = {}
    for index, (named, decision) in enumerate(ambiguous):
        candidates = []
        for entity in decision.candidates:
            numbering[len(numbering) + 1] = entity
            candidates.append(CandidateEntity(len(numbering), entity.name, entity.summary[:200]))
        questions.append(EntityQuestion(index, named.name, specific_label(named.labels), tuple(candidates)))
    return tuple(questions), numbering


def read_matches(
    session: Session,
    ambiguous: Sequence[tuple[NamedEntity, EntityDecision]],
    questions: Sequence[EntityQuestion],
    numbering: dict[int, Entity],
    answers: Iterable[EntityMatch],
) -> dict[str, Entity]:
    """name -> the existing entity the model says it is (answers naming no offered candidate are ignored)."""
    matches: dict[str, Entity] = {}
    for match in answers:
        if match.duplicate_of is None or not 0 <= match.index < len(ambiguous):
            continue
        named, _ = ambiguous[match.index]
        allowed = {c.index for c in questions[match.index].candidates}
        if match.duplicate_of not in allowed:
            session.warn(f"model matched {named.name!r} to unknown candidate {match.duplicate_of}")
            continue
        matches[named.name] = _complete_name(numbering[match.duplicate_of], match.name)
    return matches


def _complete_name(entity: Entity, name: str | None) -> Entity:
    """Adopt the model's more complete full name; the old name stays an alias."""
    if not name or len(name.split()) <= len(entity.name.split()) or match_key(name) == match_key(entity.name):
        return entity
    aliases = tuple(a for a in dict.fromkeys((*entity.aliases, entity.name)) if match_key(a) != match_key(name))
    return entity.model_copy(update={"name": name.strip(), "aliases": aliases})


def specific_label(labels: Iterable[str]) -> str:
    return next((label for label in labels if label != GENERIC_LABEL), GENERIC_LABEL)
