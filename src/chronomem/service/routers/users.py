"""Users, their threads and their context block (Zep v3: ``/users``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from chronomem.service.deps import CONFLICT_RESPONSE, ERROR_RESPONSES, Space
from chronomem.service.schemas import (
    ContextResponse,
    SummaryResponse,
    ThreadList,
    ThreadOut,
    UserCreate,
    UserList,
    UserOut,
    UserUpdate,
)

__all__ = ["router"]

router = APIRouter(prefix="/users", tags=["users"], responses=ERROR_RESPONSES)

PageSize = Annotated[int, Query(ge=1, le=100)]
Offset = Annotated[int, Query(ge=0, le=1_000_000)]
QueryText = Annotated[str, Query(min_length=1, max_length=4_000)]
TemplateId = Annotated[str | None, Query(min_length=1, max_length=100, description="a stored context template")]


@router.post("", status_code=201, response_model=UserOut, summary="Create a user (and their graph)",
             responses=CONFLICT_RESPONSE)
async def create_user(body: UserCreate, space: Space) -> UserOut:
    return UserOut.from_record(space.create_user(**body.model_dump()))


@router.get("", response_model=UserList, summary="List users, oldest first")
async def list_users(space: Space, limit: PageSize = 50, offset: Offset = 0) -> UserList:
    users, total = space.list_users(limit=limit, offset=offset)
    return UserList(users=[UserOut.from_record(u) for u in users], total_count=total)


@router.get("/{user_id}", response_model=UserOut, summary="Get a user")
async def get_user(user_id: str, space: Space) -> UserOut:
    return UserOut.from_record(space.get_user(user_id))


@router.patch("/{user_id}", response_model=UserOut, summary="Update a user's profile fields")
async def update_user(user_id: str, body: UserUpdate, space: Space) -> UserOut:
    return UserOut.from_record(space.update_user(user_id, **body.model_dump(exclude_unset=True)))


@router.delete("/{user_id}", status_code=204, summary="Delete a user, their threads and their graph")
async def delete_user(user_id: str, space: Space) -> Response:
    await space.delete_user(user_id)
    return Response(status_code=204)


@router.get("/{user_id}/threads", response_model=ThreadList, summary="A user's threads")
async def user_threads(user_id: str, space: Space, limit: PageSize = 50, offset: Offset = 0) -> ThreadList:
    threads = space.list_threads(user_id=user_id, limit=limit, offset=offset)
    return ThreadList(threads=[ThreadOut.from_record(t) for t in threads])


@router.get("/{user_id}/context", response_model=ContextResponse,
            summary="The context block of a user's graph for a query (the paper's template)")
async def user_context(user_id: str, query: QueryText, space: Space, evidence: bool = False,
                       template_id: TemplateId = None) -> ContextResponse:
    """With ``evidence=true``, each fact is followed by the words of the episode that state it; with
    ``template_id``, the block takes the form of that stored template."""
    return ContextResponse(context=await space.user_context(user_id, query, template_id=template_id,
                                                            include_evidence=evidence))


@router.get("/{user_id}/summary", response_model=SummaryResponse,
            summary="The user's summary (without a model: what the graph holds about them, marked so)")
async def user_summary(user_id: str, space: Space) -> SummaryResponse:
    return SummaryResponse(summary=await space.user_summary(user_id))
