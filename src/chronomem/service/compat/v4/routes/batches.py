"""``client.batch``: many messages and episodes ingested as one unit, onto the durable queue.

A batch is a project document (kind ``zep_v4_batch``) while it is a draft: ``add_items`` checks
each item (its thread or graph must exist; a refused item is named in ``rejected_items`` with the
reason, and the others are kept). ``process`` queues the items in order, consecutive items of one
thread or graph together (:meth:`~chronomem.app.tenancy.ProjectSpace.add_messages` and
``add_episodes``, so each is durable, ordered and crash-safe as any other write), and answers with
one task over them. From then on the batch's state is its episodes' state.
"""

from __future__ import annotations

from datetime import datetime
from itertools import groupby
from typing import Annotated, Any

from fastapi import APIRouter, Query

from chronomem.app.addresses import object_id, wire_id
from chronomem.domain import EpisodeStatus, new_id
from chronomem.errors import ChronomemError, ConflictError, InvalidInputError, NotFoundError
from chronomem.memory import NewMessage
from chronomem.service.compat.v4.deps import Zep4, Zep4Space
from chronomem.service.compat.v4.errors import refuse_unsupported
from chronomem.service.compat.v4.idempotency import IdempotentRoute
from chronomem.service.compat.v4.models import (
    AsyncResultOut,
    BatchIn,
    BatchItemIn,
    BatchItemOut,
    BatchItemsIn,
    BatchItemsOut,
    BatchOut,
    BatchProgressOut,
    Page,
    ProcessBatchOut,
    RejectedItemOut,
)
from chronomem.service.compat.v4.pages import DEFAULT_PAGE, Cursor, PageSize, page_of, window
from chronomem.timeutil import utc_now

__all__ = ["router"]

router = APIRouter(tags=["batch"], route_class=IdempotentRoute)
KIND = "zep_v4_batch"
MAX_ITEMS = 10_000
_ITEM_STATUS = {EpisodeStatus.PENDING: "queued", EpisodeStatus.PROCESSING: "processing",
                EpisodeStatus.DONE: "succeeded", EpisodeStatus.UNEXTRACTED: "succeeded",
                EpisodeStatus.FAILED: "failed"}


def _load(zep: Zep4Space, address: str) -> dict[str, Any]:
    try:
        body: dict[str, Any] = zep.control.get_document(zep.space.project.id, KIND, "", object_id(address)).body
    except NotFoundError:
        raise NotFoundError(f"batch {address!r} not found") from None
    return body


def _save(zep: Zep4Space, batch_id: str, body: dict[str, Any]) -> None:
    zep.control.put_document(zep.space.project.id, KIND, "", batch_id, body)


async def _episode_states(zep: Zep4Space, body: dict[str, Any]) -> dict[str, EpisodeStatus]:
    states: dict[str, EpisodeStatus] = {}
    for part in body.get("parts", []):
        try:
            view = await zep.space.get_task(part)
        except NotFoundError:  # its episodes were deleted since
            continue
        states.update({e.id: e.status for e in view.episodes})
    return states


def _item_status(item: dict[str, Any], states: dict[str, EpisodeStatus]) -> str:
    if item.get("episode") is None:
        return "pending"
    state = states.get(item["episode"])
    return _ITEM_STATUS[state] if state is not None else "succeeded"


def _batch_out(batch_id: str, body: dict[str, Any], states: dict[str, EpisodeStatus]) -> BatchOut:
    counts = [_item_status(i, states) for i in body["items"]]
    status = body["status"]
    if status != "draft":
        if any(c in ("queued", "pending") for c in counts):
            status = "queued" if not any(c == "processing" for c in counts) else "processing"
        elif "processing" in counts:
            status = "processing"
        elif "failed" in counts:
            status = "failed" if all(c == "failed" for c in counts) else "partial"
        else:
            status = "succeeded"
    progress = BatchProgressOut(total_items=len(counts), succeeded_items=counts.count("succeeded"),
                                failed_items=counts.count("failed"), processing_items=counts.count("processing"))
    return BatchOut(uuid=wire_id(batch_id), status=status, metadata=body.get("metadata"),
                    created_at=datetime.fromisoformat(body["created_at"]), progress=progress)


def _item_out(item: dict[str, Any], states: dict[str, EpisodeStatus]) -> BatchItemOut:
    return BatchItemOut(uuid=wire_id(item["uuid"]), type=item["type"], sequence_index=item["index"],
                        status=_item_status(item, states), graph_uuid=item.get("graph_uuid"),  # type: ignore[arg-type]
                        user_uuid=item.get("user_uuid"), thread_uuid=item.get("thread_uuid"),
                        episode_uuid=wire_id(item["episode"]) if item.get("episode") else None,
                        created_at=datetime.fromisoformat(item["created_at"]))


@router.post("/batches", status_code=201, response_model=BatchOut)
async def create(body: BatchIn, zep: Zep4) -> BatchOut:
    refuse_unsupported("batch.create", ignore_roles=body.ignore_roles, strict_ontology=body.strict_ontology)
    batch_id = new_id()
    record: dict[str, Any] = {"status": "draft", "metadata": body.metadata, "created_at": utc_now().isoformat(),
                              "items": []}
    _save(zep, batch_id, record)
    return _batch_out(batch_id, record, {})


@router.get("/batches", response_model=Page[BatchOut])
async def list_batches(zep: Zep4, page_size: PageSize = DEFAULT_PAGE, cursor: Cursor = None,
                       status: Annotated[str | None, Query(max_length=32)] = None) -> Page[BatchOut]:
    documents = sorted(zep.control.list_documents(zep.space.project.id, KIND, scope=""),
                       key=lambda d: d.body["created_at"], reverse=True)
    batches = [_batch_out(d.name, d.body, await _episode_states(zep, d.body)) for d in documents]
    if status is not None:
        batches = [b for b in batches if b.status == status]
    offset = window(cursor)
    return page_of(batches[offset:offset + page_size], offset, page_size, len(batches))


