"""``client.thread``: threads, their messages, their context block and their summary."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from chronomem.memory import NewMessage
from chronomem.service.compat import render
from chronomem.service.compat.context import thread_context, thread_summary
from chronomem.service.compat.deps import Zep
from chronomem.service.compat.errors import refuse_unsupported
from chronomem.service.compat.models import (
    AddMessagesRequest,
    AddMessagesResponse,
    MessageListOut,
    SuccessOut,
    ThreadContextOut,
    ThreadCreateIn,
    ThreadListOut,
    ThreadOut,
    ThreadSummaryOut,
)

__all__ = ["router"]

router = APIRouter(tags=["thread"])


@router.post("/threads", status_code=201, response_model=ThreadOut)
async def create(body: ThreadCreateIn, zep: Zep) -> ThreadOut:
    thread = zep.space.create_thread(body.thread_id, body.user_id)
    return render.thread(thread, zep.space.get_user(thread.user_id))


@router.get("/threads", response_model=ThreadListOut)
async def list_all(
    zep: Zep,
    page_number: Annotated[int, Query(ge=1, le=100_000)] = 1,
    page_size: Annotated[int, Query(ge=1, le=1_000)] = 100,
    order_by: Annotated[str | None, Query(max_length=64)] = None,
    asc: bool | None = None,
) -> ThreadListOut:
    refuse_unsupported("thread.list_all", order_by=order_by)
    threads = zep.space.list_threads(user_id=None, limit=page_size, offset=(page_number - 1) * page_size)
    if asc is False:
        threads.reverse()
    rendered = [render.thread(t, zep.space.get_user(t.user_id)) for t in threads]
    total = zep.control.count_threads(zep.space.project.id)
    return ThreadListOut(threads=rendered, total_count=total, response_count=len(rendered))


@router.delete("/threads/{thread_id}", response_model=SuccessOut)
async def delete(thread_id: str, zep: Zep) -> SuccessOut:
    zep.space.delete_thread(thread_id)
    return SuccessOut(message=f"thread {thread_id!r} deleted")


@router.get("/threads/{thread_id}/messages", response_model=MessageListOut)
async def get(
    thread_id: str,
    zep: Zep,
    limit: Annotated[int | None, Query(ge=1, le=1_000)] = None,
    cursor: Annotated[int | None, Query(ge=0, le=10_000_000)] = None,
    lastn: Annotated[int | None, Query(ge=1, le=1_000)] = None,
) -> MessageListOut:
    """A thread's messages, oldest first: the newest ``lastn``, or ``limit`` from position ``cursor``."""
    thread = zep.space.get_thread(thread_id)
    messages = await zep.space.thread_messages(thread_id, last=lastn)
    total = len(zep.control.message_ids(zep.space.project.id, thread_id))
    if lastn is None:
        start = cursor or 0
        messages = messages[start : start + limit] if limit is not None else messages[start:]
    return MessageListOut(
        messages=[render.message(m) for m in messages], row_count=len(messages), total_count=total,
        thread_created_at=thread.created_at, user_id=thread.user_id,
    )


async def _add(thread_id: str, body: AddMessagesRequest, zep: Zep, call: str) -> AddMessagesResponse:
    refuse_unsupported(call, ignore_roles=body.ignore_roles, strict_ontology=body.strict_ontology)
    messages = [
        NewMessage(content=m.content, role=m.role, name=m.name, reference_time=m.created_at, metadata=m.metadata,
                   id=m.uuid)
        for m in body.messages
    ]
    context = None
    if body.return_context:  # the context for these messages, from what the graph knew before them
        query = "\n".join(f"{m.name or m.role}: {m.content}" for m in body.messages[-2:])
        context = await thread_context(zep, thread_id, None, query=query)
    stored, task = await zep.space.add_messages(thread_id, messages)
    return AddMessagesResponse(message_uuids=[e.id for e in stored], task_id=task.task_id, context=context)


@router.post("/threads/{thread_id}/messages", response_model=AddMessagesResponse)
async def add_messages(thread_id: str, body: AddMessagesRequest, zep: Zep) -> AddMessagesResponse:
    return await _add(thread_id, body, zep, "thread.add_messages")


@router.post("/threads/{thread_id}/messages-batch", response_model=AddMessagesResponse)
async def add_messages_batch(thread_id: str, body: AddMessagesRequest, zep: Zep) -> AddMessagesResponse:
    return await _add(thread_id, body, zep, "thread.add_messages_batch")


@router.get("/threads/{thread_id}/context", response_model=ThreadContextOut)
async def get_user_context(
    thread_id: str, zep: Zep, template_id: Annotated[str | None, Query(min_length=1, max_length=100)] = None
) -> ThreadContextOut:
    """The user's context block for the thread's latest messages (in a template's form if named)."""
    return ThreadContextOut(context=await thread_context(zep, thread_id, template_id))


@router.get("/threads/{thread_id}/summary", response_model=ThreadSummaryOut)
async def get_summary(thread_id: str, zep: Zep) -> ThreadSummaryOut:
    return await thread_summary(zep, thread_id)
