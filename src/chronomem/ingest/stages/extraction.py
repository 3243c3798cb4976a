"""Stages 2–3 and 5: the episode's context, and the extraction calls (entities, facts, or both at once)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from chronomem.domain import Episode, EpisodeKind, Fact
from chronomem.ingest.grounding import ONLY_AN_IDENTITY, is_named, junk_reason
from chronomem.ingest.pairs import named_together
from chronomem.ingest.prompts import (
    COMBINED_EXTRACTION,
    ENTITY_EXTRACTION,
    ENTITY_REFLEXION,
    FACT_EXTRACTION,
    CandidateFact,
    CombinedExtractionContext,
    EntityExtractionContext,
    EntityRef,
    EpisodeText,
    ExtractedEntity,
    ExtractedFact,
    ExtractedFacts,
    ExtractedGraph,
    FactExtractionContext,
    ReflexionContext,
    facts_allowed,
)
from chronomem.ingest.resolution import names_of
from chronomem.ingest.session import Session, stage
from chronomem.ingest.stages.entities import (
    ResolvedEntities,
    ask_about_ambiguous,
    entity_questions,
    read_matches,
    settle,
    specific_label,
)
from chronomem.ingest.voice import in_third_person
from chronomem.store.base import Scope
from chronomem.text.names import name_key

__all__ = [
    "FactExtraction",
    "extract_entities",
    "extract_facts",
    "extract_graph",
    "facts_from_notes",
    "facts_near_episode",
    "load_context",
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
        speaker=episode.speaker if episode.kind is EpisodeKind.MESSAGE else None,
    )


# -- 3. extraction -------------------------------------------------------------------------------------


@stage("extract_entities")
async def extract_entities(session: Session, text: EpisodeText) -> list[ExtractedEntity]:
    """Entities of the episode, speaker first; with ``reflexion``, a second pass adds the missed ones."""
    context = EntityExtractionContext(text, session.ontology.entity_specs(), notes=session.config.entity_notes)
    entities = (await session.ask(ENTITY_EXTRACTION, context)).entities
    if session.config.reflexion:
        review = ReflexionContext(text, tuple(e.name for e in entities), context.entity_types)
        entities = entities + (await session.ask(ENTITY_REFLEXION, review)).missed
    return with_speaker(entities, text)


def with_speaker(entities: list[ExtractedEntity], text: EpisodeText) -> list[ExtractedEntity]:
    """The entities, the message's speaker first: the paper's first rule, kept in code because a
    model that leaves the speaker out leaves every fact about "I" without its subject."""
    if not text.speaker or any(name_key(e.name) == name_key(text.speaker) for e in entities):
        return entities
    return [ExtractedEntity(name=text.speaker), *entities]


@stage("extract_graph")
async def extract_graph(session: Session, text: EpisodeText) -> ExtractedGraph:
    """Entities and facts in one call (``extraction="combined"``)."""
    context = CombinedExtractionContext(text, session.ontology.entity_specs(), session.ontology.edge_specs())
    answer = _third_person(await session.ask(COMBINED_EXTRACTION, context), text)
    if _all_junk(answer.facts):
        answer = _third_person(await session.ask(COMBINED_EXTRACTION, _corrected(context, answer.facts)), text)
    return answer.model_copy(update={"entities": with_speaker(answer.entities, text)})


def _all_junk(facts: Sequence[ExtractedFact]) -> bool:
    """Every fact of the answer is junk: worth the one corrective call. A junk fact beside good ones
    is dropped (and counted) when the facts are built; a retry would cost a call and may lose the
    good ones. Nor is a statement of identity: the model read the format right and found nothing."""
    reasons = [junk_reason(f.fact, [f.source, f.target]) for f in facts]
    return bool(facts) and all(r is not None and r != ONLY_AN_IDENTITY for r in reasons)


_Answer = TypeVar("_Answer", ExtractedGraph, ExtractedFacts)


def _third_person(answer: _Answer, text: EpisodeText) -> _Answer:
    """The answer with its fact texts in the third person (:mod:`chronomem.ingest.voice`), before
    anything judges them: "I adopted Bolt" names its speaker once it reads "Maya adopted Bolt"."""
    if not text.speaker:
        return answer
    facts = [f.model_copy(update={"fact": in_third_person(f.fact, text.speaker)}) for f in answer.facts]
    return answer.model_copy(update={"facts": facts})


_Context = TypeVar("_Context", CombinedExtractionContext, FactExtractionContext)


def _corrected(context: _Context, junk: Sequence[ExtractedFact]) -> _Context:
    """The context again, told which facts of its last answer were junk: the one corrective retry.
    Facts still junk after it are dropped (and counted) when the facts are built."""
    listed = "; ".join(repr(f.fact) for f in junk)
    note = (f"Your previous answer contained facts that are not sentences about their entities ({listed}). "
            "Every fact must be a sentence that names its source or target. Answer again, in full.")
    return dataclasses.replace(context, instructions=f"{context.instructions}\n{note}".strip())


@dataclass
class FactExtraction:
    """What the fact-extraction call returned, and the existing facts it was shown (by number)."""

    facts: list[ExtractedFact] = field(default_factory=list)
    shown: dict[int, Fact] = field(default_factory=dict)


async def facts_near_episode(session: Session, text: EpisodeText) -> list[Fact]:
    """Current facts nearest the episode text: what the fact-extraction call may be shown.

    It needs only the episode's vector, so the pipeline runs it while entities resolve.
    """
    limit = session.config.facts_shown
    if not limit or not await session.has_vectors(Scope.FACTS):
        return []
    await session.vectors.embed([text.current])
    hits = await session.store.vector_search(session.group_id, Scope.FACTS, session.vectors[text.current],
                                             limit=limit * 4)
    return await session.store.get_facts(session.group_id, [hit.id for hit in hits])


@stage("extract_facts")
async def extract_facts(
    session: Session, text: EpisodeText, resolved: ResolvedEntities, nearby: Sequence[Fact] = ()
) -> FactExtraction:
    """Facts between the episode's entities, with relation types and dates, in one call.

    The same call settles the ambiguous entities and judges the new facts against the existing
    facts near the episode (``nearby``, those touching its entities, numbered), so resolution rarely
    needs calls of its own.
    """
    names = [name for name, _ in resolved.mentioned] + [n.name for n, _ in resolved.ambiguous]
    if len(names) < 2:  # a fact joins two different entities: settle names with the batched call
        settle(session, resolved, resolved.ambiguous,
               await ask_about_ambiguous(session, text, resolved.ambiguous))
        return FactExtraction()
    refs = [EntityRef(name, specific_label(resolved.entities[eid].labels)) for name, eid in resolved.mentioned]
    refs += [EntityRef(n.name, specific_label(n.labels)) for n, _ in resolved.ambiguous]
    shown = _facts_to_show(session, resolved, nearby)
    questions, numbering = entity_questions(resolved.ambiguous)
    existing = tuple(
        CandidateFact(number, f.fact, f.relation_type, False, f.valid_at, f.invalid_at) for number, f in shown.items()
    )
    keep = session.config.fact_context_episodes
    recent = dataclasses.replace(text, previous=text.previous[len(text.previous) - keep :] if keep else ())
    context = FactExtractionContext(recent, tuple(refs), session.ontology.edge_specs(), existing=existing,
                                    ambiguous=questions, pairs=_pairs(resolved, text, facts_allowed(text)))
    answer = _third_person(await session.ask(FACT_EXTRACTION, context), text)
    if _all_junk(answer.facts):
        answer = _third_person(await session.ask(FACT_EXTRACTION, _corrected(context, answer.facts)), text)
    matches = read_matches(session, resolved.ambiguous, questions, numbering, answer.same_as)
    settle(session, resolved, resolved.ambiguous, matches)
    return FactExtraction(answer.facts, shown)


def _pairs(resolved: ResolvedEntities, text: EpisodeText, limit: int) -> tuple[tuple[str, str], ...]:
    """The entities each sentence of the message names together, by the names listed to the model."""
    spellings = [[name, *names_of(resolved.entities[eid])] for name, eid in resolved.mentioned]
    spellings += [[n.name] for n, _ in resolved.ambiguous]
    speaker = next((s[0] for s in spellings if text.speaker and name_key(s[0]) == name_key(text.speaker)), None)
    return tuple((p.first, p.second) for p in named_together(text.current, spellings, speaker, limit=limit))


def _facts_to_show(session: Session, resolved: ResolvedEntities, nearby: Sequence[Fact]) -> dict[int, Fact]:
    """The nearby facts touching the episode's entities (or their candidates), numbered from 1."""
    entity_ids = set(resolved.entities) | {e.id for _, d in resolved.ambiguous for e in d.candidates}
    near = [f for f in nearby if entity_ids & set(f.entity_ids)][: session.config.facts_shown]
    return {number: fact for number, fact in enumerate(near, start=1)}


