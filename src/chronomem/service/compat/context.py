"""The context and summaries Zep's thread calls return, over the project space."""

from __future__ import annotations

from chronomem.service.compat.deps import ZepSpace
from chronomem.service.compat.models import ThreadSummaryOut

__all__ = ["thread_context", "thread_summary"]


async def thread_context(zep: ZepSpace, thread_id: str, template_id: str | None, *, query: str | None = None) -> str:
    """The user's context block for ``query`` (default: the thread's latest messages), in a stored
    template's form when ``template_id`` names one."""
    return await zep.space.thread_context(thread_id, query, template_id=template_id)


async def thread_summary(zep: ZepSpace, thread_id: str) -> ThreadSummaryOut:
    thread = zep.space.get_thread(thread_id)
    messages = await zep.space.thread_messages(thread_id, last=1)
    return ThreadSummaryOut(
        thread_id=thread_id, summary=await zep.space.thread_summary(thread_id), created_at=thread.created_at,
        last_summarized_episode_valid_at=messages[-1].reference_time if messages else None,
    )
