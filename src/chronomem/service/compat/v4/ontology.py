"""Entity and edge types in v4's shape: the same documents v3's ``set_entity_types`` writes
(:mod:`chronomem.service.compat.ontology`), property types in lower case."""

from __future__ import annotations

from typing import Any

from chronomem.service.compat.v4.models import OntologyOut

__all__ = ["ontology_out"]


def ontology_out(body: dict[str, Any], *, inherited: bool) -> OntologyOut:
    def lower(kind: dict[str, Any]) -> dict[str, Any]:
        properties = [p | {"type": str(p["type"]).lower()} for p in kind.get("properties") or ()]
        return {k: v for k, v in (kind | {"properties": properties}).items() if v is not None}

    return OntologyOut(entity_types=[lower(t) for t in body["entity_types"]],
                       edge_types=[lower(t) for t in body["edge_types"]], inherited=inherited)
