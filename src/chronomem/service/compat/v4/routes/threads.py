"""``client.thread``: threads addressed by UUID, their messages, context, episodes and summary."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from chronomem.app.addresses import Addresses, minted_id, object_id
from chronomem.controlplane import ThreadRecord
from chronomem.domain import Episode
from chronomem.errors import InvalidInputError, NotFoundError
from chronomem.memory import NewMessage
from chronomem.service.compat.v4 import render
from chronomem.service.compat.v4.deps import Zep4, Zep4Space
from chronomem.service.compat.v4.errors import refuse_unsupported
from chronomem.service.compat.v4.idempotency import IdempotentRoute
from chronomem.service.compat.v4.models import (
    AddMessagesIn,
    AddMessagesOut,
    AsyncResultOut,
    EpisodeOut,
    LookupIn,
    MessageOut,
    Page,
    ThreadContextOut,
    ThreadIn,
    ThreadOut,
    ThreadSummaryOut,
)
from chronomem.service.compat.v4.pages import DEFAULT_PAGE, Cursor, PageSize, page_of, window
from chronomem.service.compat.v4.templates import template_name

__all__ = ["router", "summary_of"]

router = APIRouter(tags=["thread"], route_class=IdempotentRoute)
_CONTEXT_MESSAGES = 2  # return_context: the context for the request's latest exchange


def _out(zep: Zep4Space, thread: ThreadRecord) -> ThreadOut:
    return render.thread(thread, zep.space.get_user(thread.user_id), zep.addresses)


@router.post("/threads", status_code=201, response_model=ThreadOut)
async def create(body: ThreadIn, zep: Zep4) -> ThreadOut:
    user = zep.addresses.user(body.user_uuid)
    thread = zep.space.create_thread(minted_id(), user.user_id)
    return render.thread(thread, user, zep.addresses)


@router.get("/threads", response_model=Page[ThreadOut])
async def list_threads(zep: Zep4, page_size: PageSize = DEFAULT_PAGE, cursor: Cursor = None,
                       user_uuid: Annotated[str | None, Query(max_length=64)] = None,
                       order_by: str | None = None, order: str | None = None) -> Page[ThreadOut]:
    refuse_unsupported("thread.list", order_by=order_by if order_by not in (None, "created_at") else None,
                       order=order if order not in (None, "asc") else None)
    user_id = zep.addresses.user(user_uuid).user_id if user_uuid is not None else None
    offset = window(cursor)
    threads = zep.space.list_threads(user_id=user_id, limit=page_size, offset=offset)
    total = zep.control.count_threads(zep.space.project.id, user_id=user_id)
    return page_of([_out(zep, t) for t in threads], offset, page_size, total)


@router.post("/threads/lookup", response_model=ThreadOut)
async def lookup(body: LookupIn, zep: Zep4) -> ThreadOut:
    if body.thread_id is None or body.user_id is not None or body.graph_id is not None:
        raise InvalidInputError("thread.lookup takes thread_id (a thread's external id)")
    return _out(zep, zep.space.get_thread(body.thread_id))


@router.get("/threads/{thread_uuid}", response_model=ThreadOut)
async def get(thread_uuid: str, zep: Zep4) -> ThreadOut:
    return _out(zep, zep.addresses.thread(thread_uuid))


@router.delete("/threads/{thread_uuid}", response_model=AsyncResultOut)
async def delete(thread_uuid: str, zep: Zep4) -> AsyncResultOut:
    """Forget the thread and its message list (its messages stay in the user's graph, as on Zep)."""
    thread = zep.addresses.thread(thread_uuid)
    zep.space.delete_thread(thread.thread_id)
    return AsyncResultOut(task=zep.tasks.done("thread_delete", {"thread_uuid": thread_uuid}))


@router.post("/threads/{thread_uuid}/messages", status_code=202, response_model=AddMessagesOut)
async def add_messages(thread_uuid: str, body: AddMessagesIn, zep: Zep4) -> AddMessagesOut:
    """Store the messages durably and queue them; with ``return_context``, the user's context for
    them from what the graph knew before."""
    refuse_unsupported("thread.add_messages", ignore_roles=body.ignore_roles, strict_ontology=body.strict_ontology)
    if any(m.uuid is not None for m in body.messages):
        raise InvalidInputError("messages.uuid: message identifiers are assigned by the server; leave it unset")
    thread = zep.addresses.thread(thread_uuid)
    messages = [NewMessage(content=m.content, role=m.role or "user", name=m.name, reference_time=m.reference_time,
                           metadata=m.metadata) for m in body.messages]
    context = None
    if body.return_context:
        query = "\n".join(f"{m.name or m.role or 'user'}: {m.content}" for m in body.messages[-_CONTEXT_MESSAGES:])
        context = await zep.space.thread_context(thread.thread_id, query)
    stored, task = await zep.space.add_messages(thread.thread_id, messages)
    return AddMessagesOut(messages=[render.message(e, thread_uuid) for e in stored], context=context,
                          task=await zep.tasks.ingest(task, "thread_add_messages"))


async def _messages(zep: Zep4Space, thread_uuid: str, cursor: str | None, page_size: int,
                    order: str | None) -> tuple[list[Episode], int]:
    thread = zep.addresses.thread(thread_uuid)
    messages = await zep.space.thread_messages(thread.thread_id)
    if order == "desc":
        messages.reverse()
    return messages, window(cursor)


@router.get("/threads/{thread_uuid}/messages", response_model=Page[MessageOut])
async def list_messages(thread_uuid: str, zep: Zep4, page_size: PageSize = DEFAULT_PAGE, cursor: Cursor = None,
                        order_by: str | None = None,
                        order: Annotated[str | None, Query(pattern="^(asc|desc)$")] = None) -> Page[MessageOut]:
    """The thread's messages, oldest first (``order=desc``: newest first)."""
    refuse_unsupported("thread.list_messages", order_by=order_by if order_by not in (None, "created_at") else None)
    messages, offset = await _messages(zep, thread_uuid, cursor, page_size, order)
    shown = [render.message(m, thread_uuid) for m in messages[offset:offset + page_size]]
    return page_of(shown, offset, page_size, len(messages))


@router.get("/threads/{thread_uuid}/messages/{message_uuid}", response_model=MessageOut)
async def get_message(thread_uuid: str, message_uuid: str, zep: Zep4) -> MessageOut:
    messages, _ = await _messages(zep, thread_uuid, None, 0, None)
    wanted = object_id(message_uuid)
    found = next((m for m in messages if m.id in (wanted, message_uuid)), None)
    if found is None:
        raise NotFoundError(f"message {message_uuid!r} not found in thread {thread_uuid!r}")
    return render.message(found, thread_uuid)


@router.get("/threads/{thread_uuid}/episodes", response_model=Page[EpisodeOut])
async def list_episodes(thread_uuid: str, zep: Zep4, page_size: PageSize = DEFAULT_PAGE,
                        cursor: Cursor = None) -> Page[EpisodeOut]:
    """The episodes the thread's messages became, oldest first."""
    messages, offset = await _messages(zep, thread_uuid, cursor, page_size, None)
    thread = zep.addresses.thread(thread_uuid)
    target = zep.addresses.target_of_user(zep.space.get_user(thread.user_id))
    shown = [render.episode(m, target, thread_uuid=thread_uuid) for m in messages[offset:offset + page_size]]
    return page_of(shown, offset, page_size, len(messages))


@router.get("/threads/{thread_uuid}/context", response_model=ThreadContextOut)
async def get_context(thread_uuid: str, zep: Zep4,
                      template_uuid: Annotated[str | None, Query(max_length=64)] = None) -> ThreadContextOut:
    """The user's context block for the thread's latest messages (in a template's form if named)."""
    thread = zep.addresses.thread(thread_uuid)
    template = template_name(zep.space, template_uuid) if template_uuid is not None else None
    return ThreadContextOut(context=await zep.space.thread_context(thread.thread_id, None, template_id=template))


async def summary_of(zep: Zep4Space, thread: ThreadRecord) -> ThreadSummaryOut:
    address = zep.addresses.thread_uuid(thread)
    owner = Addresses.user_uuid(zep.space.get_user(thread.user_id))
    latest = await zep.space.thread_messages(thread.thread_id, last=1)
    return ThreadSummaryOut(uuid=address, thread_uuid=address, graph_uuid=owner,
                            summary=await zep.space.thread_summary(thread.thread_id), created_at=thread.created_at,
                            last_summarized_episode_valid_at=latest[-1].reference_time if latest else None)


@router.get("/threads/{thread_uuid}/summary", response_model=ThreadSummaryOut)
async def get_summary(thread_uuid: str, zep: Zep4) -> ThreadSummaryOut:
    return await summary_of(zep, zep.addresses.thread(thread_uuid))
