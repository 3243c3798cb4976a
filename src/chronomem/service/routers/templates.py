"""Named context templates of the project: the context block in a form the caller chose, usable
by id in every context call (``?template_id=``). Syntax: :mod:`chronomem.search.templates`."""

from __future__ import annotations

from fastapi import APIRouter, Response

from chronomem.controlplane import DocumentRecord
from chronomem.service.deps import CONFLICT_RESPONSE, ERROR_RESPONSES, Space
from chronomem.service.schemas import TemplateIn, TemplateList, TemplateOut

__all__ = ["router"]

router = APIRouter(prefix="/context-templates", tags=["context"], responses=ERROR_RESPONSES)


def _out(document: DocumentRecord) -> TemplateOut:
    return TemplateOut(template_id=document.name, template=document.body, updated_at=document.updated_at)


@router.post("", status_code=201, response_model=TemplateOut, responses=CONFLICT_RESPONSE,
             summary="Store a named context template")
async def create_template(body: TemplateIn, space: Space) -> TemplateOut:
    return _out(space.save_template(body.template_id, body.template, create=True))


@router.get("", response_model=TemplateList, summary="The project's context templates")
async def list_templates(space: Space) -> TemplateList:
    return TemplateList(templates=[_out(d) for d in space.list_templates()])


@router.get("/{template_id}", response_model=TemplateOut, summary="Get a context template")
async def get_template(template_id: str, space: Space) -> TemplateOut:
    return _out(space.get_template(template_id))


@router.put("/{template_id}", response_model=TemplateOut, summary="Replace a context template's text")
async def replace_template(template_id: str, body: TemplateIn, space: Space) -> TemplateOut:
    return _out(space.save_template(template_id, body.template, create=False))


@router.delete("/{template_id}", status_code=204, summary="Delete a context template")
async def delete_template(template_id: str, space: Space) -> Response:
    space.delete_template(template_id)
    return Response(status_code=204)
