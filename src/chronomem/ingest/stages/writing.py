"""Stages 8–9: incremental entity summaries (see :mod:`chronomem.ingest.summaries`), and everything an
episode changes as one write."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chronomem.domain import Entity, Episode, EpisodeStatus, Fact, Mention
from chronomem.ingest.prompts import (
    SUMMARY_REWRITE,
    EpisodeText,
    SummaryContext,
    SummaryItem,
)
from chronomem.ingest.resolution import match_key
from chronomem.ingest.session import Session, stage
from chronomem.ingest.stages.entities import ResolvedEntities
from chronomem.ingest.stages.facts import FactChanges
from chronomem.ingest.summaries import (
    BY_GRAPH,
    BY_MODEL,
    NOTE_MAX_CHARS,
    append_sentences,
    bounded,
    is_news,
    mention_note,
    remove_sentences,
    sentence,
    to_rewrite,
    unsupported_names,
)
from chronomem.llm.base import writes_prose
from chronomem.store.base import GraphWrite

__all__ = [
    "assemble_write",
    "finished",
    "update_summaries",
]


# -- 8. summaries --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Note:
    text: str
    source: str  # BY_MODEL or BY_GRAPH


@stage("update_summaries")
async def update_summaries(
    session: Session, resolved: ResolvedEntities, changes: FactChanges,
    notes: Mapping[str, str] | None = None, text: EpisodeText | None = None,
) -> None:
    """Grow each mentioned entity's summary by its note from this episode, drop closed fact sentences,
    and rewrite (one batched call) the summaries past the bound.

    ``notes`` are the extraction answer's one-sentence summaries by :func:`match_key` of the name;
    ``text`` is the episode as the model saw it, the ground the notes are checked against. An entity
    the model wrote no usable note for gets the graph's: the message's sentences naming it, else the
    texts of its new facts (the only notes without an episode: ``add_fact``, declared mappings).
    """
    by_model = not session.deterministic and session.llm is not None and writes_prose(session.llm)
    additions = _notes_of_episode(session, resolved, changes, notes or {}, text, by_model=by_model)
    removals: dict[str, list[Fact]] = {}
    for fact in changes.invalidated.values():
        for entity_id in fact.entity_ids:
            removals.setdefault(entity_id, []).append(fact)
    missing = [i for i in (*additions, *removals) if i not in resolved.entities]
    for loaded in await session.store.get_entities(session.group_id, list(dict.fromkeys(missing))) if missing else []:
        resolved.entities[loaded.id] = loaded
    for entity_id in dict.fromkeys((*additions, *removals)):
        entity = resolved.entities.get(entity_id)
        if entity is None:
            continue
        updated = _grown(session, entity, additions.get(entity_id, ()), removals.get(entity_id, ()),
                         new_facts=[f.fact for f in changes.created if entity_id in f.entity_ids])
        if updated is not entity:
            resolved.update(updated)
    await _rewrite_long_summaries(session, resolved, by_model=by_model)


def _notes_of_episode(
    session: Session, resolved: ResolvedEntities, changes: FactChanges, notes: Mapping[str, str],
    text: EpisodeText | None, *, by_model: bool,
) -> dict[str, list[_Note]]:
    """entity id -> the notes this episode adds to its summary (see :func:`update_summaries`)."""
    speaker = session.episode.speaker if session.episode is not None else None
    sources = (text.current, *text.previous) if text is not None else ()
    result: dict[str, list[_Note]] = {}
    for name, entity_id in resolved.mentioned:
        if entity_id in result:
            continue
        note = bounded(notes.get(match_key(name), ""), NOTE_MAX_CHARS)
        invented = unsupported_names(note, (*sources, name)) if note else []
        if note and not invented:
            result[entity_id] = [_Note(sentence(note), BY_MODEL if by_model else BY_GRAPH)]
            continue
        if invented:
            session.warn(f"summary note for {name!r} dropped: it names {', '.join(invented)}, which no message says")
        mentioned = mention_note(text.current, name, speaker=speaker) if text is not None else ""
        if mentioned:
            result[entity_id] = [_Note(mentioned, BY_GRAPH)]
    described = set(result)
    for fact in changes.created:  # entities nothing else described: their new facts are what the graph says
        if fact.invalid_at is None:
            for entity_id in fact.entity_ids:
                if entity_id not in described:
                    result.setdefault(entity_id, []).append(_Note(sentence(fact.fact), BY_GRAPH))
    return result


def _grown(session: Session, entity: Entity, notes: Sequence[_Note], closed: Sequence[Fact],
           *, new_facts: Sequence[str]) -> Entity:
    """``entity`` with the notes that are news appended and the closed facts' sentences removed, its
    ``summary_source`` saying who wrote it (a model only while every part is the model's).

    An entity whose every sentence closed and that this episode says nothing new about keeps what
    the graph still says of it, as history ("Until 2024-06-01: …"), rather than an empty summary.

    A note skipped as a repeat while the episode gave the entity a new fact may have missed what
    the fact says: such a fact's sentence is appended instead when it is news (bench/ingest.py
    counts these cases)."""
    summary = remove_sentences(entity.summary, [f.fact for f in closed])
    if not summary and closed and not notes:
        history = " ".join(_as_history(f) for f in closed)
        return entity.model_copy(update={"summary": bounded(history, session.config.summary_max_chars),
                                         "summary_source": BY_GRAPH})
    added: list[_Note] = []
    for note in notes:
        if is_news(summary, note.text):
            summary = append_sentences(summary, [note.text])
            added.append(note)
            continue
        session.summary_notes_skipped += 1
        if new_facts:
            session.summary_skips_with_new_fact += 1
            for fact in new_facts:
                if is_news(summary, fact):
                    summary = append_sentences(summary, [fact])
                    added.append(_Note(sentence(fact), BY_GRAPH))
                    session.summary_facts_for_skips += 1
    session.summary_notes_added += len(added)
    if summary == entity.summary:
        return entity
    source = entity.summary_source
    if added:
        model_only = all(n.source == BY_MODEL for n in added) and (not entity.summary or source == BY_MODEL)
        source = BY_MODEL if model_only else BY_GRAPH
    return entity.model_copy(update={"summary": summary, "summary_source": source or BY_GRAPH})


def _as_history(fact: Fact) -> str:
    """A closed fact's sentence, dated by when it stopped being true where that is known."""
    if fact.invalid_at is None:
        return f"Formerly: {sentence(fact.fact)}"
    return f"Until {fact.invalid_at:%Y-%m-%d}: {sentence(fact.fact)}"


