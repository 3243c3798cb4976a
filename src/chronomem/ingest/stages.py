"""The stages of ingestion (DESIGN §2, paper §2.2), one function each, in pipeline order.

Every stage reads and writes plain data; a :class:`~chronomem.ingest.session.Session` carries the
store, the models, the per-episode embedding cache and the usage meter. Nothing here writes to the
store: :func:`assemble_write` gathers everything into one :class:`~chronomem.store.GraphWrite`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from chronomem.domain import Entity, Episode, EpisodeStatus, Fact, Mention, to_relation_type
from chronomem.ingest.dates import parse_model_datetime
from chronomem.ingest.fact_resolution import (
    FactCandidates,
    FactOutcome,
    identical_fact,
    same_pair,
    select_candidates,
    single_valued_outcome,
)
from chronomem.ingest.invalidation import invalidate
from chronomem.ingest.ontology import GENERIC_LABEL
from chronomem.ingest.prompts import (
    COMBINED_EXTRACTION,
    ENTITY_EXTRACTION,
    ENTITY_REFLEXION,
    ENTITY_RESOLUTION,
    FACT_EXTRACTION,
    FACT_RESOLUTION,
    SUMMARY_REWRITE,
    CandidateEntity,
    CandidateFact,
    CombinedExtractionContext,
    EntityExtractionContext,
    EntityMatch,
    EntityQuestion,
    EntityRef,
    EntityResolutionContext,
    EpisodeText,
    ExtractedEntity,
    ExtractedFact,
    ExtractedGraph,
    FactExtractionContext,
    FactQuestion,
    FactResolutionContext,
    ReflexionContext,
    SummaryContext,
    SummaryItem,
)
from chronomem.ingest.resolution import (
    Candidate,
    EntityDecision,
    ResolutionThresholds,
    Verdict,
    decide,
    labels_compatible,
    match_key,
    merge_extracted,
    search_query,
)
from chronomem.ingest.session import Session, stage
from chronomem.ingest.summaries import append_sentences, remove_sentences, to_rewrite
from chronomem.store.base import GraphWrite, Scope

__all__ = [
    "FactChanges",
    "FactDrafts",
    "FactExtraction",
    "NamedEntity",
    "ResolvedEntities",
    "apply_invalidation",
    "assemble_write",
    "build_facts",
    "extract_entities",
    "extract_facts",
    "extract_graph",
    "finished",
    "load_context",
    "named_entities",
    "resolve_entities",
    "resolve_facts",
    "settle",
    "update_summaries",
]


# -- 2. context ----------------------------------------------------------------------------------------


@stage("context")
async def load_context(session: Session, episode: Episode) -> EpisodeText:
    """The episode and the previous ``context_episodes`` of its group, oldest first."""
    previous: list[Episode] = []
    if session.config.context_episodes:
        previous = await session.store.list_episodes(
            episode.group_id, limit=session.config.context_episodes, before=episode.reference_time
        )
    return EpisodeText(
        current=episode.text,
        reference_time=episode.reference_time,
        kind=episode.kind,
        previous=tuple(e.text for e in reversed(previous)),
        source_description=episode.source_description,
    )


# -- 3. extraction -------------------------------------------------------------------------------------


@stage("extract_entities")
async def extract_entities(session: Session, text: EpisodeText) -> list[ExtractedEntity]:
    """Entities of the episode, speaker first; with ``reflexion``, a second pass adds the missed ones."""
    context = EntityExtractionContext(text, session.ontology.entity_specs())
    entities = (await session.ask(ENTITY_EXTRACTION, context)).entities
    if session.config.reflexion:
        review = ReflexionContext(text, tuple(e.name for e in entities))
        entities = entities + (await session.ask(ENTITY_REFLEXION, review)).missed
    return entities


@stage("extract_graph")
async def extract_graph(session: Session, text: EpisodeText) -> ExtractedGraph:
    """Entities and facts in one call (``extraction="combined"``)."""
    context = CombinedExtractionContext(text, session.ontology.entity_specs(), session.ontology.edge_specs())
    return await session.ask(COMBINED_EXTRACTION, context)


@dataclass
class FactExtraction:
    """What the fact-extraction call returned, and the existing facts it was shown (by number)."""

    facts: list[ExtractedFact] = field(default_factory=list)
    shown: dict[int, Fact] = field(default_factory=dict)


@stage("extract_facts")
async def extract_facts(session: Session, text: EpisodeText, resolved: ResolvedEntities) -> FactExtraction:
    """Facts between the episode's entities, with relation types and dates, in one call.

    The same call settles the ambiguous entities and judges the new facts against the existing
    facts near the episode (numbered), so resolution rarely needs calls of its own.
    """
    names = [name for name, _ in resolved.mentioned] + [n.name for n, _ in resolved.ambiguous]
    if len(names) < 2:  # a fact joins two different entities: settle names with the batched call
        settle(session, resolved, resolved.ambiguous,
               await _ask_about_ambiguous(session, text, resolved.ambiguous))
        return FactExtraction()
    refs = [EntityRef(name, _specific_label(resolved.entities[eid].labels)) for name, eid in resolved.mentioned]
    refs += [EntityRef(n.name, _specific_label(n.labels)) for n, _ in resolved.ambiguous]
    shown = await _facts_to_show(session, text, resolved)
    questions, numbering = entity_questions(resolved.ambiguous)
    existing = tuple(
        CandidateFact(number, f.fact, f.relation_type, False, f.valid_at, f.invalid_at) for number, f in shown.items()
    )
    context = FactExtractionContext(text, tuple(refs), session.ontology.edge_specs(), existing=existing,
                                    ambiguous=questions)
    answer = await session.ask(FACT_EXTRACTION, context)
    matches = read_matches(session, resolved.ambiguous, questions, numbering, answer.same_as)
    settle(session, resolved, resolved.ambiguous, matches)
    return FactExtraction(answer.facts, shown)


async def _facts_to_show(session: Session, text: EpisodeText, resolved: ResolvedEntities) -> dict[int, Fact]:
    """Current facts touching the episode's entities (or their candidates), nearest the episode first."""
    if not await session.has_vectors(Scope.FACTS):
        return {}
    store, group, limit = session.store, session.group_id, session.config.facts_shown
    if not limit:
        return {}
    entity_ids = set(resolved.entities) | {e.id for _, d in resolved.ambiguous for e in d.candidates}
    hits = await store.vector_search(group, Scope.FACTS, session.vectors[text.current], limit=limit * 4)
    near = [f for f in await store.get_facts(group, [hit.id for hit in hits]) if entity_ids & set(f.entity_ids)]
    return {number: fact for number, fact in enumerate(near[:limit], start=1)}


