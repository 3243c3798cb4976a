"""A scripted model double for the ingestion suites: answers written per test from the typed contexts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from chronomem.ingest.prompts import (
    CandidateFact,
    EndedFacts,
    EntityMatches,
    ExtractedEntities,
    ExtractedEntity,
    ExtractedFact,
    ExtractedFacts,
    ExtractedGraph,
    FactQuestion,
    FactVerdicts,
    RewrittenSummaries,
)


def at(text: str) -> datetime:
    """A UTC datetime from ``YYYY-MM-DD`` (optionally with ``THH:MM``)."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _quoted(fact: dict[str, Any], current: str) -> dict[str, Any]:
    return fact if "quote" in fact else {**fact, "quote": current}


class Script:
    """Answers ingestion prompts from per-episode scripts keyed by a fragment of the episode text.

    ``episodes[fragment] = (entities, facts)`` where entities are names (or ``(name, type, attrs)``, or dicts
    of :class:`ExtractedEntity` fields) and
    facts are dicts of :class:`ExtractedFact` fields (without a ``quote``, a fact quotes the whole current
    message: grounded, as a real model's quote would be). Resolution answers come from ``entity_matches``
    (new name -> existing name) and ``fact_verdict`` (a function of the new fact and candidates).
    """

    def __init__(self) -> None:
        self.episodes: dict[str, tuple[list[Any], list[dict[str, Any]]]] = {}
        self.entity_matches: dict[str, str] = {}
        self.fact_verdict: Callable[[Any], dict[str, Any]] = lambda question: {"index": question.index}
        # which KNOWN FACTS an episode ends: a function of the review's context, answering its entries
        self.endings: Callable[[Any], list[dict[str, Any]]] = lambda context: []
        self.fail_once: set[str] = set()
        self.questions: dict[str, list[Any]] = {}

    def _find(self, current: str) -> tuple[list[Any], list[dict[str, Any]]]:
        for fragment, script in self.episodes.items():
            if fragment in current:
                return script
        return [], []

    @staticmethod
    def _entity(item: Any) -> ExtractedEntity:
        if isinstance(item, str):
            return ExtractedEntity(name=item)
        if isinstance(item, dict):  # {"name": ..., "aliases": [...], ...}
            return ExtractedEntity(**item)
        name, kind, attributes = item
        return ExtractedEntity(name=name, type=kind, attributes=attributes)

    def __call__(self, prompt: Any, context: Any) -> Any:
        if prompt.name in self.fail_once:
            self.fail_once.discard(prompt.name)
            from chronomem.errors import ModelUnavailableError

            raise ModelUnavailableError(f"injected failure in {prompt.name}")
        handler = getattr(self, "_" + prompt.name)
        return handler(context)

    def _extract_entities(self, ctx: Any) -> ExtractedEntities:
        entities, _ = self._find(ctx.episode.current)
        return ExtractedEntities(entities=[self._entity(e) for e in entities])

    def _extract_facts(self, ctx: Any) -> ExtractedFacts:
        """Facts, with the folded answers: verdicts against the EXISTING FACTS shown, and same_as."""
        _, facts = self._find(ctx.episode.current)
        self.questions.setdefault("extract_facts", []).append(ctx)
        answered = []
        for index, fact in enumerate(facts):
            shown = tuple(
                CandidateFact(c.index, c.fact, c.relation_type, fact["source"] in c.fact and fact["target"] in c.fact,
                              c.valid_at, c.invalid_at)
                for c in ctx.existing
            )
            question = FactQuestion(index, fact["fact"], fact["relation_type"], shown)
            verdict = self.fact_verdict(question) if shown else {}
            answered.append(ExtractedFact(**_quoted(fact, ctx.episode.current),
                                          duplicate_of=verdict.get("duplicate_of"),
                                          contradicts=verdict.get("contradicts", [])))
        same_as = self._match(ctx.ambiguous)
        return ExtractedFacts(facts=answered, same_as=same_as.matches)

    def _extract_graph(self, ctx: Any) -> ExtractedGraph:
        entities, facts = self._find(ctx.episode.current)
        return ExtractedGraph(entities=[self._entity(e) for e in entities],
                              facts=[ExtractedFact(**_quoted(f, ctx.episode.current)) for f in facts])

    def _resolve_entities(self, ctx: Any) -> EntityMatches:
        return self._match(ctx.questions)

    def _match(self, questions: Any) -> EntityMatches:
        self.questions.setdefault("entities", []).extend(questions)
        matches = []
        for question in questions:
            wanted = self.entity_matches.get(question.name)
            found = next((c.index for c in question.candidates if c.name == wanted), None)
            matches.append({"index": question.index, "duplicate_of": found, "name": wanted})
        return EntityMatches.model_validate({"matches": matches})

    def _resolve_facts(self, ctx: Any) -> FactVerdicts:
        self.questions.setdefault("resolve_facts", []).extend(ctx.questions)
        return FactVerdicts.model_validate({"verdicts": [self.fact_verdict(q) for q in ctx.questions]})

    def _review_endings(self, ctx: Any) -> EndedFacts:
        self.questions.setdefault("review_endings", []).append(ctx)
        return EndedFacts.model_validate({"ended": self.endings(ctx)})

    def _rewrite_summaries(self, ctx: Any) -> RewrittenSummaries:
        return RewrittenSummaries.model_validate(
            {"summaries": [{"index": i.index, "summary": i.summary[-ctx.target_chars :]} for i in ctx.items]}
        )
