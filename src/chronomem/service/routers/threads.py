"""Threads and their messages (Zep v3: ``/threads``). Messages go to the user's graph."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from chronomem.memory import NewMessage
from chronomem.service.deps import CONFLICT_RESPONSE, ERROR_RESPONSES, Space
from chronomem.service.schemas import (
    AddMessagesRequest,
    AddMessagesResponse,
    ContextResponse,
    MessageList,
    MessageOut,
    SummaryResponse,
    ThreadCreate,
    ThreadList,
    ThreadOut,
)

__all__ = ["router"]

router = APIRouter(prefix="/threads", tags=["threads"], responses=ERROR_RESPONSES)


@router.post("", status_code=201, responses=CONFLICT_RESPONSE, response_model=ThreadOut,
             summary="Start a thread for a user")
async def create_thread(body: ThreadCreate, space: Space) -> ThreadOut:
    return ThreadOut.from_record(space.create_thread(body.thread_id, body.user_id))


@router.get("", response_model=ThreadList, summary="List threads, oldest first")
async def list_threads(
    space: Space,
    user_id: Annotated[str | None, Query(max_length=256)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> ThreadList:
    threads = space.list_threads(user_id=user_id, limit=limit, offset=offset)
    return ThreadList(threads=[ThreadOut.from_record(t) for t in threads])


@router.get("/{thread_id}", response_model=ThreadOut, summary="Get a thread")
async def get_thread(thread_id: str, space: Space) -> ThreadOut:
    return ThreadOut.from_record(space.get_thread(thread_id))


@router.delete("/{thread_id}", status_code=204,
               summary="Delete a thread (its messages stay in the user's graph)")
async def delete_thread(thread_id: str, space: Space) -> Response:
    space.delete_thread(thread_id)
    return Response(status_code=204)


@router.post("/{thread_id}/messages", status_code=202, responses=CONFLICT_RESPONSE, response_model=AddMessagesResponse,
             summary="Add messages: stored durably before the answer, extracted by workers")
async def add_messages(thread_id: str, body: AddMessagesRequest, space: Space) -> AddMessagesResponse:
    messages = [
        NewMessage(content=m.content, role=m.role, name=m.name, reference_time=m.created_at,
                   metadata=m.metadata, id=m.uuid)
        for m in body.messages
    ]
    stored, task = await space.add_messages(thread_id, messages)
    return AddMessagesResponse(message_uuids=[e.id for e in stored], task_id=task.task_id)


@router.get("/{thread_id}/messages", response_model=MessageList, summary="A thread's messages, oldest first")
async def get_messages(
    thread_id: str, space: Space, lastn: Annotated[int | None, Query(ge=1, le=1000)] = None
) -> MessageList:
    episodes = await space.thread_messages(thread_id, last=lastn)
    return MessageList(messages=[MessageOut.from_domain(e) for e in episodes])


@router.get("/{thread_id}/context", response_model=ContextResponse,
            summary="The user's context block for a query, or for the thread's latest messages")
async def thread_context(
    thread_id: str,
    space: Space,
    query: Annotated[str | None, Query(max_length=4_000)] = None,
    evidence: bool = False,
    template_id: Annotated[str | None, Query(min_length=1, max_length=100)] = None,
) -> ContextResponse:
    """With ``evidence=true``, each fact is followed by the words of the episode that state it; with
    ``template_id``, the block takes the form of that stored template."""
    return ContextResponse(context=await space.thread_context(thread_id, query, template_id=template_id,
                                                              include_evidence=evidence))


@router.get("/{thread_id}/summary", response_model=SummaryResponse,
            summary="The thread's summary (without a model: the facts its messages gave, marked so)")
async def thread_summary(thread_id: str, space: Space) -> SummaryResponse:
    return SummaryResponse(summary=await space.thread_summary(thread_id))
