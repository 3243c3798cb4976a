"""A cross-encoder that asks a language model to grade many passages in one call.

The prompt lists the passages by number and asks for one integer grade from 0 (irrelevant) to 10
(answers the query) per passage, in order; grades are divided by 10 to land in [0, 1]. The answer
model is built per batch size (``scores`` must have exactly that many items), so a model that skips
a passage gets the corrective retry rather than a silent default. Batches of ``batch_size`` passages
run concurrently; the prompt's role is ``"rerank"`` so settings can route it to a cheap model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated

from pydantic import BaseModel, Field, create_model

from chronomem.llm.base import LanguageModel, Message, Prompt

__all__ = ["LLMCrossEncoder", "RerankContext", "rerank_prompt"]

_SYSTEM = (
    "You grade how relevant each passage is to a search query. For every passage, in the order given, "
    "give one integer from 0 (unrelated) to 10 (directly answers the query). Judge each passage on "
    "its own; do not skip any. Answer with JSON: {\"scores\": [...]} holding exactly one integer per "
    "passage."
)
_MAX_PASSAGE_CHARS = 1200


@dataclass(frozen=True, slots=True)
class RerankContext:
    query: str
    passages: tuple[str, ...]


Grade = Annotated[int, Field(ge=0, le=10)]


@lru_cache(maxsize=128)
def _grades_model(count: int) -> type[BaseModel]:
    return create_model(
        f"PassageGrades{count}",
        scores=(list[Grade], Field(min_length=count, max_length=count, description=f"{count} grades, in order")),
    )


def _build(context: RerankContext) -> list[Message]:
    # the instructions are the system message, the same on every call (a provider caches them); the
    # query, the passages and their count follow
    listed = "\n".join(f"[{number}] {passage[:_MAX_PASSAGE_CHARS]}" for number, passage in enumerate(context.passages))
    # the answer's form restated after the data (static text: the cached prefix is unchanged), where
    # a small model still reads it; said only before the passages, the 1.5B graded 0/1 instead of 0-10
    user = (f"Query: {context.query}\n\nPassages ({len(context.passages)}):\n{listed}\n\n"
            'Grade each passage from 0 to 10. Answer with JSON: {"scores": [...]}.')
    return [Message("system", _SYSTEM), Message("user", user)]


def rerank_prompt(count: int) -> Prompt[RerankContext, BaseModel]:
    """The grading prompt for ``count`` passages (about 4 output tokens per grade, plus framing)."""
    return Prompt(
        name="rerank_passages",
        answer=_grades_model(count),
        build=_build,
        max_output_tokens=16 + 4 * count,
        role="rerank",
    )


class LLMCrossEncoder:
    """Scores passages with ``model``: one call per ``batch_size`` passages, batches concurrently."""

    def __init__(self, model: LanguageModel, *, batch_size: int = 24) -> None:
        self.model = model
        self.batch_size = batch_size

    async def _score_batch(self, query: str, passages: Sequence[str]) -> list[float]:
        completion = await self.model.complete(rerank_prompt(len(passages)), RerankContext(query, tuple(passages)))
        return [grade / 10.0 for grade in completion.output.scores]  # type: ignore[attr-defined]

    async def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        batches = [passages[i : i + self.batch_size] for i in range(0, len(passages), self.batch_size)]
        scored = await asyncio.gather(*(self._score_batch(query, batch) for batch in batches))
        return [score for batch in scored for score in batch]
