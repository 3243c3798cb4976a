"""The stages of ingestion (docs/design.md §2, paper §2.2), one function each, in pipeline order.

Every stage reads and writes plain data; a :class:`~chronomem.ingest.session.Session` carries the
store, the models, the per-episode embedding cache and the usage meter. Nothing here writes to the
store: :func:`~.writing.assemble_write` gathers everything into one :class:`~chronomem.store.GraphWrite`.

- :mod:`.extraction`: context (2), entity extraction (3), fact extraction (5, with folded resolution)
- :mod:`.entities`: entity resolution (4)
- :mod:`.facts`: fact drafts (5), fact resolution (6), invalidation (7)
- :mod:`.writing`: summaries (8), the one write (9)

The pipeline imports each stage from its module. A module's ``__all__`` names the stages and the
data they pass on; its other functions are the stages' own helpers (the fact-extraction call reuses
some of entity resolution's), not an interface, so this package re-exports nothing.
"""