async def _rewrite_long_summaries(session: Session, resolved: ResolvedEntities, *, by_model: bool) -> None:
    config = session.config
    touched = [resolved.entities[i] for i in (*resolved.created, *resolved.changed)]
    due = to_rewrite(touched, config.summary_max_chars, config.summary_early_rewrite)
    if not due:
        return
    if session.deterministic:  # no model to ask: keep the newest sentences within the bound
        for entity in due:
            resolved.update(entity.model_copy(update={"summary": _tail(entity.summary, config.summary_max_chars)}))
        return
    items = tuple(SummaryItem(i, e.name, e.summary) for i, e in enumerate(due))
    answer = await session.ask(SUMMARY_REWRITE, SummaryContext(items, config.summary_target_chars))
    for rewritten in answer.summaries:
        if not 0 <= rewritten.index < len(due) or not rewritten.summary.strip():
            continue
        entity = due[rewritten.index]
        if invented := unsupported_names(rewritten.summary, (entity.summary, entity.name, *entity.aliases)):
            session.warn(f"summary rewrite of {entity.name!r} dropped: it names {', '.join(invented)}, "
                         "which its notes do not")
            continue
        summary = bounded(rewritten.summary, config.summary_max_chars)
        resolved.update(entity.model_copy(update={"summary": summary,
                                                  "summary_source": BY_MODEL if by_model else BY_GRAPH}))
    for entity in due:  # a summary the answer left out (or that was dropped) still keeps within the bound
        current = resolved.entities[entity.id]
        if len(current.summary) > config.summary_max_chars:
            resolved.update(current.model_copy(update={"summary": _tail(current.summary, config.summary_max_chars)}))


def _tail(summary: str, max_chars: int) -> str:
    if len(summary) <= max_chars:
        return summary
    cut = summary[-max_chars:]
    return cut[cut.find(" ") + 1 :] if " " in cut else cut


# -- 9. one write --------------------------------------------------------------------------------------


@stage("write")
async def assemble_write(
    session: Session, resolved: ResolvedEntities, changes: FactChanges, *, episode: Episode | None
) -> GraphWrite:
    """Everything the episode changes as one atomic write; the caller adds the episode's final state to it."""
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
    if episode is not None:  # mentions both ways, and the episode's vector (it was searchable by text only)
        write.mentions.extend(Mention(group_id=session.group_id, episode_id=episode.id, entity_id=entity_id)
                              for entity_id in dict.fromkeys(eid for _, eid in resolved.mentioned))
        await session.vectors.embed([episode.text])
        write.episode_vectors[episode.id] = session.vectors[episode.text]
    return write


def finished(episode: Episode, session: Session, status: EpisodeStatus = EpisodeStatus.DONE) -> Episode:
    """The episode as stored at the end of its processing: status, usage, no error."""
    return episode.model_copy(update={"status": status, "last_error": None, "usage": session.usage_record()})
