"""``Ingestor``: episodes in, a bi-temporal graph out (docs/design.md §2, paper §2).

``add_episode`` persists the episode first, then runs the stages in order::

    context → extract entities → resolve entities → extract facts → resolve facts
            → facts the episode ends → invalidation → summaries → one write (graph + `done` + usage)

Lifecycle guarantees:

- re-adding an episode id is a no-op (a different content under the same id is a ``ConflictError``);
- one group's episodes are processed one at a time (a per-group lock), groups run in parallel;
- every graph change of an episode and its ``done`` status land in one atomic write: a failure at any
  stage writes nothing, marks the episode ``failed`` with the stage and error, and a retry completes it;
- with no model configured, episodes are stored, embedded and searchable, marked ``unextracted``, and
  :meth:`Ingestor.reprocess` extracts them later; JSON episodes with a declared mapping and
  :meth:`Ingestor.add_fact` need no model at all.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from types import EllipsisType

from chronomem.domain import Episode, EpisodeKind, EpisodeStatus, Fact
from chronomem.embed.base import Embedder
from chronomem.errors import ConfigurationError, ConflictError, IngestionError, InvalidInputError, NotFoundError
from chronomem.ingest.bulk import ingest_in_order
from chronomem.ingest.config import IngestConfig
from chronomem.ingest.json_mapping import JsonMapping, find_mapping, parse_record
from chronomem.ingest.ontology import Ontology
from chronomem.ingest.places import ready as places_ready
from chronomem.ingest.profiles import GroupProfiles
from chronomem.ingest.prompts import EpisodeText, ExtractedEntity, ExtractedFact, ExtractedGraph
from chronomem.ingest.provenance import CORRECTION, DIRECT, Provenance, cite, correct
from chronomem.ingest.removal import plan_removal
from chronomem.ingest.resolution import match_key
from chronomem.ingest.results import EntitiesAdded, IngestResult, RemovalResult
from chronomem.ingest.session import Session
from chronomem.ingest.stages.ended import review_endings
from chronomem.ingest.stages.entities import ResolvedEntities, named_entities, resolve_entities, resolve_left_out
from chronomem.ingest.stages.extraction import (
    FactExtraction,
    extract_entities,
    extract_facts,
    extract_graph,
    facts_from_notes,
    facts_near_episode,
    load_context,
)
from chronomem.ingest.stages.facts import FactChanges, apply_invalidation, build_facts, resolve_facts
from chronomem.ingest.stages.writing import assemble_write, finished, update_summaries
from chronomem.ingest.voice import in_third_person
from chronomem.llm.base import LanguageModel
from chronomem.store.base import GraphWrite, Store
from chronomem.telemetry import metrics, span
from chronomem.timeutil import ensure_utc, utc_now

__all__ = ["Ingestor"]

_RERUNNABLE = (EpisodeStatus.PENDING, EpisodeStatus.PROCESSING, EpisodeStatus.FAILED)


@dataclass(slots=True)
class _Outcome:
    write: GraphWrite
    result: IngestResult


class Ingestor:
    """Runs the ingestion pipeline over a store; see the module docstring for its guarantees."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        llm: LanguageModel | None,
        *,
        config: IngestConfig | None = None,
        ontology: Ontology | None = None,
        on_entities_added: EntitiesAdded | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.llm = llm
        self.config = config or IngestConfig()
        self.ontology = ontology or Ontology()
        self.on_entities_added = on_entities_added
        self.profiles: GroupProfiles | None = None  # per-group ontology and mappings (the service's projects)
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._populated: set[tuple[str, str]] = set()  # (group, scope) known to hold vectors

    def _lock(self, group_id: str) -> asyncio.Lock:
        lock = self._locks.get(group_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[group_id] = lock
        return lock

    # -- episodes ----------------------------------------------------------------------------------

    async def enqueue(self, episode: Episode) -> Episode:
        """Store the episode durably as given (``pending`` by default), or return the stored one: ids
        are idempotent. Returns ``episode`` itself when it was inserted now."""
        stored, inserted = await self.store.insert_episode(episode)
        if inserted:
            return episode
        if (stored.content, stored.kind) != (episode.content, episode.kind):
            raise ConflictError(f"episode {episode.id!r} already exists in {episode.group_id!r} with other content")
        return stored

    async def add_episode(self, episode: Episode) -> IngestResult:
        """Persist, then extract the episode into the graph. Re-adding a processed id changes nothing.

        A new episode is persisted already claimed (``processing``, first attempt): durable before
        anything can fail, and no queue worker takes it meanwhile; a crash leaves it to
        ``reset_processing``, which queues it again.
        """
        lock = self._lock(episode.group_id)
        async with lock:
            claimed = episode.model_copy(update={"status": EpisodeStatus.PROCESSING, "attempts": 1, "last_error": None})
            stored = await self.enqueue(claimed)
            if stored is not claimed and stored.status not in _RERUNNABLE:
                return IngestResult(stored, skipped=True)
            return await self._process_locked(stored, claimed=stored is claimed)

    async def process(self, group_id: str, episode_id: str) -> IngestResult:
        """Extract a stored episode (``pending``, ``failed`` or left ``processing`` by a crash)."""
        lock = self._lock(group_id)
        async with lock:
            found = await self.store.get_episodes(group_id, [episode_id])
            if not found:
                raise NotFoundError(f"no episode {episode_id!r} in group {group_id!r}")
            if found[0].status is EpisodeStatus.DONE:
                return IngestResult(found[0], skipped=True)
            return await self._process_locked(found[0])

    async def reprocess(self, group_id: str) -> int:
        """Extract the group's ``unextracted`` and ``failed`` episodes, oldest first; returns how many."""
        if self.llm is None:
            raise ConfigurationError("reprocess needs a language model: configure one (see docs/ingestion.md)")
        waiting = await self.store.list_episodes(
            group_id, statuses=[EpisodeStatus.UNEXTRACTED, EpisodeStatus.FAILED], newest_first=False
        )
        for episode in waiting:
            await self.process(group_id, episode.id)
        return len(waiting)

    async def add_episodes(self, episodes: Sequence[Episode], *, progress: bool = True) -> list[IngestResult]:
        """Bulk ingestion: each group's episodes in the order given, groups in parallel.

        A failed episode does not stop the others; its result carries the ``failed`` episode.
        """
        return await ingest_in_order(episodes, self._add_recording_failure, progress=progress)

    async def _add_recording_failure(self, episode: Episode) -> IngestResult:
        try:
            return await self.add_episode(episode)
        except IngestionError as exc:
            stored = await self.store.get_episodes(episode.group_id, [episode.id])
            return IngestResult(stored[0] if stored else episode, warnings=(str(exc),))

    def _declared_for(self, group_id: str) -> tuple[IngestConfig, Ontology]:
        """The ingestion config and ontology that apply to the group: its profile's, else ours."""
        profile = self.profiles.profile(group_id) if self.profiles is not None else None
        if profile is None:
            return self.config, self.ontology
        config = self.config
        if profile.json_mappings is not None:
            config = config.model_copy(update={"json_mappings": profile.json_mappings})
        return config, profile.ontology if profile.ontology is not None else self.ontology

    async def _process_locked(self, episode: Episode, *, claimed: bool = False) -> IngestResult:
        started, outcome = time.perf_counter(), "error"
        try:
            with span("episode", episode_id=episode.id, group_id=episode.group_id, kind=episode.kind.value):
                result = await self._process_episode(episode, claimed)
            outcome = "ok"
            return result
        finally:
            metrics.record_episode_duration(outcome, time.perf_counter() - started)

    async def _process_episode(self, episode: Episode, claimed: bool) -> IngestResult:
        declared = self._declared_for(episode.group_id)  # looked up once per episode
        mapping = find_mapping(declared[0].json_mappings, episode) if episode.kind is EpisodeKind.JSON else None
        if self.llm is None and mapping is None:
            return await self._store_unextracted(episode, declared)
        # declared structure is resolved by the rules alone, no model even if one is set
        session = self._session(episode.group_id, episode.reference_time, episode, deterministic=mapping is not None,
                                declared=declared)
        try:
            # entering `processing` counts the attempt (a claimed episode is in it already); the context
            # read does not depend on it
            episode, text = await asyncio.gather(self._claim(episode, claimed), load_context(session, episode))
            session.episode = episode
            outcome = await self._run_stages(session, episode, text, mapping)
            await self.store.write(outcome.write)
        except Exception as exc:
            message = f"{session.current_stage}: {type(exc).__name__}: {exc}"
            await self.store.set_episode_status(episode.group_id, episode.id, EpisodeStatus.FAILED, error=message)
            raise IngestionError(f"episode {episode.id!r} failed at {message}", stage=session.current_stage) from exc
        await self._announce(outcome.result)
        return outcome.result

    async def _claim(self, episode: Episode, claimed: bool) -> Episode:
        if claimed:
            return episode
        return await self.store.set_episode_status(episode.group_id, episode.id, EpisodeStatus.PROCESSING)

    async def _store_unextracted(self, episode: Episode, declared: tuple[IngestConfig, Ontology]) -> IngestResult:
        """No model: keep the episode searchable (text and vector) and say it awaits extraction."""
        session = self._session(episode.group_id, episode.reference_time, episode, declared=declared)
        await session.vectors.embed([episode.text])
        stored = finished(episode, session, EpisodeStatus.UNEXTRACTED)
        await self.store.write(
            GraphWrite(episode.group_id, episodes=[stored], episode_vectors={episode.id: session.vectors[episode.text]})
        )
        return IngestResult(stored, usage=session.usage)

    def _session(
        self, group_id: str, reference_time: datetime, episode: Episode | None, *, deterministic: bool = False,
        declared: tuple[IngestConfig, Ontology] | None = None,
    ) -> Session:
        config, ontology = declared or self._declared_for(group_id)
        return Session(
            store=self.store, embedder=self.embedder, llm=self.llm, config=config, ontology=ontology,
            group_id=group_id, reference_time=reference_time, now=utc_now(), episode=episode,
            populated=self._populated, deterministic=deterministic,
        )

    async def _run_stages(
        self, session: Session, episode: Episode, text: EpisodeText, mapping: JsonMapping | None
    ) -> _Outcome:
        """The paper's pipeline, stage by stage (docs/design.md §2), after the context (stage 2) is loaded."""
        extracted = await self._extract(session, episode, text, mapping)
        trusted = mapping is not None
        staged = session.config.extraction == "staged" and not trusted
        if session.config.place_names and not trusted:
            await places_ready()  # named_entities looks places up: the gazetteer is built off the loop
        named = named_entities(session, extracted.entities, trusted=trusted, text=None if trusted else text)
        # facts near the episode are fetched while its names resolve (they need only its vector)
        resolved, nearby = await asyncio.gather(
            resolve_entities(session, text, named, defer_ambiguous=staged),
            facts_near_episode(session, text) if staged else _no_facts(),
        )
        found = FactExtraction(extracted.facts)
        if staged:
            found = await extract_facts(session, text, resolved, nearby)
        if not trusted:
            await resolve_left_out(session, text, found.facts, resolved)
        if not trusted and session.config.facts_from_notes:
            found.facts = [*found.facts, *facts_from_notes(extracted.entities, found.facts, resolved, text)]
        drafts = build_facts(session, found.facts, resolved, found.shown, text=None if trusted else text)
        outcomes = await resolve_facts(session, drafts)
        ended = [] if trusted else await review_endings(session, text, resolved, drafts.facts, outcomes)
        changes = apply_invalidation(session, drafts.facts, outcomes, ended)
        await update_summaries(session, resolved, changes, _summary_notes(extracted.entities, text.speaker),
                               None if trusted else text)
        write = await assemble_write(session, resolved, changes, episode=episode)
        done = finished(episode, session)  # `done`, with the usage of every stage, in the same write
        write.episodes.append(done)
        return _Outcome(write, self._result(done, session, resolved, changes))

    async def _extract(
        self, session: Session, episode: Episode, text: EpisodeText, mapping: JsonMapping | None
    ) -> ExtractedGraph:
        """Entities (and, combined or mapped, facts) of the episode."""
        if mapping is not None:  # declared structure: the session is deterministic (see _process_locked)
            session.current_stage = "json_mapping"
            return mapping.extract(parse_record(episode), episode.reference_time)
        if session.config.extraction == "combined":
            return await extract_graph(session, text)
        return ExtractedGraph(entities=await extract_entities(session, text))

    @staticmethod
    def _result(episode: Episode, session: Session, resolved: ResolvedEntities, changes: FactChanges) -> IngestResult:
        return IngestResult(
            episode=episode,
            entities_created=tuple(resolved.entities[i] for i in resolved.created),
            entities_updated=tuple(resolved.entities[i] for i in resolved.changed - resolved.created),
            facts_created=tuple(changes.created),
            facts_updated=tuple(changes.restated.values()),
            facts_invalidated=tuple(changes.invalidated.values()),
            usage=session.usage,
            warnings=tuple(session.warnings),
            entities_rejected=session.entities_rejected,
            facts_rejected=session.facts_rejected,
        )

    async def _announce(self, result: IngestResult) -> None:
        if self.on_entities_added is not None and result.entities_created:
            await self.on_entities_added(result.episode.group_id, [e.id for e in result.entities_created])

    # -- facts without a model ---------------------------------------------------------------------

    async def add_fact(
        self,
        group_id: str,
        source: str,
        relation_type: str,
        target: str,
        fact: str,
        *,
        valid_at: datetime | None = None,
        invalid_at: datetime | None = None,
        source_labels: Sequence[str] = ("Entity",),
        target_labels: Sequence[str] = ("Entity",),
        participants: Sequence[str] = (),
        provenance: Provenance | None = None,
    ) -> Fact:
        """Add one fact between named entities, resolved deterministically (no model call).

        ``participants`` names further entities of a fact over three or more (a hyperedge).
        ``provenance`` is the fact's source: an episode id of the group, or a named external
        :class:`FactSource` (default :data:`~chronomem.ingest.provenance.DIRECT`). A restatement
        (same participants, same text) adds its source to the stored fact and returns it; a
        single-valued relation of the ontology closes the previous value at ``valid_at``. The same
        text between the same participants under another relation type is a ``ConflictError``
        (nothing is written): the stored fact already says it, and keeping both would make one text
        mean two relations.
        """
        if not fact.strip() or not source.strip() or not target.strip() or not all(p.strip() for p in participants):
            raise InvalidInputError("add_fact needs a source, a target and a fact text (and named participants)")
        valid_at = ensure_utc(valid_at) if valid_at else None
        invalid_at = ensure_utc(invalid_at) if invalid_at else None
        provenance = DIRECT if provenance is None else provenance
        if isinstance(provenance, str) and not await self.store.get_episodes(group_id, [provenance]):
            raise NotFoundError(f"no episode {provenance!r} in group {group_id!r} to cite")
        extracted = ExtractedGraph(
            entities=[_entity(source, source_labels), _entity(target, target_labels),
                      *(_entity(name, ("Entity",)) for name in participants)],
            facts=[ExtractedFact(source=source, relation_type=relation_type, target=target, fact=fact,
                                 valid_at=valid_at.isoformat() if valid_at else None,
                                 invalid_at=invalid_at.isoformat() if invalid_at else None,
                                 others=list(participants))],
        )
        async with self._lock(group_id):
            # a declared fact is resolved by the rules alone, even when a model is configured
            session = self._session(group_id, valid_at or utc_now(), None, deterministic=True)
            named = named_entities(session, extracted.entities, trusted=True)
            resolved = await resolve_entities(session, None, named)
            drafts = build_facts(session, extracted.facts, resolved)
            if not drafts.facts:
                raise InvalidInputError(f"source and target are the same entity: {source!r}")
            changes = apply_invalidation(session, drafts.facts, await resolve_facts(session, drafts))
            _refuse_relabelling(changes, relation_type)
            changes.created = [cite(f, provenance) for f in changes.created]
            changes.restated = {i: cite(f, provenance) for i, f in changes.restated.items()}
            await update_summaries(session, resolved, changes)
            await self.store.write(await assemble_write(session, resolved, changes, episode=None))
        if self.on_entities_added is not None and resolved.created:
            await self.on_entities_added(group_id, sorted(resolved.created))
        return changes.created[0] if changes.created else next(iter(changes.restated.values()))

    async def update_fact(
        self,
        group_id: str,
        fact_id: str,
        *,
        fact: str | None = None,
        valid_at: datetime | EllipsisType | None = ...,
        invalid_at: datetime | EllipsisType | None = ...,
        provenance: Provenance | None = None,
    ) -> Fact:
        """Correct a fact: its text or its time range on T (``...`` keeps a field, ``None`` clears a
        date). The correction is a new version recorded now, citing ``provenance`` (an episode id or
        a :class:`FactSource`; default :data:`~chronomem.ingest.provenance.CORRECTION`); the version
        it replaces stays in the fact's history. Raises ``NotFoundError``, ``InvalidInputError``."""
        provenance = CORRECTION if provenance is None else provenance
        async with self._lock(group_id):
            found = await self.store.get_facts(group_id, [fact_id])
            if not found:
                raise NotFoundError(f"no fact {fact_id!r} in group {group_id!r}")
            if isinstance(provenance, str) and not await self.store.get_episodes(group_id, [provenance]):
                raise NotFoundError(f"no episode {provenance!r} in group {group_id!r} to cite")
            stored = found[0]
            corrected = cite(correct(stored, text=fact, valid_at=valid_at, invalid_at=invalid_at, now=utc_now()),
                             provenance)
            if corrected == stored:
                return stored
            vectors = {}
            if corrected.fact != stored.fact:
                vectors[fact_id] = (await self.embedder.embed([corrected.fact]))[0]
            await self.store.write(GraphWrite(group_id, facts=[corrected], fact_vectors=vectors))
            return (await self.store.get_facts(group_id, [fact_id]))[0]

    # -- removal -----------------------------------------------------------------------------------

    async def remove_episode(self, group_id: str, episode_id: str) -> RemovalResult:
        """Delete an episode and what only it supported (see :mod:`chronomem.ingest.removal`)."""
        async with self._lock(group_id):
            if not await self.store.get_episodes(group_id, [episode_id]):
                raise NotFoundError(f"no episode {episode_id!r} in group {group_id!r}")
            episode_facts = await self.store.facts_of_episode(group_id, episode_id)
            mentioned = (await self.store.entities_of_episodes(group_id, [episode_id])).get(episode_id, [])
            entity_ids = list(dict.fromkeys([*mentioned, *(e for f in episode_facts for e in f.entity_ids)]))
            neighbourhood = await self.store.facts_of_entities(group_id, entity_ids, include_superseded=True)
            plan = plan_removal(
                episode_id, episode_facts, neighbourhood,
                await self.store.get_entities(group_id, entity_ids),
                await self.store.episodes_of_entities(group_id, entity_ids),
                summary_max_chars=self.config.summary_max_chars, now=utc_now(),
            )
            await self.store.write(GraphWrite(
                group_id, entities=list(plan.updated_entities), facts=list(plan.updated_facts),
                delete_episode_ids=[episode_id], delete_fact_ids=list(plan.deleted_fact_ids),
                delete_entity_ids=list(plan.deleted_entity_ids),
            ))
        return RemovalResult(episode_id, plan.deleted_fact_ids, plan.updated_facts, plan.deleted_entity_ids,
                             plan.updated_entities)


def _summary_notes(entities: Sequence[ExtractedEntity], speaker: str | None) -> dict[str, str]:
    """The extraction answer's one-sentence summaries by name key (the first non-empty one of a name),
    in the third person like the facts."""
    notes: dict[str, str] = {}
    for entity in entities:
        if entity.summary.strip():
            notes.setdefault(match_key(entity.name), in_third_person(entity.summary.strip(), speaker))
    return notes


async def _no_facts() -> list[Fact]:
    return []


def _entity(name: str, labels: Sequence[str]) -> ExtractedEntity:
    specific = [label for label in labels if label != "Entity"]
    return ExtractedEntity(name=name, type=specific[0] if specific else "Entity")


def _refuse_relabelling(changes: FactChanges, relation_type: str) -> None:
    """A declared fact that restates a stored one under another relation type is a conflict."""
    for stored in changes.restated.values():
        if stored.relation_type != relation_type:
            raise ConflictError(
                f"fact {stored.id} between these entities already says {stored.fact!r} as "
                f"{stored.relation_type}, not {relation_type}; delete it first to relabel it"
            )