def _specific_label(labels: Iterable[str]) -> str:
    return next((label for label in labels if label != GENERIC_LABEL), GENERIC_LABEL)


# -- 4. entity resolution ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NamedEntity:
    """An entity as extracted (by a model, a mapping or ``add_fact``), with its validated labels."""

    name: str
    labels: tuple[str, ...] = (GENERIC_LABEL,)
    attributes: dict[str, object] = field(default_factory=dict)


def named_entities(session: Session, extracted: Iterable[ExtractedEntity], *, trusted: bool) -> list[NamedEntity]:
    """Merge an episode's mentions of one name, and keep only the types and attributes the ontology knows.

    ``trusted`` types (a declared JSON mapping, an ``add_fact`` call) are kept even if undeclared.
    """
    result = []
    for entity in merge_extracted(extracted):
        labels = session.ontology.entity_labels(entity.type)
        if trusted and entity.type != GENERIC_LABEL and entity.type not in labels:
            labels = (GENERIC_LABEL, entity.type)
        attributes = session.ontology.entity_attributes(labels, entity.attributes)
        if trusted and not attributes:
            attributes = dict(entity.attributes)
        result.append(NamedEntity(entity.name, labels, attributes))
    session.entities_extracted = len(result)
    return result


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

    def find(self, name: str) -> Entity | None:
        entity_id = self.by_key.get(match_key(name))
        return self.entities.get(entity_id) if entity_id else None

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


def _merge_into(entity: Entity, named: NamedEntity) -> Entity:
    """``entity`` with what this mention adds: an alias, a type, attributes."""
    update: dict[str, object] = {}
    if match_key(named.name) not in {match_key(n) for n in (entity.name, *entity.aliases)}:
        update["aliases"] = (*entity.aliases, named.name)
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
    exact = await _exact_matches(session, named)
    pending: list[NamedEntity] = []
    for entity in named:
        match = resolved.find(entity.name) or exact.get(match_key(entity.name))
        if match is not None and labels_compatible(entity.labels, match.labels):
            resolved.bind(entity, _merge_into(resolved.entities.get(match.id, match), entity), created=False)
        else:
            pending.append(entity)
    if not pending:
        return resolved
    decisions = await _decide_unmatched(session, pending)
    if defer_ambiguous and session.llm is not None and text is not None:
        resolved.ambiguous = [(n, d) for n, d in decisions if d.verdict is Verdict.AMBIGUOUS]
        decisions = [(n, d) for n, d in decisions if d.verdict is not Verdict.AMBIGUOUS]
    settle(session, resolved, decisions, await _ask_about_ambiguous(session, text, decisions))
    return resolved


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
            resolved.bind(entity, _merge_into(resolved.entities.get(match.id, match), entity), created=False)
        elif (known := resolved.find(entity.name)) is not None:
            resolved.bind(entity, known, created=known.id in resolved.created)
        else:
            resolved.bind(entity, _new_entity(session, entity), created=True)