def facts_from_notes(
    entities: Sequence[ExtractedEntity], facts: Sequence[ExtractedFact], resolved: ResolvedEntities,
    text: EpisodeText,
) -> list[ExtractedFact]:
    """Facts the entity call's notes state between two of the episode's entities that the fact call
    left out ("Ana lives in Lisbon.", the note on Lisbon, when the facts only joined Ana and Maya).

    A small model often answers one fact for a sentence that states three, while its notes on the
    entities say the rest. A note becomes a fact only for a pair no extracted fact joins, when it
    names exactly two of the episode's entities; it is grounded like any fact (the sentence of the
    message that names both must say it) when the facts are built. It costs no call.
    """
    def key(name: str) -> str | None:
        entity = resolved.find(name)
        return entity.id if entity is not None else None

    joined = {frozenset((key(f.source), key(f.target))) for f in facts}
    names = [name for name, _ in resolved.mentioned]
    found: list[ExtractedFact] = []
    for entity in entities:
        note = in_third_person(entity.summary.strip(), text.speaker)
        named = list(dict.fromkeys(n for n in names if is_named(n, [note])))
        pair = {key(n) for n in named}
        if len(named) != 2 or len(pair) != 2 or None in pair or frozenset(pair) in joined:
            continue
        found.append(ExtractedFact(source=named[0], target=named[1], fact=note))
        joined.add(frozenset(pair))
    return found
