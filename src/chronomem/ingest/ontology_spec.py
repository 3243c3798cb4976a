"""An ontology declared as data (TOML, JSON, an HTTP body) and turned into an :class:`Ontology`.

The shape is Zep's entity and edge types (``name``, ``description``, ``properties`` with a type
``Text``/``Int``/``Float``/``Boolean``, edge ``source_targets``), so a document written by the Zep
compatibility API reads here unchanged, plus what chronomem's ontology adds: an edge type (or a bare
relation name in the top-level ``single_valued``) can be single-valued::

    [[entity_types]]
    name = "Person"
    description = "A human being."
    properties = [{ name = "occupation", type = "Text", description = "their job" }]

    [[edge_types]]
    name = "WORKS_FOR"
    description = "Employment of a person by an organization."
    source_targets = [{ source = "Person", target = "Company" }]
    single_valued = true

Each type becomes a pydantic model whose docstring is the description and whose optional fields
are the properties, which is what :class:`~chronomem.ingest.ontology.Ontology` reads.
"""

from __future__ import annotations

import re
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PydanticUserError,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from chronomem.domain import to_relation_type
from chronomem.errors import ConfigurationError
from chronomem.ingest.ontology import Ontology

__all__ = ["AttributeSpec", "EdgeTypeSpec", "EntityTypeSpec", "OntologySpec", "SourceTarget"]

AttributeType = Literal["Text", "Int", "Float", "Boolean"]
_PYTHON_TYPES: dict[str, type] = {"Text": str, "Int": int, "Float": float, "Boolean": bool}
_TYPE_NAMES = {python: name for name, python in _PYTHON_TYPES.items()}


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @field_validator("*", mode="before")
    @classmethod
    def _absent_lists_are_empty(cls, value: Any, info: Any) -> Any:
        # Zep's SDK sends null for an absent list of properties or source_targets
        if value is None and info.field_name in {"properties", "source_targets", "entity_types", "edge_types"}:
            return ()
        return value


# Attribute names become fields of a generated model: identifiers, and none of pydantic's own.
_ATTRIBUTE_NAME = r"^[A-Za-z][A-Za-z0-9_]*$"
_TYPE_NAME = r"^[A-Za-z][A-Za-z0-9 _-]*$"  # "Person", "WORKS_FOR", "works for"


class AttributeSpec(_Spec):
    name: str = Field(min_length=1, max_length=100, pattern=_ATTRIBUTE_NAME)
    type: AttributeType = "Text"
    description: str = Field(default="", max_length=1_000)

    @field_validator("name")
    @classmethod
    def _not_pydantics(cls, name: str) -> str:
        if name.startswith("model_"):
            raise ValueError(f"{name!r}: names starting with model_ are reserved")
        return name


class SourceTarget(_Spec):
    source: str | None = None  # None: any entity
    target: str | None = None


class EntityTypeSpec(_Spec):
    name: str = Field(min_length=1, max_length=100, pattern=_TYPE_NAME)
    description: str = Field(default="", max_length=2_000)
    properties: tuple[AttributeSpec, ...] = Field(
        default=(), validation_alias=AliasChoices("properties", "attributes"), max_length=50)

    @model_validator(mode="after")
    def _distinct_properties(self) -> EntityTypeSpec:
        _refuse_repeats([p.name for p in self.properties], f"properties of {self.name}")
        return self


class EdgeTypeSpec(EntityTypeSpec):
    source_targets: tuple[SourceTarget, ...] = ()  # the signatures: which entity types it joins
    single_valued: bool = False  # one current target per source: a new one invalidates the old


