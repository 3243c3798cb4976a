"""``client.user``: users addressed by UUID, with an optional external ``user_id``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body

from chronomem.app.addresses import MINTED_PREFIX, Addresses, external_id, minted_id
from chronomem.controlplane import UserRecord
from chronomem.errors import InvalidInputError, NotFoundError
from chronomem.service.compat.context import user_entity
from chronomem.service.compat.v4 import render
from chronomem.service.compat.v4.deps import Zep4, Zep4Space
from chronomem.service.compat.v4.errors import DuplicateError, refuse_unsupported
from chronomem.service.compat.v4.idempotency import IdempotentRoute
from chronomem.service.compat.v4.models import (
    AsyncResultOut,
    LookupIn,
    NodeOut,
    Page,
    SearchTextIn,
    UserIn,
    UserOut,
    UserUpdateIn,
)
from chronomem.service.compat.v4.pages import DEFAULT_PAGE, Cursor, PageSize, page_of, window

__all__ = ["lookup_one", "router"]

router = APIRouter(tags=["user"], route_class=IdempotentRoute)
_PROFILE = {"email", "first_name", "last_name", "metadata"}


@router.post("/users", status_code=201, response_model=UserOut)
async def create(body: UserIn, zep: Zep4) -> UserOut:
    refuse_unsupported("user.create", time_zone=body.time_zone, content_policy=body.content_policy,
                       disable_default_ontology=body.disable_default_ontology)
    if body.user_id is not None and external_id(body.user_id) is None:
        raise InvalidInputError(f"user_id: {MINTED_PREFIX!r} starts the ids chronomem makes itself")
    if body.user_id is not None:
        try:
            holder = zep.space.get_user(body.user_id)
        except NotFoundError:
            pass
        else:
            raise DuplicateError(f"user_id {body.user_id!r} is in use", uuid=Addresses.user_uuid(holder))
    fields = body.model_dump(include=_PROFILE, exclude_none=True)
    user = zep.space.create_user(body.user_id or minted_id(), **fields)
    return render.user(user)


@router.post("/users/list", response_model=Page[UserOut])
async def list_users(zep: Zep4, body: Annotated[SearchTextIn | None, Body()] = None, page_size: PageSize = DEFAULT_PAGE,
                     cursor: Cursor = None, order_by: str | None = None, order: str | None = None) -> Page[UserOut]:
    refuse_unsupported("user.list", search=body.search if body else None,
                       order_by=order_by if order_by not in (None, "created_at") else None,
                       order=order if order not in (None, "asc") else None)
    offset = window(cursor)
    users, total = zep.space.list_users(limit=page_size, offset=offset)
    return page_of([render.user(u) for u in users], offset, page_size, total)


def lookup_one(zep: Zep4Space, body: LookupIn) -> UserRecord:
    """The user an external user id names, or the owner of the thread an external thread id names."""
    given = [name for name in ("user_id", "thread_id", "graph_id") if getattr(body, name) is not None]
    if len(given) != 1:
        raise InvalidInputError("give exactly one of user_id, thread_id and graph_id")
    if body.user_id is not None:
        return zep.space.get_user(body.user_id)
    if body.thread_id is not None:
        return zep.space.get_user(zep.space.get_thread(body.thread_id).user_id)
    raise NotFoundError(f"graph {body.graph_id!r} is a named graph, not a user's")


@router.post("/users/lookup", response_model=UserOut)
async def lookup(body: LookupIn, zep: Zep4) -> UserOut:
    return render.user(lookup_one(zep, body))


@router.get("/users/{user_uuid}", response_model=UserOut)
async def get(user_uuid: str, zep: Zep4) -> UserOut:
    return render.user(zep.addresses.user(user_uuid))


@router.patch("/users/{user_uuid}", response_model=UserOut)
async def update(user_uuid: str, body: UserUpdateIn, zep: Zep4) -> UserOut:
    refuse_unsupported("user.update", time_zone=body.time_zone,
                       disable_default_ontology=body.disable_default_ontology)
    user = zep.addresses.user(user_uuid)
    changes = body.model_dump(include=_PROFILE, exclude_unset=True)
    return render.user(zep.space.update_user(user.user_id, **changes))


@router.delete("/users/{user_uuid}", response_model=AsyncResultOut)
async def delete(user_uuid: str, zep: Zep4) -> AsyncResultOut:
    """Forget the user, their threads and their whole graph (done before the answer)."""
    user = zep.addresses.user(user_uuid)
    await zep.space.delete_user(user.user_id)
    return AsyncResultOut(task=zep.tasks.done("user_delete", {"user_uuid": user_uuid}))


@router.get("/users/{user_uuid}/node", response_model=NodeOut)
async def get_node(user_uuid: str, zep: Zep4) -> NodeOut:
    """The entity that stands for the user in their graph (404 until extraction has made one)."""
    user = zep.addresses.user(user_uuid)
    entity = await user_entity(zep.memory, user)
    if entity is None:
        raise NotFoundError(f"user {user_uuid!r} has no node yet")
    mentions = (await zep.memory.store.episodes_of_entities(user.group_id, [entity.id])).get(entity.id, [])
    return render.node(entity, zep.addresses.target_of_user(user), episode_ids=mentions)
