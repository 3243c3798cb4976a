"""An ontology declared as data becomes the same Ontology a Python declaration makes."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from chronomem.errors import ConfigurationError
from chronomem.ingest.ontology import Ontology
from chronomem.ingest.ontology_spec import OntologySpec

DATA = {
    "entity_types": [{"name": "Person", "description": "A human being.",
                      "properties": [{"name": "occupation", "type": "Text", "description": "their job"}]},
                     {"name": "Company", "description": "A business."}],
    "edge_types": [{"name": "works for", "description": "Employment.",
                    "source_targets": [{"source": "Person", "target": "Company"}], "single_valued": True}],
    "single_valued": ["LIVES_IN"],
}


class Person(BaseModel):
    """A human being."""

    occupation: str | None = Field(None, description="their job")


class Company(BaseModel):
    """A business."""


class WorksFor(BaseModel):
    """Employment."""


def test_data_and_python_declare_the_same_ontology():
    python = Ontology(entity_types=[Person, Company], edge_types=[WorksFor],
                      signatures={"WORKS_FOR": [("Person", "Company")]}, single_valued=["WORKS_FOR", "LIVES_IN"])
    assert OntologySpec.parse(DATA).to_ontology() == python
    assert OntologySpec.from_ontology(python).to_ontology() == python


def test_what_the_zep_api_stores_reads_unchanged():
    zep = {"entity_types": [{"name": "Pet", "description": "An animal.", "properties": None}],
           "edge_types": [{"name": "OWNS", "description": "Ownership.", "properties": None, "source_targets": None}]}
    ontology = OntologySpec.parse(zep).to_ontology()
    assert list(ontology.entity_types) == ["Pet"] and list(ontology.edge_types) == ["OWNS"]


@pytest.mark.parametrize(("data", "complaint"), [
    ({"edge_types": [{"name": "X", "source_targets": [{"source": "Ghost", "target": "Company"}]}]}, "Ghost"),
    ({"entity_types": [{"name": "P", "properties": [{"name": "summary"}]}]}, "reserved"),
    ({"entity_types": [{"name": "P", "properties": [{"name": "a", "type": "Date"}]}]}, "entity_types.0"),
    ({"entity_type": []}, "entity_type"),
    ({"entity_types": [{"name": "P", "properties": [{"name": "_hidden"}]}]}, "pattern"),  # fuzz found a 500 here
    ({"entity_types": [{"name": "P", "properties": [{"name": "model_config"}]}]}, "model_"),
    ({"entity_types": [{"name": "P"}, {"name": "P"}]}, "entity types repeat P"),
    ({"edge_types": [{"name": "works for"}, {"name": "WORKS_FOR"}]}, "edge types repeat WORKS_FOR"),
    ({"entity_types": [{"name": "P", "properties": [{"name": "x"}, {"name": "x"}]}]}, "properties of P repeat x"),
    ({"single_valued": [""]}, "not a relation name"),
])
def test_an_invalid_declaration_says_what_is_wrong(data, complaint):
    with pytest.raises(ConfigurationError, match=complaint):
        OntologySpec.parse(data, origin="here")


def test_an_ontology_with_types_data_cannot_name_says_so():
    class Trip(BaseModel):
        """A journey."""

        stops: list[str] = []

    with pytest.raises(ConfigurationError, match=r"Trip\.stops"):
        OntologySpec.from_ontology(Ontology(entity_types=[Trip]))