class OntologySpec(_Spec):
    """Entity and edge types with their attributes, signatures and single-valued relations."""

    entity_types: tuple[EntityTypeSpec, ...] = Field(default=(), max_length=100)
    edge_types: tuple[EdgeTypeSpec, ...] = Field(default=(), max_length=100)
    single_valued: tuple[str, ...] = ()  # relations single-valued without a declared edge type

    @field_validator("single_valued")
    @classmethod
    def _relation_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if not re.match(_TYPE_NAME, name):
                raise ValueError(f"{name!r} is not a relation name")
        return names

    @model_validator(mode="after")
    def _distinct_types(self) -> OntologySpec:
        _refuse_repeats([t.name for t in self.entity_types], "entity types")
        _refuse_repeats([to_relation_type(t.name) for t in self.edge_types], "edge types")
        return self

    @classmethod
    def parse(cls, data: Any, *, origin: str = "ontology") -> OntologySpec:
        """Validate ``data`` (a mapping) and check that it makes an ontology; ``ConfigurationError``
        naming ``origin`` otherwise."""
        try:
            spec = cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigurationError(f"{origin} is not a valid ontology: {_first_error(exc)}") from None
        spec.to_ontology(origin=origin)
        return spec

    def to_ontology(self, *, origin: str = "ontology") -> Ontology:
        try:
            return Ontology(
                entity_types={t.name: _model(t) for t in self.entity_types},
                edge_types={to_relation_type(t.name): _model(t) for t in self.edge_types},
                signatures={
                    to_relation_type(t.name): [(p.source or "Entity", p.target or "Entity") for p in t.source_targets]
                    for t in self.edge_types if t.source_targets
                },
                single_valued=[*self.single_valued, *(t.name for t in self.edge_types if t.single_valued)],
            )
        except (ConfigurationError, ValueError, TypeError, PydanticUserError) as exc:
            raise ConfigurationError(f"{origin} is not a valid ontology: {exc}") from None

    @classmethod
    def from_ontology(cls, ontology: Ontology) -> OntologySpec:
        """The data form of an ontology whose attributes are text, integers, numbers or booleans
        (``ConfigurationError`` for one made in Python with other attribute types)."""
        declared = set(ontology.edge_types)
        return cls(
            entity_types=tuple(
                _type_spec(EntityTypeSpec, name, model) for name, model in ontology.entity_types.items()),
            edge_types=tuple(
                _type_spec(EdgeTypeSpec, name, model, source_targets=tuple(
                    SourceTarget(source=s, target=t) for s, t in ontology.signatures.get(name, ())),
                    single_valued=name in ontology.single_valued)
                for name, model in ontology.edge_types.items()
            ),
            single_valued=tuple(sorted(ontology.single_valued - declared)),
        )


def _refuse_repeats(names: list[str], what: str) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"{what} repeat {', '.join(repeated)}")


def _model(spec: EntityTypeSpec) -> type[BaseModel]:
    fields: dict[str, Any] = {
        p.name: (_PYTHON_TYPES[p.type] | None, Field(None, description=p.description)) for p in spec.properties
    }
    model: type[BaseModel] = create_model(spec.name, **fields)
    model.__doc__ = spec.description or spec.name
    return model


def _type_spec(kind: type[EntityTypeSpec], name: str, model: type[BaseModel], **extra: Any) -> Any:
    import inspect

    properties = tuple(
        AttributeSpec(name=field, type=_attribute_type(name, field, info.annotation),
                      description=info.description or "")
        for field, info in model.model_fields.items()
    )
    description = inspect.getdoc(model) or ""
    return kind(name=name, description="" if description == name else description, properties=properties, **extra)


def _attribute_type(type_name: str, field: str, annotation: Any) -> AttributeType:
    candidates = [annotation]
    if get_origin(annotation) in (Union, types.UnionType):
        candidates = [a for a in get_args(annotation) if a is not type(None)]
    if len(candidates) == 1 and candidates[0] in _TYPE_NAMES:
        return _TYPE_NAMES[candidates[0]]  # type: ignore[return-value]
    raise ConfigurationError(
        f"attribute {type_name}.{field} ({annotation}) cannot be written as data: "
        "declare the ontology in the config file (Text, Int, Float or Boolean attributes)"
    )


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]
