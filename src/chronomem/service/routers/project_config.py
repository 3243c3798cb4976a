"""A project's ontology and JSON mappings: read, replace, and reset to the server's (``/ontology``,
``/mappings``). A replaced document applies to episodes the workers extract from then on."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from chronomem.ingest.json_mapping import JsonMapping
from chronomem.ingest.ontology_spec import OntologySpec
from chronomem.service.deps import ERROR_RESPONSES, Space

__all__ = ["router"]

router = APIRouter(tags=["configuration"], responses=ERROR_RESPONSES)

Source = Literal["project", "server"]


class OntologyOut(BaseModel):
    source: Source = Field(description="'project': the project's own; 'server': the server's settings")
    ontology: OntologySpec


class MappingsIn(BaseModel):
    mappings: list[JsonMapping] = Field(max_length=100)


class MappingsOut(BaseModel):
    source: Source
    mappings: list[JsonMapping]


@router.get("/ontology", response_model=OntologyOut, summary="The ontology the project's episodes are extracted with")
async def get_ontology(space: Space) -> OntologyOut:
    found = space.ontology()
    return OntologyOut(source=found.source, ontology=found.value)


@router.put("/ontology", response_model=OntologyOut,
            summary="Replace the project's ontology (entity and edge types, signatures, single-valued relations)")
async def put_ontology(body: OntologySpec, space: Space) -> OntologyOut:
    return OntologyOut(source="project", ontology=space.set_ontology(body))


@router.delete("/ontology", response_model=OntologyOut, summary="Forget the project's ontology: the server's applies")
async def delete_ontology(space: Space) -> OntologyOut:
    found = space.reset_ontology()
    return OntologyOut(source=found.source, ontology=found.value)


@router.get("/mappings", response_model=MappingsOut, summary="The JSON mappings of the project's JSON episodes")
async def get_mappings(space: Space) -> MappingsOut:
    found = space.json_mappings()
    return MappingsOut(source=found.source, mappings=list(found.value))


@router.put("/mappings", response_model=MappingsOut, summary="Replace the project's JSON mappings")
async def put_mappings(body: MappingsIn, space: Space) -> MappingsOut:
    return MappingsOut(source="project", mappings=list(space.set_json_mappings(body.mappings)))


@router.delete("/mappings", response_model=MappingsOut, summary="Forget the project's mappings: the server's apply")
async def delete_mappings(space: Space) -> MappingsOut:
    found = space.reset_json_mappings()
    return MappingsOut(source=found.source, mappings=list(found.value))
