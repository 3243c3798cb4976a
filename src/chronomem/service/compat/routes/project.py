"""``client.graph`` entity types and ``client.context`` templates: what a project configures."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from chronomem.app.tenancy import GraphRef
from chronomem.controlplane import DocumentRecord
from chronomem.service.compat.deps import Zep, ZepSpace
from chronomem.service.compat.models import (
    ContextTemplateIn,
    ContextTemplateOut,
    ContextTemplatesOut,
    ContextTemplateUpdate,
    EdgeTypeIn,
    EntityTypeIn,
    EntityTypesOut,
    SetEntityTypesRequest,
    SuccessOut,
)
from chronomem.service.compat.ontology import store_types, stored_types

__all__ = ["router"]

router = APIRouter(tags=["ontology", "context"])


def _scopes(zep: ZepSpace, user_ids: list[str] | None, graph_ids: list[str] | None) -> list[str]:
    """The graphs named (their store groups), or the project default ("")."""
    refs = [GraphRef(user_id=u) for u in user_ids or ()] + [GraphRef(graph_id=g) for g in graph_ids or ()]
    return [zep.space.group_of(r) for r in refs] or [""]


@router.put("/entity-types", response_model=SuccessOut)
async def set_entity_types_internal(body: SetEntityTypesRequest, zep: Zep) -> SuccessOut:
    """Replace the entity and edge types of the project (or of the users and graphs named)."""
    entity_types, edge_types = body.entity_types or [], body.edge_types or []
    for scope in _scopes(zep, body.user_ids, body.graph_ids):
        store_types(zep.control, zep.space.project.id, scope, entity_types, edge_types)
    return SuccessOut(message=f"{len(entity_types)} entity type(s), {len(edge_types)} edge type(s) set")


@router.get("/entity-types", response_model=EntityTypesOut)
async def list_entity_types(
    zep: Zep,
    user_id: Annotated[str | None, Query(max_length=256)] = None,
    graph_id: Annotated[str | None, Query(max_length=256)] = None,
) -> EntityTypesOut:
    """The types in force for a user or graph: their own, else the project's."""
    pid = zep.space.project.id
    scope = _scopes(zep, [user_id] if user_id else None, [graph_id] if graph_id else None)[-1]
    body = stored_types(zep.control, pid, scope) or stored_types(zep.control, pid, "") or {
        "entity_types": [], "edge_types": []}
    return EntityTypesOut(entity_types=[EntityTypeIn.model_validate(t) for t in body["entity_types"]],
                          edge_types=[EdgeTypeIn.model_validate(t) for t in body["edge_types"]])


# -- context templates -------------------------------------------------------------------------------


def _template(document: DocumentRecord) -> ContextTemplateOut:
    return ContextTemplateOut(uuid=document.name, template_id=document.name, template=document.body)


@router.get("/context-templates", response_model=ContextTemplatesOut)
async def list_context_templates(zep: Zep) -> ContextTemplatesOut:
    return ContextTemplatesOut(templates=[_template(d) for d in zep.space.list_templates()])


@router.post("/context-templates", status_code=201, response_model=ContextTemplateOut)
async def create_context_template(body: ContextTemplateIn, zep: Zep) -> ContextTemplateOut:
    return _template(zep.space.save_template(body.template_id, body.template, create=True))


@router.get("/context-templates/{template_id}", response_model=ContextTemplateOut)
async def get_context_template(template_id: str, zep: Zep) -> ContextTemplateOut:
    return _template(zep.space.get_template(template_id))


@router.put("/context-templates/{template_id}", response_model=ContextTemplateOut)
async def update_context_template(template_id: str, body: ContextTemplateUpdate, zep: Zep) -> ContextTemplateOut:
    return _template(zep.space.save_template(template_id, body.template, create=False))


@router.delete("/context-templates/{template_id}", response_model=SuccessOut)
async def delete_context_template(template_id: str, zep: Zep) -> SuccessOut:
    zep.space.delete_template(template_id)
    return SuccessOut(message=f"context template {template_id!r} deleted")
