"""Hand edits of the graph (an entity renamed, a summary corrected, a fact reworded) and their
provenance.

Episodes are the root of all provenance (docs/design.md §1), so an edit is recorded as one: a ``json``
episode whose content says what changed, from what to what, and who asked (``source``: the API
key's project, the CLI…). It is stored ``done`` — there is nothing to extract — and the edited
entity gains a mention of it (a fact gains it in its episode list), so "where did this come from?"
answers "an edit at t by s" the same way it answers "this message". The edit and the changed
object land in one atomic write.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from chronomem.domain import Entity, Episode, EpisodeKind, EpisodeStatus, Fact, Mention

__all__ = ["EDIT_SOURCE_PREFIX", "changed_fields", "edit_episode", "edit_mention"]

EDIT_SOURCE_PREFIX = "edit"


def changed_fields(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{field: {"from": old, "to": new}}`` for each field whose value differs."""
    return {
        name: {"from": before.get(name), "to": value}
        for name, value in after.items()
        if before.get(name) != value
    }


def edit_episode(target: Entity | Fact, changes: Mapping[str, dict[str, Any]], *, source: str) -> Episode:
    """The episode that records an edit of ``target`` (see the module docstring)."""
    kind = "entity" if isinstance(target, Entity) else "fact"
    content = json.dumps({"edit": kind, "id": target.id, "changes": changes, "source": source},
                         default=str, sort_keys=True)
    return Episode(
        group_id=target.group_id, kind=EpisodeKind.JSON, content=content, status=EpisodeStatus.DONE,
        source_description=f"{EDIT_SOURCE_PREFIX}: {kind} {target.id} by {source}",
    )


def edit_mention(entity: Entity, episode: Episode) -> Mention:
    return Mention(group_id=entity.group_id, episode_id=episode.id, entity_id=entity.id)