@router.get("/batches/{batch_uuid}", response_model=BatchOut)
async def get(batch_uuid: str, zep: Zep4) -> BatchOut:
    body = _load(zep, batch_uuid)
    return _batch_out(object_id(batch_uuid), body, await _episode_states(zep, body))


@router.delete("/batches/{batch_uuid}", response_model=AsyncResultOut)
async def delete(batch_uuid: str, zep: Zep4) -> AsyncResultOut:
    """Forget a draft batch (a processed batch's items are episodes now: delete those instead)."""
    if _load(zep, batch_uuid)["status"] != "draft":
        raise ConflictError(f"batch {batch_uuid!r} was processed; its items are episodes of their graphs")
    zep.control.delete_document(zep.space.project.id, KIND, "", object_id(batch_uuid))
    return AsyncResultOut(task=zep.tasks.done("batch_delete", {"batch_uuid": batch_uuid}))


def _checked(zep: Zep4Space, item: BatchItemIn) -> dict[str, Any]:
    """The item as the batch keeps it, its target resolved (``ChronomemError`` names a refusal)."""
    if item.document_id:
        raise InvalidInputError("document_id: chronomem does not implement documents")
    kept = item.model_dump(mode="json", exclude_none=True, exclude={"document_id"})
    if item.type == "thread_message":
        if not item.content or item.thread_uuid is None or item.graph_uuid or item.user_uuid:
            raise InvalidInputError("a thread_message needs content and thread_uuid (and no graph_uuid, user_uuid)")
        kept["thread_id"] = zep.addresses.thread(item.thread_uuid).thread_id
        return kept
    if not item.data or (item.graph_uuid is None) == (item.user_uuid is None) or item.thread_uuid:
        raise InvalidInputError("a graph_episode needs data and exactly one of graph_uuid and user_uuid")
    target = zep.addresses.graph(item.graph_uuid or item.user_uuid or "")
    kept["graph_uuid"] = target.uuid
    return kept


@router.post("/batches/{batch_uuid}/items", response_model=BatchItemsOut)
async def add_items(batch_uuid: str, body: BatchItemsIn, zep: Zep4) -> BatchItemsOut:
    batch_id, record = object_id(batch_uuid), _load(zep, batch_uuid)
    if record["status"] != "draft":
        raise ConflictError(f"batch {batch_uuid!r} was processed; make a new one")
    if len(record["items"]) + len(body.items) > MAX_ITEMS:
        raise InvalidInputError(f"items: a batch holds at most {MAX_ITEMS}")
    added, rejected = [], []
    for index, item in enumerate(body.items):
        try:
            kept = _checked(zep, item)
        except ChronomemError as exc:
            rejected.append(RejectedItemOut(index=index, reason=str(exc)))
            continue
        kept |= {"uuid": new_id(), "index": len(record["items"]), "created_at": utc_now().isoformat()}
        record["items"].append(kept)
        added.append(kept)
    _save(zep, batch_id, record)
    return BatchItemsOut(items=[_item_out(i, {}) for i in added], rejected_items=rejected)


@router.get("/batches/{batch_uuid}/items", response_model=Page[BatchItemOut])
async def list_items(batch_uuid: str, zep: Zep4, page_size: PageSize = DEFAULT_PAGE,
                     cursor: Cursor = None) -> Page[BatchItemOut]:
    record = _load(zep, batch_uuid)
    states = await _episode_states(zep, record)
    offset = window(cursor)
    shown = [_item_out(i, states) for i in record["items"][offset:offset + page_size]]
    return page_of(shown, offset, page_size, len(record["items"]))


def _target(item: dict[str, Any]) -> tuple[str, str]:
    return ("thread", item["thread_id"]) if item["type"] == "thread_message" else ("graph", item["graph_uuid"])


@router.post("/batches/{batch_uuid}/process", status_code=202, response_model=ProcessBatchOut)
async def process(batch_uuid: str, zep: Zep4) -> ProcessBatchOut:
    """Queue every item, in order, and answer with one task over them."""
    batch_id, record = object_id(batch_uuid), _load(zep, batch_uuid)
    if record["status"] != "draft":
        raise ConflictError(f"batch {batch_uuid!r} was processed already")
    if not record["items"]:
        raise InvalidInputError("the batch has no items")
    parts = []
    for (kind, name), run in groupby(record["items"], key=_target):
        items = list(run)
        if kind == "thread":
            messages = [NewMessage(content=i["content"], role=i.get("role") or "user", name=i.get("name"),
                                   reference_time=_time(i), metadata=i.get("metadata")) for i in items]
            episodes, task = await zep.space.add_messages(name, messages)
        else:
            ref = zep.addresses.graph(name).ref
            episodes, task = await zep.space.add_episodes(ref, [(i["data"], {
                "kind": i.get("data_type") or "text", "reference_time": _time(i),
                "source_description": i.get("source_description") or "", "metadata": i.get("metadata")})
                for i in items])
        for item, episode in zip(items, episodes, strict=True):
            item["episode"] = episode.id
        parts.append(task)
    task_out = await zep.tasks.ingest(parts, "batch_process")
    record |= {"status": "queued", "parts": [p.task_id for p in parts], "task": task_out.uuid}
    _save(zep, batch_id, record)
    return ProcessBatchOut(batch=_batch_out(batch_id, record, await _episode_states(zep, record)), task=task_out)


def _time(item: dict[str, Any]) -> datetime | None:
    value = item.get("reference_time")
    return datetime.fromisoformat(value) if value else None