def _new_entity(session: Session, named: NamedEntity) -> Entity:
    return Entity(
        group_id=session.group_id, name=named.name, labels=named.labels, attributes=dict(named.attributes),
        created_at=session.now,
    )


async def _exact_matches(session: Session, named: Sequence[NamedEntity]) -> dict[str, Entity]:
    """Existing entities by match key of their name or aliases (oldest wins a tie)."""
    names = {n.name for n in named} | {match_key(n.name) for n in named}
    found = await session.store.find_entities_by_names(session.group_id, sorted(names))
    by_key: dict[str, Entity] = {}
    for entity in sorted(found, key=lambda e: (e.created_at, e.id)):
        for name in (entity.name, *entity.aliases):
            by_key.setdefault(match_key(name), entity)
    return by_key


async def _candidates_for(session: Session, name: str) -> tuple[dict[str, float], list[str]]:
    if not await session.has_vectors(Scope.ENTITIES):
        return {}, []
    limit = session.config.entity_candidates
    by_vector, by_text = await asyncio.gather(
        session.store.vector_search(session.group_id, Scope.ENTITIES, session.vectors[name], limit=limit),
        session.store.fulltext_search(session.group_id, Scope.ENTITIES, search_query(name), limit=limit),
    )
    return {hit.id: hit.score for hit in by_vector}, [hit.id for hit in by_text]


async def _decide_unmatched(session: Session, named: Sequence[NamedEntity]) -> list[tuple[NamedEntity, EntityDecision]]:
    """Gather candidates by cosine and BM25 (names and summaries), then decide each name (pure)."""
    found = await asyncio.gather(*(_candidates_for(session, n.name) for n in named))
    ids = list(dict.fromkeys(i for cosines, texts in found for i in (*cosines, *texts)))
    entities = {e.id: e for e in await session.store.get_entities(session.group_id, ids)} if ids else {}
    text_only = [i for i in ids if not any(i in cosines for cosines, _ in found)]
    vectors = await session.store.get_vectors(session.group_id, Scope.ENTITIES, text_only) if text_only else {}
    thresholds = ResolutionThresholds(
        session.config.fuzzy_merge, session.config.embedding_merge,
        session.config.fuzzy_ambiguous, session.config.embedding_ambiguous,
    )
    decisions = []
    for entity, (cosines, texts) in zip(named, found, strict=True):
        candidates = []
        for entity_id in dict.fromkeys((*cosines, *texts)):
            if entity_id not in entities:
                continue
            cosine = cosines.get(entity_id)
            if cosine is None and entity_id in vectors:
                cosine = float(vectors[entity_id] @ session.vectors[entity.name])
            candidates.append(Candidate(entities[entity_id], cosine))
        decisions.append((entity, decide(entity.name, entity.labels, candidates, thresholds)))
    return decisions


async def _ask_about_ambiguous(
    session: Session, text: EpisodeText | None, decisions: Sequence[tuple[NamedEntity, EntityDecision]]
) -> dict[str, Entity]:
    """One call for every ambiguous name; returns name -> the existing entity it duplicates."""
    ambiguous = [(n, d) for n, d in decisions if d.verdict is Verdict.AMBIGUOUS]
    if not ambiguous or session.llm is None or text is None:
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
        questions.append(EntityQuestion(index, named.name, _specific_label(named.labels), tuple(candidates)))
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


# -- 5. facts ------------------------------------------------------------------------------------------


@dataclass
class FactDrafts:
    """New facts, and what the extraction call already said about them (by fact id)."""

    facts: list[Fact] = field(default_factory=list)
    hints: dict[str, FactOutcome] = field(default_factory=dict)
    shown: frozenset[str] = frozenset()  # ids of the existing facts the model was shown


