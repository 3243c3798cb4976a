"""A context block in the form of a named template (Zep's context templates), over a memory's groups.

One search sized to the template's sections (each scope asks for three times what its section
shows, so the sections filtered by type still fill), then :func:`~chronomem.search.templates.render_template`
fills each section in rank order. The user and thread summaries come from the caller, who knows whose
they are (the service's :class:`~chronomem.app.tenancy.ProjectSpace`); so do the stored
templates. With ``include_evidence`` each fact line ends with the words of the episode that state
it, as in the default block.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from chronomem.domain import Fact
from chronomem.search.config import ScopeConfig, SearchConfig
from chronomem.search.context import evidence_quotes
from chronomem.search.templates import Template, render_template

if TYPE_CHECKING:
    from chronomem.memory import Chronomem
    from chronomem.store import Store

__all__ = ["quotes_of", "templated_context"]

_MAX_SCOPE_LIMIT = 100


def _scope(template: Template, kind: str) -> ScopeConfig | None:
    limit = template.limit(kind)
    return ScopeConfig(limit=min(_MAX_SCOPE_LIMIT, limit * 3), candidates=max(50, limit * 3)) if limit else None


async def templated_context(
    memory: Chronomem,
    group_ids: Sequence[str],
    query: str,
    template: Template,
    *,
    summaries: Mapping[str, Sequence[str]] | None = None,
    include_evidence: bool = False,
) -> str:
    """``template`` filled for ``query`` from ``group_ids``; ``summaries`` holds the
    ``user_summary`` text and the ``thread_summaries`` lines (absent: those sections are empty)."""
    config = SearchConfig(facts=_scope(template, "facts"), entities=_scope(template, "entities"),
                          episodes=_scope(template, "episodes"), communities=None)
    found = await memory.search(list(group_ids), query, config=config)
    facts = [f for f, _ in found.facts]
    return render_template(
        template, facts=facts, entities=[e for e, _ in found.entities], episodes=[e for e, _ in found.episodes],
        summaries=summaries, quotes=await quotes_of(memory.store, facts) if include_evidence else None,
    )


async def quotes_of(store: Store, facts: Sequence[Fact]) -> dict[str, str]:
    """Fact id → the words of its first evidence span, read from its episode (one read per group)."""
    wanted: dict[str, set[str]] = {}
    for fact in facts:
        if fact.evidence:
            wanted.setdefault(fact.group_id, set()).add(fact.evidence[0].episode_id)
    episodes = await asyncio.gather(*(store.get_episodes(g, sorted(ids)) for g, ids in wanted.items()))
    return evidence_quotes(facts, [e for found in episodes for e in found])
