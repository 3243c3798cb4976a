"""Where each LongMemEval question's evidence sessions ranked, for chronomem and for BM25.

A recall figure says how many questions missed; this says why: for every question, the rank (1 =
first distinct session) of each evidence session under a search config and under the BM25
baseline, and what the query decomposition made of the question. ``bench/lme_misses.py`` prints it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chronomem.datasets.longmemeval import LmeQuestion, lme_group, load_longmemeval
from chronomem.embed.base import Embedder
from chronomem.eval.bm25 import BM25
from chronomem.eval.configs import DEPTH, LME_CONFIG
from chronomem.eval.harness import DEFAULT_CACHE_DIR, open_memory, ranked_units
from chronomem.eval.ingest import indexed_lme, ingest
from chronomem.eval.metrics import distinct
from chronomem.memory import Chronomem
from chronomem.search.config import SearchConfig
from chronomem.search.decompose import event_queries

__all__ = ["EvidenceRanks", "evidence_ranks", "lme_evidence_ranks"]


@dataclass(frozen=True, slots=True)
class EvidenceRanks:
    question_id: str
    question_type: str
    question: str
    ours: dict[str, int | None]  # evidence session -> its rank among distinct sessions (None: not in the list)
    bm25: dict[str, int | None]
    events: tuple[str, ...]  # the sub-queries the question was split into

    def missed(self, k: int) -> bool:
        """Is an evidence session outside our top ``k``?"""
        return any(rank is None or rank > k for rank in self.ours.values())


def evidence_ranks(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, int | None]:
    """Rank (from 1) of each gold unit among the distinct units of ``ranked``, None if absent."""
    position = {unit: n for n, unit in enumerate(distinct(ranked), start=1)}
    return {g: position.get(g) for g in gold}


async def _one(memory: Chronomem, q: LmeQuestion, config: SearchConfig) -> EvidenceRanks:
    group = lme_group(q)
    await ingest(memory.store, memory.embedder, group, indexed_lme(q))
    ours = await ranked_units(memory, group, q.question, q.question_date, config)
    session_ids = [s.session_id for s in q.sessions]
    baseline = [session_ids[i] for i in BM25([s.user_text for s in q.sessions]).rank(q.question, DEPTH)]
    return EvidenceRanks(
        q.question_id, q.question_type, q.question, evidence_ranks(ours, q.answer_session_ids),
        evidence_ranks(baseline, q.answer_session_ids), tuple(event_queries(q.question)),
    )


async def lme_evidence_ranks(
    path: str | Path,
    *,
    config: SearchConfig | None = None,
    question_types: Sequence[str] = (),
    store_url: str | None = None,
    embedder: Embedder | None = None,
    cache_dir: str | Path | None = DEFAULT_CACHE_DIR,
) -> list[EvidenceRanks]:
    """Evidence ranks of every answerable question of a LongMemEval file (only ``question_types``,
    if given), searched with ``config`` (default :data:`LME_CONFIG`)."""
    questions = [
        q for q in load_longmemeval(path)
        if not q.is_abstention and (not question_types or q.question_type in question_types)
    ]
    async with open_memory(store_url=store_url, embedder=embedder, cache_dir=cache_dir) as memory:
        return [await _one(memory, q, config or LME_CONFIG) for q in questions]
