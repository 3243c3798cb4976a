"""A project's own ontology and JSON mappings: stored as project documents in the control plane,
read and replaced over HTTP and the CLI, and applied by the workers to the project's groups.

The ontology document is the one the Zep compatibility API's ``set_entity_types`` writes (kind
``ontology``, name ``types``; its shape is :class:`~chronomem.ingest.ontology_spec.OntologySpec`'s),
so both APIs read and write the same types. A document of a user's or graph's own group (scope = its
group id) wins over the project's (scope ``""``); without either, the server's settings apply.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from chronomem.config.sources import load_json_mappings
from chronomem.controlplane import ControlPlane
from chronomem.errors import ConfigurationError, InvalidInputError, NotFoundError
from chronomem.ingest.json_mapping import JsonMapping
from chronomem.ingest.ontology import Ontology
from chronomem.ingest.ontology_spec import OntologySpec
from chronomem.ingest.profiles import GroupProfile

__all__ = [
    "MAPPINGS_KIND",
    "ONTOLOGY_KIND",
    "InForce",
    "ProjectProfiles",
    "json_mappings_in_force",
    "ontology_in_force",
    "reset_json_mappings",
    "reset_ontology",
    "set_json_mappings",
    "set_ontology",
]

ONTOLOGY_KIND, ONTOLOGY_NAME = "ontology", "types"  # shared with the Zep compatibility API
MAPPINGS_KIND, MAPPINGS_NAME = "json_mappings", "mappings"
PROJECT_SCOPE = ""

Source = Literal["project", "server"]


@dataclass(frozen=True, slots=True)
class InForce:
    """What applies to a project's groups, and whether the project or the server's settings say so."""

    source: Source
    value: Any  # an OntologySpec, or a tuple of JsonMapping


def _stored(control: ControlPlane, project_id: str, kind: str, name: str, scopes: tuple[str, ...]) -> Any | None:
    for scope in scopes:
        try:
            return control.get_document(project_id, kind, scope, name).body
        except NotFoundError:
            continue
    return None


# -- the ontology ------------------------------------------------------------------------------------


def ontology_in_force(control: ControlPlane, project_id: str, default: Ontology) -> InForce:
    body = _stored(control, project_id, ONTOLOGY_KIND, ONTOLOGY_NAME, (PROJECT_SCOPE,))
    if body is None:
        return InForce("server", OntologySpec.from_ontology(default))
    return InForce("project", OntologySpec.model_validate(body))


def set_ontology(control: ControlPlane, project_id: str, spec: OntologySpec) -> OntologySpec:
    """Replace the project's ontology; one that does not make an ontology changes nothing."""
    _checked(lambda: spec.to_ontology(origin="the ontology"))
    control.put_document(project_id, ONTOLOGY_KIND, PROJECT_SCOPE, ONTOLOGY_NAME, spec.model_dump(mode="json"))
    return spec


def reset_ontology(control: ControlPlane, project_id: str) -> bool:
    """Forget the project's ontology (the server's applies again); ``False`` if it had none."""
    return control.delete_document(project_id, ONTOLOGY_KIND, PROJECT_SCOPE, ONTOLOGY_NAME)


# -- the JSON mappings -------------------------------------------------------------------------------


def json_mappings_in_force(control: ControlPlane, project_id: str, default: tuple[JsonMapping, ...]) -> InForce:
    body = _stored(control, project_id, MAPPINGS_KIND, MAPPINGS_NAME, (PROJECT_SCOPE,))
    if body is None:
        return InForce("server", default)
    return InForce("project", load_json_mappings(body))


def set_json_mappings(control: ControlPlane, project_id: str, mappings: Any) -> tuple[JsonMapping, ...]:
    """Replace the project's mappings (a list of mapping objects); invalid ones change nothing."""
    parsed: tuple[JsonMapping, ...] = _checked(lambda: load_json_mappings(mappings, "the JSON mappings"))
    control.put_document(project_id, MAPPINGS_KIND, PROJECT_SCOPE, MAPPINGS_NAME,
                         [m.model_dump(mode="json") for m in parsed])
    return parsed


def reset_json_mappings(control: ControlPlane, project_id: str) -> bool:
    return control.delete_document(project_id, MAPPINGS_KIND, PROJECT_SCOPE, MAPPINGS_NAME)


def _checked(parse: Any) -> Any:
    try:
        return parse()
    except ConfigurationError as exc:  # from a caller, bad data is bad input (422), not a server fault
        raise InvalidInputError(str(exc)) from None


# -- what the workers ask ----------------------------------------------------------------------------


class ProjectProfiles:
    """:class:`~chronomem.ingest.profiles.GroupProfiles` over the control plane: a group's
    project's documents (the group's own first). Parsed documents are cached by content, so an
    episode costs two indexed lookups and no parsing."""

    def __init__(self, control: ControlPlane) -> None:
        self._control = control
        self._parsed: dict[tuple[str, str], Any] = {}

    def profile(self, group_id: str) -> GroupProfile | None:
        project_id = self._control.project_of_group(group_id)
        if project_id is None:
            return None
        scopes = (group_id, PROJECT_SCOPE)
        ontology = _stored(self._control, project_id, ONTOLOGY_KIND, ONTOLOGY_NAME, scopes)
        mappings = _stored(self._control, project_id, MAPPINGS_KIND, MAPPINGS_NAME, scopes)
        if ontology is None and mappings is None:
            return None
        return GroupProfile(
            ontology=None if ontology is None else self._parse(ONTOLOGY_KIND, ontology),
            json_mappings=None if mappings is None else self._parse(MAPPINGS_KIND, mappings),
        )

    def _parse(self, kind: str, body: Any) -> Any:
        key = (kind, json.dumps(body, sort_keys=True))
        if key not in self._parsed:
            if len(self._parsed) > 1_000:
                self._parsed.clear()
            self._parsed[key] = (OntologySpec.parse(body).to_ontology() if kind == ONTOLOGY_KIND
                                 else load_json_mappings(body))
        return self._parsed[key]
