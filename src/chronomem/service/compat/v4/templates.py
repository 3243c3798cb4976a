"""Context templates by UUID: v4 names a template by ``name`` and addresses it by a UUID derived
from the project and that name, so a template made through ``/api/v2`` or ``/api/v3`` (its
``template_id`` is the name) has one too. The templates themselves are the project's
(:meth:`chronomem.app.tenancy.ProjectSpace.save_template`), shared by every API."""

from __future__ import annotations

import uuid

from chronomem.app.tenancy import ProjectSpace
from chronomem.controlplane import DocumentRecord
from chronomem.errors import NotFoundError
from chronomem.service.compat.v4.models import ContextTemplateOut

__all__ = ["render_template", "template_name", "template_uuid"]

_NAMESPACE = uuid.UUID("0f7a3c52-52b4-4a55-a7de-3e3c9b0f8d21")


def template_uuid(space: ProjectSpace, name: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{space.project.id}\0{name}"))


def template_name(space: ProjectSpace, address: str) -> str:
    """The name of the project's template at ``address`` (``NotFoundError`` else)."""
    for document in space.list_templates():
        if template_uuid(space, document.name) == address:
            return document.name
    raise NotFoundError(f"context template {address!r} not found")


def render_template(space: ProjectSpace, document: DocumentRecord) -> ContextTemplateOut:
    return ContextTemplateOut(uuid=template_uuid(space, document.name), name=document.name, template=document.body,
                              created_at=document.updated_at)
