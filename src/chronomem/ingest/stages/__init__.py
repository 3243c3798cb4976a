"""The stages of ingestion (DESIGN §2, paper §2.2), one function each, in pipeline order.

Every stage reads and writes plain data; a :class:`~chronomem.ingest.session.Session` carries the
store, the models, the per-episode embedding cache and the usage meter. Nothing here writes to the
store: :func:`assemble_write` gathers everything into one :class:`~chronomem.store.GraphWrite`.

- :mod:`.extraction`: context (2), entity extraction (3), fact extraction (5, with folded resolution)
- :mod:`.entities`: entity resolution (4)
- :mod:`.facts`: fact drafts (5), fact resolution (6), invalidation (7)
- :mod:`.writing`: summaries (8), the one write (9)
"""

from chronomem.ingest.stages.entities import (
    NamedEntity,
    ResolvedEntities,
    ask_about_ambiguous,
    entity_questions,
    named_entities,
    read_matches,
    resolve_entities,
    settle,
    specific_label,
)
from chronomem.ingest.stages.extraction import (
    FactExtraction,
    extract_entities,
    extract_facts,
    extract_graph,
    facts_near_episode,
    load_context,
)
from chronomem.ingest.stages.facts import (
    FactChanges,
    FactDrafts,
    apply_invalidation,
    build_facts,
    resolve_facts,
    vet,
)
from chronomem.ingest.stages.writing import (
    assemble_write,
    finished,
    update_summaries,
)

__all__ = [
    "FactChanges",
    "FactDrafts",
    "FactExtraction",
    "NamedEntity",
    "ResolvedEntities",
    "apply_invalidation",
    "ask_about_ambiguous",
    "assemble_write",
    "build_facts",
    "entity_questions",
    "extract_entities",
    "extract_facts",
    "extract_graph",
    "facts_near_episode",
    "finished",
    "load_context",
    "named_entities",
    "read_matches",
    "resolve_entities",
    "resolve_facts",
    "settle",
    "specific_label",
    "update_summaries",
    "vet",
]
