"""Map-reduce summaries of communities through the model, with a bounded number of calls.

The plan is a pure function of community sizes, so the number of calls is known before any is
made: small communities share calls (up to ``communities_per_call`` of them and ``members_per_call``
member lines), and a large one takes at most ``max_map_calls`` map calls over its most central
members plus one reduce call. A call that fails leaves its communities to the model-free naming.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any

from chronomem.communities.config import CommunityConfig
from chronomem.communities.prompts import (
    COMBINE_SUMMARIES,
    SUMMARIZE_COMMUNITIES,
    SUMMARIZE_MEMBERS,
    UPDATE_COMMUNITIES,
    CommunityAbout,
    CommunityChange,
    CommunityDescriptions,
    CommunityDraft,
    MemberChunk,
    MemberText,
    PartialSummaries,
    SummarizeCommunities,
    UpdateCommunities,
)
from chronomem.errors import ModelError
from chronomem.llm.base import LanguageModel, Prompt

__all__ = ["SummaryPlan", "SummaryRun", "plan_summaries", "summarize", "update_summaries"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SummaryPlan:
    shared: tuple[tuple[int, ...], ...]  # small communities (by index) summarised in one call each
    chunked: tuple[tuple[int, int], ...]  # (large community, its map calls); each adds one reduce call

    @property
    def calls(self) -> int:
        return len(self.shared) + sum(maps + 1 for _, maps in self.chunked)


def plan_summaries(sizes: Sequence[int], config: CommunityConfig) -> SummaryPlan:
    """Which calls summarise which communities (``sizes`` in the order communities are listed)."""
    shared: list[tuple[int, ...]] = []
    chunked: list[tuple[int, int]] = []
    batch: list[int] = []
    lines = 0
    for index, size in enumerate(sizes):
        if size > config.members_per_call:
            maps = min(-(-size // config.members_per_call), config.max_map_calls)
            chunked.append((index, maps))
            continue
        if batch and (lines + size > config.members_per_call or len(batch) == config.communities_per_call):
            shared.append(tuple(batch))
            batch, lines = [], 0
        batch.append(index)
        lines += size
    if batch:
        shared.append(tuple(batch))
    return SummaryPlan(tuple(shared), tuple(chunked))


@dataclass(slots=True)
class SummaryRun:
    """What a summary pass produced and cost."""

    results: list[CommunityAbout | None]  # per community; None = the model gave nothing usable
    calls: int = 0
    failed_calls: int = 0
    unanswered: int = 0  # communities a valid answer left out (it named other keys)


class _Caller:
    """Runs prompts under a concurrency limit, counting calls and swallowing model failures."""

    def __init__(self, llm: LanguageModel, limit: int) -> None:
        self._llm = llm
        self._gate = asyncio.Semaphore(limit)
        self.calls = 0
        self.failed = 0
        self.unanswered = 0

    async def ask(self, prompt: Prompt[Any, Any], context: Any) -> Any | None:
        async with self._gate:
            self.calls += 1
            try:
                return (await self._llm.complete(prompt, context)).output
            except ModelError as exc:
                self.failed += 1
                logger.warning("community prompt %s failed, falling back to member names: %s", prompt.name, exc)
                return None


def _by_key(caller: _Caller, answer: CommunityDescriptions | None, keys: Sequence[str]) -> list[CommunityAbout | None]:
    """The answer's description of each asked key. A valid answer that names other keys (a weak
    model numbering communities its own way) is counted and logged, not taken for a description of
    whichever community happens to share a position: those communities keep the model-free naming."""
    if answer is None:
        return [None] * len(keys)
    found = {d.key: d for d in answer.communities}
    missing = [key for key in keys if key not in found]
    if missing:
        caller.unanswered += len(missing)
        logger.warning("community answer left out %s (it named %s); those keep the member names",
                       missing, sorted(found) or "nothing")
    return [found.get(key) for key in keys]


async def _shared(caller: _Caller, members: Sequence[Sequence[MemberText]], batch: Sequence[int]) -> list[Any]:
    keys = [f"c{i + 1}" for i in range(len(batch))]
    drafts = tuple(CommunityDraft(key, tuple(members[c])) for key, c in zip(keys, batch, strict=True))
    answer = await caller.ask(SUMMARIZE_COMMUNITIES, SummarizeCommunities(drafts))
    return _by_key(caller, answer, keys)


async def _map_reduce(
    caller: _Caller, ranked: Sequence[MemberText], maps: int, config: CommunityConfig
) -> CommunityAbout | None:
    size = config.members_per_call
    chunks = [tuple(ranked[i * size : (i + 1) * size]) for i in range(maps)]
    partials = await asyncio.gather(
        *(caller.ask(SUMMARIZE_MEMBERS, MemberChunk(c, i + 1, maps, len(ranked))) for i, c in enumerate(chunks))
    )
    texts = tuple(p.summary for p in partials if p is not None)
    if not texts:
        return None
    central = tuple(m.name for m in ranked[: config.name_members])
    answer: CommunityAbout | None = await caller.ask(
        COMBINE_SUMMARIES, PartialSummaries(texts, len(ranked), central)
    )
    return answer


async def summarize(
    llm: LanguageModel, members: Sequence[Sequence[MemberText]], config: CommunityConfig
) -> SummaryRun:
    """Summaries and topics of communities given their members, most central first."""
    plan = plan_summaries([len(m) for m in members], config)
    caller = _Caller(llm, config.max_concurrent_calls)
    results: list[CommunityAbout | None] = [None] * len(members)
    jobs: list[Awaitable[Any]] = [_shared(caller, members, batch) for batch in plan.shared]
    jobs += [_map_reduce(caller, members[c], maps, config) for c, maps in plan.chunked]
    answers = await asyncio.gather(*jobs)
    for batch, answer in zip(plan.shared, answers[: len(plan.shared)], strict=True):
        for c, about in zip(batch, answer, strict=True):
            results[c] = about
    for (c, _), about in zip(plan.chunked, answers[len(plan.shared) :], strict=True):
        results[c] = about
    return SummaryRun(results, caller.calls, caller.failed, caller.unanswered)


async def update_summaries(
    llm: LanguageModel, changes: Sequence[CommunityChange], config: CommunityConfig
) -> SummaryRun:
    """New summaries and topics for communities that gained members: one call per
    ``max_updates_per_call`` communities (a single call for a usual episode)."""
    caller = _Caller(llm, config.max_concurrent_calls)
    step = config.max_updates_per_call
    batches = [tuple(changes[i : i + step]) for i in range(0, len(changes), step)]
    answers = await asyncio.gather(*(caller.ask(UPDATE_COMMUNITIES, UpdateCommunities(b)) for b in batches))
    results: list[CommunityAbout | None] = []
    for batch, answer in zip(batches, answers, strict=True):
        results += _by_key(caller, answer, [c.key for c in batch])
    return SummaryRun(results, caller.calls, caller.failed, caller.unanswered)