def build_facts(
    session: Session,
    extracted: Iterable[ExtractedFact],
    resolved: ResolvedEntities,
    shown: dict[int, Fact] | None = None,
) -> FactDrafts:
    """Facts with entity ids, SCREAMING_SNAKE relation types, checked signatures and resolved dates."""
    shown = shown or {}
    drafts = FactDrafts(shown=frozenset(f.id for f in shown.values()))
    for item in extracted:
        fact = _to_fact(session, item, resolved)
        if fact is None or identical_fact(fact, drafts.facts) is not None:
            continue
        drafts.facts.append(fact)
        if shown:
            duplicate = shown.get(item.duplicate_of) if item.duplicate_of is not None else None
            contradicts = tuple(shown[n] for n in dict.fromkeys(item.contradicts) if n in shown)
            drafts.hints[fact.id] = FactOutcome(duplicate, contradicts)
    session.facts_extracted = len(drafts.facts)
    return drafts


def _to_fact(session: Session, item: ExtractedFact, resolved: ResolvedEntities) -> Fact | None:
    source, target = resolved.find(item.source), resolved.find(item.target)
    if source is None or target is None or source.id == target.id:
        session.warn(f"fact dropped, its entities are not both known and distinct: {item.fact!r}")
        return None
    relation = to_relation_type(item.relation_type)
    if not session.ontology.allows(relation, source.labels, target.labels):
        session.warn(f"{relation} may not join {source.name} and {target.name}; kept as RELATES_TO")
        relation = "RELATES_TO"
    reference = session.reference_time
    valid_at = parse_model_datetime(item.valid_at, reference)
    invalid_at = parse_model_datetime(item.invalid_at, reference)
    if valid_at and invalid_at and invalid_at < valid_at:
        session.warn(f"invalid_at before valid_at dropped: {item.fact!r}")
        invalid_at = None
    return Fact(
        group_id=session.group_id, source_id=source.id, target_id=target.id, relation_type=relation,
        fact=" ".join(item.fact.split()), episode_ids=session.provenance,
        attributes=session.ontology.edge_attributes(relation, item.attributes),
        valid_at=valid_at, invalid_at=invalid_at, created_at=session.now,
    )


# -- 6. fact resolution --------------------------------------------------------------------------------


async def _existing_facts(
    session: Session, facts: Sequence[Fact]
) -> tuple[dict[str, Fact], dict[str, np.ndarray]]:
    """Current facts near the new ones: the same pairs, and the nearest by fact embedding."""
    store, group = session.store, session.group_id
    if not await session.has_vectors(Scope.FACTS):
        return {}, {}
    limit = session.config.fact_candidates * 4
    pairs = list(dict.fromkeys(tuple(sorted((f.source_id, f.target_id))) for f in facts))
    between, nearest = await asyncio.gather(
        asyncio.gather(*(store.facts_between(group, a, b) for a, b in pairs)),
        asyncio.gather(*(
            store.vector_search(group, Scope.FACTS, session.vectors[f.fact], limit=limit,
                                min_score=session.config.same_relation_similarity)
            for f in facts
        )),
    )
    existing = {f.id: f for group_facts in between for f in group_facts}
    near_ids = [hit.id for hits in nearest for hit in hits if hit.id not in existing]
    existing.update({f.id: f for f in await store.get_facts(group, list(dict.fromkeys(near_ids)))})
    vectors = await store.get_vectors(group, Scope.FACTS, list(existing)) if existing else {}
    return existing, vectors


@stage("resolve_facts")
async def resolve_facts(session: Session, drafts: FactDrafts) -> list[FactOutcome]:
    """Duplicates and contradictions of each new fact (DESIGN §2, step 6).

    No model for identical text, single-valued relations or facts without candidates; the
    extraction call's verdict when the model was shown every candidate (vetted against the rules);
    one batched call for the rest.
    """
    facts = drafts.facts
    if not facts:
        return []
    await session.vectors.embed(f.fact for f in facts)
    existing, vectors = await _existing_facts(session, facts)
    outcomes: list[FactOutcome] = [FactOutcome() for _ in facts]
    questions: list[tuple[int, FactCandidates]] = []
    for index, fact in enumerate(facts):
        if session.ontology.is_single_valued(fact.relation_type):
            outcomes[index] = await _single_valued(session, fact)
        elif (same := identical_fact(fact, list(existing.values()))) is not None:
            outcomes[index] = FactOutcome(duplicate_of=same)
        else:
            candidates = select_candidates(
                fact, session.vectors[fact.fact], list(existing.values()), vectors,
                duplicate_similarity=session.config.duplicate_similarity,
                contradiction_similarity=session.config.contradiction_similarity,
                same_relation_similarity=session.config.same_relation_similarity,
                limit=session.config.fact_candidates,
            )
            hint = drafts.hints.get(fact.id)
            if hint is not None and all(c.id in drafts.shown for c in (*candidates.duplicates,
                                                                         *candidates.contradictions)):
                outcomes[index] = vet(fact, hint, candidates)
            elif candidates:
                questions.append((index, candidates))
    if questions and session.llm is not None:
        for index, outcome in (await _ask_about_facts(session, facts, questions)).items():
            outcomes[index] = outcome
    return outcomes


