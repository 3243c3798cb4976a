"""The context, summaries and user node Zep's calls return (both API versions), over the project
space."""

from __future__ import annotations

from chronomem.controlplane import UserRecord
from chronomem.domain import Entity
from chronomem.memory import Chronomem
from chronomem.service.compat.deps import ZepSpace
from chronomem.service.compat.models import ThreadSummaryOut

__all__ = ["thread_context", "thread_summary", "user_entity"]


def _names_of(user: UserRecord) -> list[str]:
    """What the user's own entity may be called in their graph, most specific first."""
    full = " ".join(p for p in (user.first_name, user.last_name) if p)
    return [n for n in dict.fromkeys((full, user.first_name or "", user.user_id)) if n]


async def user_entity(memory: Chronomem, user: UserRecord) -> Entity | None:
    """The entity that stands for the user in their graph, if extraction has made one."""
    names = _names_of(user)
    found = await memory.store.find_entities_by_names(user.group_id, names)
    by_name = {e.name.casefold(): e for e in found}
    return next((by_name[n.casefold()] for n in names if n.casefold() in by_name), found[0] if found else None)


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
