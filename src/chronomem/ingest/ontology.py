"""Custom ontologies: entity and relation types as pydantic models (docs/design.md §2).

A type's docstring tells the model what it means; its fields are the attributes extracted for it.
Signatures say which entity types a relation may join; a relation declared single-valued (a person
``LIVES_IN`` one place, ``WORKS_FOR`` one employer) has at most one current target per source, so a
new value invalidates the previous one deterministically, without asking a model::

    class Person(BaseModel):
        \"\"\"A human being.\"\"\"
        occupation: str | None = Field(None, description="their job")

    class WorksFor(BaseModel):
        \"\"\"Employment of a person by an organization.\"\"\"
        title: str | None = None

    ontology = Ontology(
        entity_types=[Person, Company],
        edge_types=[WorksFor],                      # named WORKS_FOR
        signatures={"WORKS_FOR": [("Person", "Company")]},
        single_valued=["WORKS_FOR", "LIVES_IN"],
    )
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from chronomem.domain import to_relation_type
from chronomem.errors import ConfigurationError
from chronomem.ingest.prompts import TypeSpec

__all__ = ["GENERIC_LABEL", "Ontology"]

GENERIC_LABEL = "Entity"
_RESERVED_FIELDS = frozenset({"id", "uuid", "name", "group_id", "labels", "summary", "aliases", "created_at",
                              "fact", "source", "target", "valid_at", "invalid_at", "expired_at", "relation_type"})

TypeArg = Sequence[type[BaseModel]] | Mapping[str, type[BaseModel]]


def _named(types: TypeArg, namer: Any) -> dict[str, type[BaseModel]]:
    items = types.items() if isinstance(types, Mapping) else ((namer(t.__name__), t) for t in types)
    named = dict(items)
    for name, model in named.items():
        clash = _RESERVED_FIELDS & set(model.model_fields)
        if clash:
            raise ConfigurationError(f"type {name!r} uses reserved attribute names {sorted(clash)}")
    return named


def _spec(name: str, model: type[BaseModel], signature: tuple[tuple[str, str], ...] = ()) -> TypeSpec:
    fields = tuple(
        (field_name, _type_name(info.annotation), info.description or "")
        for field_name, info in model.model_fields.items()
    )
    return TypeSpec(name, inspect.getdoc(model) or name, fields, signature)


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


class Ontology:
    """Entity types, relation types, their signatures and the single-valued relations."""

    def __init__(
        self,
        entity_types: TypeArg = (),
        edge_types: TypeArg = (),
        *,
        signatures: Mapping[str, Iterable[tuple[str, str]]] | None = None,
        single_valued: Iterable[str] = (),
    ) -> None:
        self.entity_types = _named(entity_types, lambda n: n)
        self.edge_types = _named(edge_types, to_relation_type)
        self.signatures = {to_relation_type(r): tuple(pairs) for r, pairs in (signatures or {}).items()}
        self.single_valued = frozenset(to_relation_type(r) for r in single_valued)
        known = set(self.entity_types) | {GENERIC_LABEL}
        for relation, pairs in self.signatures.items():
            unknown = {t for pair in pairs for t in pair} - known
            if unknown:
                raise ConfigurationError(f"signature of {relation} names unknown entity types {sorted(unknown)}")

    def _identity(self) -> tuple[object, ...]:
        return (self.entity_specs(), self.edge_specs(), self.single_valued)

    def __eq__(self, other: object) -> bool:
        """Equal when both declare the same types, attributes, signatures and single-valued relations
        (all that a config file or an HTTP body can say)."""
        return isinstance(other, Ontology) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    # -- prompt material -----------------------------------------------------------------------------

    def entity_specs(self) -> tuple[TypeSpec, ...]:
        return tuple(_spec(name, model) for name, model in self.entity_types.items())

    def edge_specs(self) -> tuple[TypeSpec, ...]:
        return tuple(
            _spec(name, model, self.signatures.get(name, ())) for name, model in self.edge_types.items()
        )

    # -- validation of what a model (or a mapping) produced -------------------------------------------

    def entity_labels(self, type_name: str | None) -> tuple[str, ...]:
        """Labels for an extracted type: ``("Entity", T)`` for a declared type T, else ``("Entity",)``."""
        if type_name and type_name in self.entity_types:
            return (GENERIC_LABEL, type_name)
        return (GENERIC_LABEL,)

    def entity_attributes(self, labels: Iterable[str], raw: Mapping[str, Any]) -> dict[str, Any]:
        """The attributes of ``raw`` that the entity's types declare and that validate; the rest is dropped."""
        result: dict[str, Any] = {}
        for label in labels:
            if label in self.entity_types:
                result.update(_valid_fields(self.entity_types[label], raw))
        return result

    def edge_attributes(self, relation_type: str, raw: Mapping[str, Any]) -> dict[str, Any]:
        model = self.edge_types.get(relation_type)
        return _valid_fields(model, raw) if model else {}

    def allows(self, relation_type: str, source_labels: Iterable[str], target_labels: Iterable[str]) -> bool:
        """Whether the relation may join entities with these labels (unsigned relations join anything)."""
        pairs = self.signatures.get(relation_type)
        if not pairs:
            return True
        sources, targets = set(source_labels), set(target_labels)
        return any(s in sources and t in targets for s, t in pairs)

    def is_single_valued(self, relation_type: str) -> bool:
        return relation_type in self.single_valued


def _valid_fields(model: type[BaseModel], raw: Mapping[str, Any]) -> dict[str, Any]:
    result = {}
    for name, info in model.model_fields.items():
        if name not in raw or raw[name] is None:
            continue
        adapter: TypeAdapter[Any] = TypeAdapter(info.annotation if info.annotation is not None else Any)
        try:
            value = adapter.validate_python(raw[name])
        except ValidationError:
            continue  # a wrong attribute is dropped, the entity or fact is kept
        result[name] = adapter.dump_python(value, mode="json")  # stored as JSON
    return result