def vet(fact: Fact, hint: FactOutcome, candidates: FactCandidates) -> FactOutcome:
    """The extraction call's verdict, within the rules: a duplicate only between the same pair, a
    contradiction only of a candidate (shares an endpoint, close in meaning)."""
    duplicate = hint.duplicate_of if hint.duplicate_of is not None and same_pair(hint.duplicate_of, fact) else None
    if duplicate is not None:
        return FactOutcome(duplicate_of=duplicate)
    allowed = {f.id for f in (*candidates.duplicates, *candidates.contradictions)}
    return FactOutcome(contradicts=tuple(f for f in hint.contradicts if f.id in allowed))


async def _single_valued(session: Session, fact: Fact) -> FactOutcome:
    of_source = await session.store.facts_of_entities(session.group_id, [fact.source_id])
    return single_valued_outcome(fact, of_source)


async def _ask_about_facts(
    session: Session, facts: Sequence[Fact], questions: Sequence[tuple[int, FactCandidates]]
) -> dict[int, FactOutcome]:
    numbering: dict[int, Fact] = {}
    rendered = []
    for index, candidates in questions:
        listed = []
        for fact in (*candidates.duplicates, *candidates.contradictions):
            number = len(numbering) + 1
            numbering[number] = fact
            listed.append(CandidateFact(number, fact.fact, fact.relation_type, same_pair(fact, facts[index]),
                                        fact.valid_at, fact.invalid_at))
        new = facts[index]
        rendered.append(FactQuestion(index, new.fact, new.relation_type, tuple(listed), new.valid_at))
    answer = await session.ask(FACT_RESOLUTION, FactResolutionContext(tuple(rendered)))
    allowed = {q.index: {c.index for c in q.candidates} for q in rendered}
    outcomes: dict[int, FactOutcome] = {}
    for verdict in answer.verdicts:
        if verdict.index not in allowed:
            continue
        offered = allowed[verdict.index]
        duplicate = numbering.get(verdict.duplicate_of) if verdict.duplicate_of in offered else None
        if duplicate is not None and not same_pair(duplicate, facts[verdict.index]):
            duplicate = None  # duplicates only between the same pair, whatever the model says
        contradicts = tuple(numbering[n] for n in dict.fromkeys(verdict.contradicts) if n in offered)
        if len(contradicts) < len(verdict.contradicts):
            session.warn(f"model named facts it was not offered: {verdict.contradicts}")
        outcomes[verdict.index] = FactOutcome(duplicate_of=duplicate, contradicts=() if duplicate else contradicts)
    return outcomes


# -- 7. invalidation -----------------------------------------------------------------------------------


@dataclass
class FactChanges:
    created: list[Fact] = field(default_factory=list)  # new facts (some born closed)
    restated: dict[str, Fact] = field(default_factory=dict)  # existing facts that gained provenance
    invalidated: dict[str, Fact] = field(default_factory=dict)  # existing facts closed by a new one

    def all_updates(self) -> list[Fact]:
        merged = {**self.restated, **self.invalidated}
        return [*self.created, *merged.values()]


def apply_invalidation(session: Session, facts: Sequence[Fact], outcomes: Sequence[FactOutcome]) -> FactChanges:
    """Restatements gain provenance; contradictions close facts on both timelines (pure rules)."""
    session.current_stage = "invalidation"
    changes = FactChanges()
    for fact, outcome in zip(facts, outcomes, strict=True):
        if outcome.duplicate_of is not None:
            old = changes.invalidated.get(outcome.duplicate_of.id) or changes.restated.get(
                outcome.duplicate_of.id, outcome.duplicate_of
            )
            provenance = tuple(dict.fromkeys((*old.episode_ids, *fact.episode_ids)))
            changes.restated[old.id] = old.model_copy(update={"episode_ids": provenance})
            continue
        current = [changes.invalidated.get(f.id) or changes.restated.get(f.id, f) for f in outcome.contradicts]
        result = invalidate(fact, current, now=session.now, reference_time=session.reference_time)
        changes.created.append(result.new_fact)
        for closed in result.expired:
            changes.invalidated[closed.id] = closed
            changes.restated.pop(closed.id, None)
    return changes


