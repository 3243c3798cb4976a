"""Bulk ingestion: many episodes, each group's in the order given, groups in parallel, with a progress bar.

This module only schedules: what ingesting one episode means (and what a failure records) is the
caller's ``ingest_one``, so it knows nothing of the pipeline.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from chronomem.domain import Episode
from chronomem.ingest.results import IngestResult

__all__ = ["ingest_in_order"]


async def ingest_in_order(
    episodes: Sequence[Episode],
    ingest_one: Callable[[Episode], Awaitable[IngestResult]],
    *,
    progress: bool = True,
    max_groups: int = 16,
) -> list[IngestResult]:
    """``ingest_one`` for each episode, each group's in order, at most ``max_groups`` groups at a
    time; results in input order."""
    by_group: dict[str, list[int]] = defaultdict(list)
    for index, episode in enumerate(episodes):
        by_group[episode.group_id].append(index)
    results: list[IngestResult | None] = [None] * len(episodes)
    bar = Progress(
        TextColumn("ingesting"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), disable=not progress,
        transient=False,
    )
    task = bar.add_task("episodes", total=len(episodes))
    slots = asyncio.Semaphore(max_groups)

    async def run_group(indexes: list[int]) -> None:
        async with slots:
            for index in indexes:
                results[index] = await ingest_one(episodes[index])
                bar.advance(task)

    with bar:
        await asyncio.gather(*(run_group(indexes) for indexes in by_group.values()))
    return [r for r in results if r is not None]
