"""Stages 8–9: incremental summaries, and everything an episode changes as one write."""

from __future__ import annotations

from chronomem.domain import Episode, EpisodeStatus, Mention
from chronomem.ingest.prompts import (
    SUMMARY_REWRITE,
    SummaryContext,
    SummaryItem,
)
from chronomem.ingest.session import Session, stage
from chronomem.ingest.stages.entities import ResolvedEntities
from chronomem.ingest.stages.facts import FactChanges
from chronomem.ingest.summaries import append_sentences, remove_sentences, to_rewrite
from chronomem.store.base import GraphWrite

__all__ = [
    "assemble_write",
    "finished",
    "update_summaries",
]


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
    if session.deterministic:  # no model to ask: keep the newest sentences within the bound
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
