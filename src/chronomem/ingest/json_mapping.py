"""Declared mappings from JSON records to entities and facts: structured data without a model.

A mapping names where, in a record, each entity's name and attributes are, and which facts join
them. Values are found by dotted paths (``"customer.address.city"``); fact texts are templates whose
``{placeholders}`` are entity keys or paths. A record missing a value yields no entity or fact
for it, never an invented one::

    JsonMapping(
        name="crm-accounts",
        source_description="crm",                   # episodes with this source use it
        entities=[EntitySpec(key="account", name="company", label="Company"),
                  EntitySpec(key="manager", name="account_manager", label="Person"),
                  EntitySpec(key="city", name="hq_city", label="City")],
        facts=[FactSpec(source="account", relation_type="MANAGED_BY", target="manager",
                        fact="{account} is managed by {manager}", valid_at="updated_at"),
               FactSpec(source="account", relation_type="BASED_IN", target="city", others=("manager",),
                        fact="{account} is based in {city}, where {manager} works")],
    )

The output is the same as a model's extraction, so resolution, single-valued invalidation and the
write path are shared.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chronomem.domain import Episode, to_relation_type
from chronomem.ingest.dates import parse_model_datetime
from chronomem.ingest.prompts import ExtractedEntity, ExtractedFact, ExtractedGraph

__all__ = ["EntitySpec", "FactSpec", "JsonMapping", "find_mapping", "parse_record"]

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


class EntitySpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str  # how facts refer to this entity
    name: str  # path of the name in the record
    label: str = "Entity"
    attributes: dict[str, str] = Field(default_factory=dict)  # attribute -> path


class FactSpec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str  # entity key
    relation_type: str
    target: str  # entity key
    fact: str  # template over entity keys and paths
    valid_at: str | None = None  # path of a date; absent: the episode's reference time
    invalid_at: str | None = None
    others: tuple[str, ...] = ()  # entity keys of further participants (a hyperedge); absent ones are left out


class JsonMapping(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    source_description: str | None = None  # applies to episodes with this source description
    entities: tuple[EntitySpec, ...]
    facts: tuple[FactSpec, ...] = ()

    def applies_to(self, episode: Episode) -> bool:
        """Chosen by ``metadata["mapping"] == name`` or by the episode's source description."""
        if episode.metadata.get("mapping") == self.name:
            return True
        return self.source_description is not None and episode.source_description == self.source_description

    def extract(self, record: Any, reference_time: datetime) -> ExtractedGraph:
        """Entities and facts of one record (a JSON object, or a list of them)."""
        records = record if isinstance(record, list) else [record]
        graph = ExtractedGraph()
        for item in records:
            if isinstance(item, dict):
                one = self._extract_one(item, reference_time)
                graph.entities.extend(one.entities)
                graph.facts.extend(one.facts)
        return graph

    def _extract_one(self, record: dict[str, Any], reference_time: datetime) -> ExtractedGraph:
        names: dict[str, str] = {}
        entities = []
        for spec in self.entities:
            name = _lookup(record, spec.name)
            if name is None or not str(name).strip():
                continue
            names[spec.key] = str(name).strip()
            attributes = {a: v for a, path in spec.attributes.items() if (v := _lookup(record, path)) is not None}
            entities.append(ExtractedEntity(name=names[spec.key], type=spec.label, attributes=attributes))
        facts = [f for spec in self.facts if (f := self._fact(spec, record, names, reference_time))]
        return ExtractedGraph(entities=entities, facts=facts)

    @staticmethod
    def _fact(
        spec: FactSpec, record: dict[str, Any], names: dict[str, str], reference_time: datetime
    ) -> ExtractedFact | None:
        if spec.source not in names or spec.target not in names:
            return None
        text = _render(spec.fact, record, names)
        if text is None:
            return None
        valid = _date(record, spec.valid_at, reference_time) or reference_time
        invalid = _date(record, spec.invalid_at, reference_time)
        return ExtractedFact(
            source=names[spec.source], relation_type=to_relation_type(spec.relation_type), target=names[spec.target],
            fact=text, valid_at=valid.isoformat(), invalid_at=invalid.isoformat() if invalid else None,
            others=[names[key] for key in spec.others if key in names],
        )


def find_mapping(mappings: tuple[JsonMapping, ...], episode: Episode) -> JsonMapping | None:
    return next((m for m in mappings if m.applies_to(episode)), None)


def parse_record(episode: Episode) -> Any:
    return json.loads(episode.content)


def _lookup(record: Any, path: str) -> Any:
    value = record
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _render(template: str, record: dict[str, Any], names: dict[str, str]) -> str | None:
    missing = False

    def substitute(match: re.Match[str]) -> str:
        nonlocal missing
        key = match.group(1)
        value = names.get(key, _lookup(record, key))
        if value is None:
            missing = True
            return ""
        return str(value)

    text = _PLACEHOLDER.sub(substitute, template)
    return None if missing else text


def _date(record: dict[str, Any], path: str | None, reference_time: datetime) -> datetime | None:
    if path is None:
        return None
    value = _lookup(record, path)
    return parse_model_datetime(str(value), reference_time) if value is not None else None
