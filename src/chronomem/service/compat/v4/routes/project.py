"""``client.context`` templates, ``client.task`` and ``client.lookup``: what a project holds beside
its graphs."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from chronomem.app.addresses import Addresses
from chronomem.app.tenancy import SUMMARY_INSTRUCTION
from chronomem.errors import ChronomemError
from chronomem.service.compat.ontology import clear_types, store_types, stored_types
from chronomem.service.compat.v4.deps import Zep4, Zep4Space
from chronomem.service.compat.v4.errors import refuse_unsupported
from chronomem.service.compat.v4.idempotency import IdempotentRoute
from chronomem.service.compat.v4.models import (
    AsyncResultOut,
    ContextTemplateIn,
    ContextTemplateOut,
    InstructionIn,
    InstructionsIn,
    InstructionsOut,
    OntologyIn,
    OntologyOut,
    Page,
    TaskOut,
    TemplateFilterIn,
    v2_types,
)
from chronomem.service.compat.v4.ontology import ontology_out
from chronomem.service.compat.v4.pages import DEFAULT_PAGE, Cursor, PageSize, page_of, window
from chronomem.service.compat.v4.templates import render_template, template_name

__all__ = ["router"]

router = APIRouter(tags=["context", "task", "lookup"], route_class=IdempotentRoute)


# -- context templates -------------------------------------------------------------------------------


@router.post("/context-templates", status_code=201, response_model=ContextTemplateOut)
async def create_template(body: ContextTemplateIn, zep: Zep4) -> ContextTemplateOut:
    return render_template(zep.space, zep.space.save_template(body.name, body.template, create=True))


@router.post("/context-templates/list", response_model=Page[ContextTemplateOut])
async def list_templates(zep: Zep4, body: Annotated[TemplateFilterIn | None, Body()] = None,
                         page_size: PageSize = DEFAULT_PAGE, cursor: Cursor = None) -> Page[ContextTemplateOut]:
    templates = zep.space.list_templates()
    if body is not None and body.name:
        templates = [t for t in templates if t.name == body.name]
    offset = window(cursor)
    shown = [render_template(zep.space, t) for t in templates[offset:offset + page_size]]
    return page_of(shown, offset, page_size, len(templates))


@router.get("/context-templates/{template_uuid}", response_model=ContextTemplateOut)
async def get_template(template_uuid: str, zep: Zep4) -> ContextTemplateOut:
    return render_template(zep.space, zep.space.get_template(template_name(zep.space, template_uuid)))


@router.put("/context-templates/{template_uuid}", response_model=ContextTemplateOut)
async def update_template(template_uuid: str, body: ContextTemplateIn, zep: Zep4) -> ContextTemplateOut:
    """Replace the template's text (its name, which its UUID is made from, stays)."""
    name = template_name(zep.space, template_uuid)
    if body.name != name:
        refuse_unsupported("context.update_template (a new name)", name=body.name)
    return render_template(zep.space, zep.space.save_template(name, body.template, create=False))


@router.delete("/context-templates/{template_uuid}", response_model=AsyncResultOut)
async def delete_template(template_uuid: str, zep: Zep4) -> AsyncResultOut:
    zep.space.delete_template(template_name(zep.space, template_uuid))
    return AsyncResultOut(task=zep.tasks.done("context_template_delete", {"template_uuid": template_uuid}))


# -- tasks -------------------------------------------------------------------------------------------


@router.get("/tasks", response_model=Page[TaskOut])
async def list_tasks(zep: Zep4, page_size: PageSize = DEFAULT_PAGE, cursor: Cursor = None,
                     status: Annotated[str | None, Query(max_length=32)] = None,
                     type: Annotated[str | None, Query(max_length=64)] = None) -> Page[TaskOut]:
    """The tasks ``/api/v4`` handed out, newest first."""
    tasks = await zep.tasks.list(status=status, kind=type)
    offset = window(cursor)
    return page_of(tasks[offset:offset + page_size], offset, page_size, len(tasks))


@router.get("/tasks/{task_uuid}", response_model=TaskOut)
async def get_task(task_uuid: str, zep: Zep4) -> TaskOut:
    return await zep.tasks.get(task_uuid)


# -- lookup ------------------------------------------------------------------------------------------


