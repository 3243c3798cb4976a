"""``/lookup``: what a UUID (Zep v4's address of a user, graph or thread, as ``/api/v4`` shows it)
names in this API (:mod:`chronomem.app.addresses`)."""

from __future__ import annotations

from fastapi import APIRouter

from chronomem.app.addresses import Addresses
from chronomem.controlplane import GraphRecord, ThreadRecord, UserRecord
from chronomem.service.deps import ERROR_RESPONSES, Space
from chronomem.service.schemas import LookupOut

__all__ = ["router"]

router = APIRouter(tags=["lookup"], responses=ERROR_RESPONSES)


@router.get("/lookup/{uuid}", response_model=LookupOut, response_model_exclude_none=True,
            summary="The user, graph or thread a UUID of /api/v4 names")
async def lookup(uuid: str, space: Space) -> LookupOut:
    addresses = space.addresses()
    found = addresses.find(uuid)
    if isinstance(found, UserRecord):
        return LookupOut(kind="user", uuid=Addresses.user_uuid(found), user_id=found.user_id)
    if isinstance(found, GraphRecord):
        return LookupOut(kind="graph", uuid=Addresses.graph_uuid(found), graph_id=found.graph_id)
    assert isinstance(found, ThreadRecord)
    return LookupOut(kind="thread", uuid=addresses.thread_uuid(found), thread_id=found.thread_id,
                     user_id=found.user_id)
