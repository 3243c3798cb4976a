"""Every ingestion prompt is a static prefix followed by the call's data, so a provider's prompt cache
(llama.cpp's RAM cache, vLLM's prefix cache, OpenAI's automatic one, Anthropic's breakpoints) can
reuse the instructions instead of reading them again on every call."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from chronomem.domain import EpisodeKind
from chronomem.ingest.prompts import (
    COMBINED_EXTRACTION,
    END_REVIEW,
    ENTITY_EXTRACTION,
    ENTITY_REFLEXION,
    ENTITY_RESOLUTION,
    FACT_EXTRACTION,
    FACT_RESOLUTION,
    SUMMARY_REWRITE,
    CandidateEntity,
    CandidateFact,
    CombinedExtractionContext,
    EndReviewContext,
    EntityExtractionContext,
    EntityQuestion,
    EntityRef,
    EntityResolutionContext,
    EpisodeText,
    FactExtractionContext,
    FactQuestion,
    FactResolutionContext,
    ReflexionContext,
    SummaryContext,
    SummaryItem,
    TypeSpec,
)
from chronomem.llm.base import Prompt

PERSON = (TypeSpec("Person", "A human being.", (("occupation", "str", "their job"),)),)
EMPLOYMENT = (TypeSpec("WORKS_FOR", "Employment.", signature=(("Person", "Organization"),)),)


def _episode(n: int) -> EpisodeText:
    """Two episodes that differ in everything a call may vary by: text, speaker, day, history."""
    if n == 0:
        return EpisodeText("Maya Patel: I joined Globex in March.", datetime(2024, 6, 1, tzinfo=UTC),
                           previous=("Maya Patel: hi",), source_description="chat with Maya")
    return EpisodeText("Tomás Ruiz: My sister Ana moved to Lisbon last week, and Ana's dog Bolt went too.",
                       datetime(2025, 1, 17, 9, 30, tzinfo=UTC), previous=("Tomás Ruiz: so", "Ana: yes", "x"))


def _contexts(n: int) -> dict[str, Any]:
    episode = _episode(n)
    names = ("Maya Patel", "Globex") if n == 0 else ("Tomás Ruiz", "Ana", "Lisbon", "Bolt")
    refs = tuple(EntityRef(name) for name in names)
    question = EntityQuestion(n, names[0], "Person", (CandidateEntity(n + 1, f"{names[0]} Sr.", "a summary"),))
    fact = FactQuestion(n, f"{names[0]} knows {names[1]}", "KNOWS",
                        (CandidateFact(n + 2, f"{names[1]} met {names[0]}", "MET", n == 0),))
    existing = (CandidateFact(n + 1, f"{names[0]} lives in Porto", "LIVES_IN", True),) * (n + 1)
    return {
        "extract_entities": EntityExtractionContext(episode, PERSON, instructions="Names in full." * n),
        "entity_reflexion": ReflexionContext(episode, names[: n + 1], PERSON),
        "extract_facts": FactExtractionContext(episode, refs, EMPLOYMENT, existing=existing * n,
                                               ambiguous=(question,) * n),
        "extract_graph": CombinedExtractionContext(episode, PERSON, EMPLOYMENT),
        "resolve_entities": EntityResolutionContext(episode, (question,) * (n + 1)),
        "resolve_facts": FactResolutionContext((fact,) * (n + 1)),
        "review_endings": EndReviewContext(episode, existing),
        "rewrite_summaries": SummaryContext((SummaryItem(n, names[0], "Notes."),), 300 + 100 * n),
    }


PROMPTS: tuple[Prompt[Any, Any], ...] = (ENTITY_EXTRACTION, ENTITY_REFLEXION, FACT_EXTRACTION, COMBINED_EXTRACTION,
                                         ENTITY_RESOLUTION, FACT_RESOLUTION, END_REVIEW, SUMMARY_REWRITE)


@pytest.mark.parametrize("prompt", PROMPTS, ids=lambda p: p.name)
def test_two_calls_share_the_whole_system_message_and_differ_only_after_it(prompt: Prompt[Any, Any]) -> None:
    first, second = (prompt.messages(_contexts(n)[prompt.name]) for n in (0, 1))
    assert [m.role for m in first] == [m.role for m in second] == ["system", "user"]
    assert first[0].content == second[0].content  # byte-identical: the static prefix
    assert first[1].content != second[1].content
    # nothing of either call's data is in the prefix
    for data in ("Maya", "Globex", "Tomás", "Lisbon", "2024-06-01", "2025-01-17", "Porto", "Sr."):
        assert data not in first[0].content


def test_the_prefix_is_shared_across_groups_and_kinds_of_episode_with_the_same_ontology() -> None:
    # messages, documents and JSON records alternate in one group: one prefix serves them all
    episodes = [EpisodeText(text, datetime(2024, 1, 1, tzinfo=UTC), kind=kind)
                for text, kind in zip(("a: b", "c: d", '{"e": 1}'), EpisodeKind, strict=True)]
    for prompt, context in ((ENTITY_EXTRACTION, lambda e: EntityExtractionContext(e, PERSON)),
                            (COMBINED_EXTRACTION, lambda e: CombinedExtractionContext(e, PERSON, EMPLOYMENT))):
        assert len({prompt.messages(context(e))[0].content for e in episodes}) == 1


def test_without_relation_types_the_fact_prompt_is_a_prefix_of_the_prompt_with_them() -> None:
    # groups with and without declared relation types share every instruction; the types come last
    bare = FACT_EXTRACTION.messages(FactExtractionContext(_episode(0), ()))[0].content
    typed = FACT_EXTRACTION.messages(FactExtractionContext(_episode(0), (), EMPLOYMENT))[0].content
    assert typed.startswith(bare)
