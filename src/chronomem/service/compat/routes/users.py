"""``client.user``: users, their node, their threads and the user-summary instructions."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from chronomem.app.tenancy import SUMMARY_INSTRUCTION
from chronomem.service.compat import render
from chronomem.service.compat.context import user_entity
from chronomem.service.compat.deps import Zep
from chronomem.service.compat.errors import refuse_unsupported
from chronomem.service.compat.models import (
    DeleteInstructionsRequest,
    InstructionsIn,
    InstructionsOut,
    SuccessOut,
    ThreadOut,
    UserCreateIn,
    UserInstructionIn,
    UserListOut,
    UserNodeOut,
    UserOut,
    UserUpdateIn,
)

__all__ = ["router"]

router = APIRouter(tags=["user"])



def _refuse_options(call: str, body: UserCreateIn | UserUpdateIn) -> None:
    refuse_unsupported(call, time_zone=body.time_zone, disable_default_ontology=body.disable_default_ontology)


@router.post("/users", status_code=201, response_model=UserOut)
async def add(body: UserCreateIn, zep: Zep) -> UserOut:
    _refuse_options("user.add", body)
    fields = body.model_dump(include={"email", "first_name", "last_name", "metadata"}, exclude_none=True)
    return render.user(zep.space.create_user(body.user_id, **fields))


@router.get("/users-ordered", response_model=UserListOut)
async def list_ordered(
    zep: Zep,
    page_number: Annotated[int, Query(alias="pageNumber", ge=1, le=100_000)] = 1,
    page_size: Annotated[int, Query(alias="pageSize", ge=1, le=1_000)] = 100,
    search: Annotated[str | None, Query(max_length=256)] = None,
    order_by: Annotated[str | None, Query(max_length=64)] = None,
    asc: bool | None = None,
) -> UserListOut:
    refuse_unsupported("user.list_ordered", search=search, order_by=order_by)
    users, total = zep.space.list_users(limit=page_size, offset=(page_number - 1) * page_size)
    if asc is False:
        users.reverse()
    return UserListOut(users=[render.user(u) for u in users], total_count=total, row_count=len(users))


@router.get("/users/{user_id}", response_model=UserOut)
async def get(user_id: str, zep: Zep) -> UserOut:
    return render.user(zep.space.get_user(user_id))


@router.patch("/users/{user_id}", response_model=UserOut)
async def update(user_id: str, body: UserUpdateIn, zep: Zep) -> UserOut:
    _refuse_options("user.update", body)
    changes = body.model_dump(include={"email", "first_name", "last_name", "metadata"}, exclude_unset=True)
    return render.user(zep.space.update_user(user_id, **changes))


@router.delete("/users/{user_id}", response_model=SuccessOut)
async def delete(user_id: str, zep: Zep) -> SuccessOut:
    await zep.space.delete_user(user_id)
    return SuccessOut(message=f"user {user_id!r} deleted")


@router.get("/users/{user_id}/node", response_model=UserNodeOut)
async def get_node(user_id: str, zep: Zep) -> UserNodeOut:
    """The entity that stands for the user in their graph, if extraction has made one."""
    entity = await user_entity(zep.memory, zep.space.get_user(user_id))
    return UserNodeOut(node=render.node(entity) if entity is not None else None)


@router.get("/users/{user_id}/threads", response_model=list[ThreadOut])
async def get_threads(user_id: str, zep: Zep) -> list[ThreadOut]:
    user = zep.space.get_user(user_id)
    threads = zep.space.list_threads(user_id=user_id, limit=1_000, offset=0)
    return [render.thread(t, user) for t in threads]


# -- user-summary instructions -----------------------------------------------------------------------


def _scopes(zep: Zep, user_ids: list[str] | None) -> list[str]:
    """The document scopes named: each user's graph, or the project default ("")."""
    return [zep.space.get_user(u).group_id for u in user_ids] if user_ids else [""]


@router.get("/user-summary-instructions", response_model=InstructionsOut)
async def list_user_summary_instructions(
    zep: Zep, user_id: Annotated[str | None, Query(max_length=256)] = None
) -> InstructionsOut:
    [scope] = _scopes(zep, [user_id] if user_id else None)
    documents = zep.control.list_documents(zep.space.project.id, SUMMARY_INSTRUCTION, scope=scope)
    return InstructionsOut(instructions=[UserInstructionIn(name=d.name, text=d.body) for d in documents])


@router.post("/user-summary-instructions", response_model=SuccessOut)
async def add_user_summary_instructions(body: InstructionsIn, zep: Zep) -> SuccessOut:
    scopes = _scopes(zep, body.user_ids)
    for scope in scopes:
        for instruction in body.instructions:
            zep.control.put_document(zep.space.project.id, SUMMARY_INSTRUCTION, scope, instruction.name,
                                     instruction.text)
    return SuccessOut(message=f"{len(body.instructions)} instruction(s) added")


@router.delete("/user-summary-instructions", response_model=SuccessOut)
async def delete_user_summary_instructions(body: DeleteInstructionsRequest, zep: Zep) -> SuccessOut:
    """Delete the named instructions, or all of them when no names are given."""
    pid = zep.space.project.id
    deleted = 0
    for scope in _scopes(zep, body.user_ids):
        names = body.instruction_names or [d.name for d in zep.control.list_documents(pid, SUMMARY_INSTRUCTION,
                                                                                      scope=scope)]
        deleted += sum(zep.control.delete_document(pid, SUMMARY_INSTRUCTION, scope, n) for n in names)
    return SuccessOut(message=f"{deleted} instruction(s) deleted")