@router.post("/lookup", response_model=dict[str, Any])
async def lookup_batch(zep: Zep4, body: Annotated[dict[str, Any] | None, Body()] = None) -> dict[str, Any]:
    """The UUIDs of users, threads and graphs named by their external ids (``found: false`` for an
    id the project does not hold)."""
    items: list[dict[str, Any]] = []
    wanted = body or {}
    finders: dict[str, tuple[str, Callable[[str], str]]] = {
        "users": ("user", lambda i: Addresses.user_uuid(zep.space.get_user(i))),
        "threads": ("thread", lambda i: zep.addresses.thread_uuid(zep.space.get_thread(i))),
        "graphs": ("graph", lambda i: Addresses.graph_uuid(zep.space.get_graph(i))),
    }
    for field, (kind, find) in finders.items():
        for legacy in wanted.get(field) or []:
            item: dict[str, Any] = {"resource_type": kind, "legacy_id": str(legacy), "found": False}
            with contextlib.suppress(ChronomemError):
                item |= {"uuid": find(str(legacy)), "found": True}
            items.append(item)
    return {"items": items}


# -- the project's ontology and summary instructions --------------------------------------------------


@router.get("/project/ontology", response_model=OntologyOut)
async def get_project_ontology(zep: Zep4) -> OntologyOut:
    """The project's entity and edge types (``inherited``: it has none, the server's apply)."""
    stored = stored_types(zep.control, zep.space.project.id, "")
    return ontology_out(stored or {"entity_types": [], "edge_types": []}, inherited=stored is None)


@router.put("/project/ontology", response_model=OntologyOut)
async def set_project_ontology(body: OntologyIn, zep: Zep4) -> OntologyOut:
    """Replace the project's types (``inherited: true``: drop them)."""
    refuse_unsupported("project.set_ontology", entity_type_hierarchy=body.entity_type_hierarchy)
    if body.inherited:
        clear_types(zep.control, zep.space.project.id, "")
    else:
        store_types(zep.control, zep.space.project.id, "", *v2_types(body))
    return await get_project_ontology(zep)


def _instructions(zep: Zep4Space, scope: str) -> list[InstructionIn]:
    documents = zep.control.list_documents(zep.space.project.id, SUMMARY_INSTRUCTION, scope=scope)
    return [InstructionIn(name=d.name, text=d.body) for d in documents]


def _replace_instructions(zep: Zep4Space, scope: str, body: InstructionsIn) -> None:
    pid = zep.space.project.id
    for document in zep.control.list_documents(pid, SUMMARY_INSTRUCTION, scope=scope):
        zep.control.delete_document(pid, SUMMARY_INSTRUCTION, scope, document.name)
    if not body.inherited:
        for instruction in body.instructions or ():
            zep.control.put_document(pid, SUMMARY_INSTRUCTION, scope, instruction.name, instruction.text)


@router.get("/project/user-summary-instructions", response_model=InstructionsOut)
async def get_project_summary_instructions(zep: Zep4) -> InstructionsOut:
    """What every user summary of the project follows."""
    return InstructionsOut(instructions=_instructions(zep, ""), inherited=False)


@router.put("/project/user-summary-instructions", response_model=InstructionsOut)
async def set_project_summary_instructions(body: InstructionsIn, zep: Zep4) -> InstructionsOut:
    _replace_instructions(zep, "", body)
    return await get_project_summary_instructions(zep)


@router.get("/users/{user_uuid}/summary-instructions", response_model=InstructionsOut)
async def get_user_summary_instructions(user_uuid: str, zep: Zep4) -> InstructionsOut:
    """The user's own instructions, else the project's (``inherited``); a user's summary follows
    both."""
    own = _instructions(zep, zep.addresses.user(user_uuid).group_id)
    return InstructionsOut(instructions=own or _instructions(zep, ""), inherited=not own)


@router.put("/users/{user_uuid}/summary-instructions", response_model=InstructionsOut)
async def set_user_summary_instructions(user_uuid: str, body: InstructionsIn, zep: Zep4) -> InstructionsOut:
    """Replace the user's own instructions (``inherited: true``: drop them)."""
    _replace_instructions(zep, zep.addresses.user(user_uuid).group_id, body)
    return await get_user_summary_instructions(user_uuid, zep)
