"""Bulk ingestion: many episodes, each group's in the order given, groups in parallel, with a progress bar."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from chronomem.domain import Episode
from chronomem.errors import IngestionError

if TYPE_CHECKING:
    from chronomem.ingest.pipeline import Ingestor, IngestResult

__all__ = ["ingest_in_order"]


async def ingest_in_order(
    ingestor: Ingestor, episodes: Sequence[Episode], *, progress: bool = True, max_groups: int = 16
) -> list[IngestResult]:
    """``add_episode`` for each episode; results in input order. A failure is recorded, not raised."""
    from chronomem.ingest.pipeline import IngestResult

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
                episode = episodes[index]
                try:
                    results[index] = await ingestor.add_episode(episode)
                except IngestionError as exc:
                    stored = await ingestor.store.get_episodes(episode.group_id, [episode.id])
                    failed = stored[0] if stored else episode
                    results[index] = IngestResult(failed, warnings=(str(exc),))
                bar.advance(task)

    with bar:
        await asyncio.gather(*(run_group(indexes) for indexes in by_group.values()))
    return [r for r in results if r is not None]