# -- 8. summaries --------------------------------------------------------------------------------------


@stage("update_summaries")
async def update_summaries(session: Session, resolved: ResolvedEntities, changes: FactChanges) -> None:
    """Append new facts to their entities' summaries, drop closed ones; rewrite (batched) past the bound."""
    additions: dict[str, list[str]] = {}
    removals: dict[str, list[str]] = {}
    for fact in changes.created:
        if fact.invalid_at is None:
            for entity_id in fact.entity_ids:
                additions.setdefault(entity_id, []).append(fact.fact)
    for fact in changes.invalidated.values():
        for entity_id in fact.entity_ids:
            removals.setdefault(entity_id, []).append(fact.fact)
    missing = [i for i in (*additions, *removals) if i not in resolved.entities]
    for loaded in await session.store.get_entities(session.group_id, list(dict.fromkeys(missing))) if missing else []:
        resolved.entities[loaded.id] = loaded
    for entity_id in dict.fromkeys((*additions, *removals)):
        entity = resolved.entities.get(entity_id)
        if entity is None:
            continue
        summary = remove_sentences(entity.summary, removals.get(entity_id, ()))
        summary = append_sentences(summary, additions.get(entity_id, ()))
        if summary != entity.summary:
            resolved.update(entity.model_copy(update={"summary": summary}))
    await _rewrite_long_summaries(session, resolved)


async def _rewrite_long_summaries(session: Session, resolved: ResolvedEntities) -> None:
    config = session.config
    touched = [resolved.entities[i] for i in (*resolved.created, *resolved.changed)]
    due = to_rewrite(touched, config.summary_max_chars, config.summary_early_rewrite)
    if not due:
        return
    if session.llm is None:  # no model: keep the newest sentences within the bound
        for entity in due:
            resolved.update(entity.model_copy(update={"summary": _tail(entity.summary, config.summary_max_chars)}))
        return
    items = tuple(SummaryItem(i, e.name, e.summary) for i, e in enumerate(due))
    answer = await session.ask(SUMMARY_REWRITE, SummaryContext(items, config.summary_target_chars))
    for rewritten in answer.summaries:
        if 0 <= rewritten.index < len(due) and rewritten.summary.strip():
            entity = due[rewritten.index]
            summary = _tail(rewritten.summary.strip(), config.summary_max_chars)
            resolved.update(entity.model_copy(update={"summary": summary}))


def _tail(summary: str, max_chars: int) -> str:
    if len(summary) <= max_chars:
        return summary
    cut = summary[-max_chars:]
    return cut[cut.find(" ") + 1 :] if " " in cut else cut


# -- 9. one write --------------------------------------------------------------------------------------


@stage("write")
async def assemble_write(
    session: Session, resolved: ResolvedEntities, changes: FactChanges, *, done: Episode | None
) -> GraphWrite:
    """Everything the episode changes, and its ``done`` status, as one atomic write."""
    entities = [resolved.entities[i] for i in dict.fromkeys((*resolved.created, *resolved.changed))]
    new_names = [e.name for e in entities if e.id in resolved.created | resolved.renamed]
    await session.vectors.embed([*new_names, *(f.fact for f in changes.created)])
    write = GraphWrite(
        group_id=session.group_id,
        entities=entities,
        facts=changes.all_updates(),
        entity_vectors={e.id: session.vectors[e.name] for e in entities if e.name in new_names},
        fact_vectors={f.id: session.vectors[f.fact] for f in changes.created},
    )
    if done is not None:
        write.episodes.append(done)
        write.mentions.extend(Mention(group_id=session.group_id, episode_id=done.id, entity_id=entity_id)
                              for entity_id in dict.fromkeys(eid for _, eid in resolved.mentioned))
        await session.vectors.embed([done.text])
        write.episode_vectors[done.id] = session.vectors[done.text]
    return write


def finished(episode: Episode, session: Session, status: EpisodeStatus = EpisodeStatus.DONE) -> Episode:
    """The episode as stored at the end of its processing: status, usage, no error."""
    return episode.model_copy(update={"status": status, "last_error": None, "usage": session.usage_record()})

