"""Ingestion settings: one typed, frozen object (docs/design.md §2). Thresholds are documented where used."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chronomem.ingest.json_mapping import JsonMapping

__all__ = ["ExtractionMode", "IngestConfig"]

ExtractionMode = Literal["staged", "combined"]


class IngestConfig(BaseModel):
    """Knobs of the ingestion pipeline. The defaults are the measured ones (docs/ingestion.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # context: the previous n episodes of the group (the paper's n = 4: two dialogue rounds)
    context_episodes: int = Field(default=4, ge=0)
    # the staged fact-extraction call sees only the newest of them (its entities are already named;
    # the last round is what resolves a pronoun): ~75 input tokens an episode less (docs/results/ingest.md)
    fact_context_episodes: int = Field(default=2, ge=0)
    # "staged": entities, then facts (paper); "combined": one call extracts both
    extraction: ExtractionMode = "staged"
    # a second pass asking the model which entities it missed (off: it costs one call per episode)
    reflexion: bool = False
    # facts the entity call's notes state between two entities that no extracted fact joins (grounded
    # like any fact; no call): a small model answers one fact where a sentence states three
    facts_from_notes: bool = True
    # the entity call writes each entity a one-sentence note (its summary grows by it, facts_from_notes
    # reads it); off, summaries grow by the message's sentences naming the entity and its new facts,
    # and the call writes about half the tokens: for local models, where each written token costs time
    entity_notes: bool = True

    # entity resolution (see chronomem.ingest.resolution)
    entity_candidates: int = Field(default=8, ge=1)  # per name, from each of cosine and BM25
    # only equal names merge without a model; a name this similar (rapidfuzz ratio / 100, or name
    # cosine) to an entity is asked about in the batched call
    fuzzy_ambiguous: float = 0.75
    embedding_ambiguous: float = 0.80
    # an entity bearing another name of the one place the GeoNames gazetteer knows by a name is asked
    # about ("München" for "Munich"; chronomem.ingest.places; needs the `places` extra)
    place_names: bool = True

    # fact resolution (see chronomem.ingest.fact_resolution)
    duplicate_similarity: float = 0.55  # same-pair facts at least this close are duplicate candidates
    contradiction_similarity: float = 0.70  # endpoint-sharing facts at least this close may contradict
    same_relation_similarity: float = 0.50  # the bound for facts of the same relation type
    fact_candidates: int = Field(default=6, ge=1)  # per new fact, per kind
    # existing facts shown to the fact-extraction call, which judges new facts against them at no extra call;
    # 10, not 16: 120 input tokens an episode less for 0.02 more resolution calls (the rest are judged there).
    # 0 suits small local models, which copy the facts shown back as the episode's (docs/results/extraction.md)
    facts_shown: int = Field(default=10, ge=0)
    # one call per episode asks which current facts of its entities the message ends (stages/ended.py):
    # a change seldom reads like the fact it ends, so resolution by closeness alone never offers it
    end_review: bool = True
    end_candidates: int = Field(default=12, ge=1)  # current facts shown to that call, the closest first

    # entity summaries grow by one note per episode (chronomem.ingest.summaries); past this many
    # characters a batched rewrite turns the notes into a narrative of summary_target_chars
    summary_max_chars: int = Field(default=1200, ge=100)
    summary_target_chars: int = Field(default=400, ge=50)
    # summaries already past this fraction of the bound join a rewrite that happens anyway (amortized)
    summary_early_rewrite: float = Field(default=0.7, gt=0, le=1)

    # JSON episodes matching one of these are mapped to entities and facts without a model
    json_mappings: tuple[JsonMapping, ...] = ()
