"""Diagnoses, medicines, officers' roles and flight routes said in a set form."""

from __future__ import annotations

import pytest

from chronomem.ingest.set_forms import forms_said


@pytest.mark.parametrize(("text", "said"), [
    ("Dr. Okafor diagnosed me with type 2 diabetes and put me on metformin, 500 mg twice a day.",
     [("condition", "me", "type 2 diabetes", "diagnosed me with type 2 diabetes"),
      ("medicine", "me", "metformin", "put me on metformin")]),
    ("I also got diagnosed with iron-deficiency anemia, and Dr. Parks started me on ferrous sulfate.",
     [("condition", "I", "iron-deficiency anemia", "I also got diagnosed with iron-deficiency anemia"),
      ("medicine", "me", "ferrous sulfate", "started me on ferrous sulfate")]),
    ("My mom, Carmen, was diagnosed with early Alzheimer's.",
     [("condition", "Carmen", "early Alzheimer's", "Carmen, was diagnosed with early Alzheimer's")]),
    ("On April 12 Dr. Morales switched me from lisinopril to amlodipine.",
     [("medicine", "me", "amlodipine", "switched me from lisinopril to amlodipine")]),
    ("I take sumatriptan when an attack starts.", [("medicine", "I", "sumatriptan", "I take sumatriptan")]),
    ("I'm booked on BA283 from London Heathrow to Los Angeles on November 20.",
     [("departs", "BA283", "London Heathrow", "BA283 from London Heathrow"),
      ("arrives", "BA283", "Los Angeles", "BA283 from London Heathrow to Los Angeles")]),
    ("Flight LH401 Frankfurt to New York JFK, departing 2 April.",
     [("departs", "LH401", "Frankfurt", "LH401 Frankfurt"),
      ("arrives", "LH401", "New York JFK", "LH401 Frankfurt to New York JFK")]),
    # an officer's role in an organisation, begun or ended
    ("Tobias Arkwright retires as chief operating officer of Pellworth Instruments on 31 August.",
     [("role", "Tobias Arkwright", "Pellworth Instruments",
       "Tobias Arkwright retires as chief operating officer of Pellworth Instruments")]),
    ("Ana Lee, our finance director, has been appointed chief executive of Brightline Foods.",
     [("role", "Ana Lee", "Brightline Foods",
       "Ana Lee, our finance director, has been appointed chief executive of Brightline Foods")]),
    ("Nordhavn Shipping has appointed Ingrid Berg as CFO, effective 1 May.",
     [("role", "Ingrid Berg", "Nordhavn Shipping", "Nordhavn Shipping has appointed Ingrid Berg as CFO")]),
    ("Priya became head of sales at Globex.", [("role", "Priya", "Globex", "Priya became head of sales at Globex")]),
    ("Pinecone CEO Luis Ortega will join Redwood.", [("role", "Luis Ortega", "Pinecone", "Pinecone CEO Luis Ortega")]),
    ("Tom Becker, Fabrikam's head of design, is my contact.",
     [("role", "Tom Becker", "Fabrikam", "Tom Becker, Fabrikam's head of design,")]),
    # a title that is no office, a person named after a title, "my", a denial: no role
    ("I retired as a teacher at Westcombe Academy.", []),
    ("Heliox Energy's new CEO Victor Lang has named Priya Sethi as Chief Operating Officer.",
     [("role", "Victor Lang", "Heliox Energy", "Heliox Energy's new CEO Victor Lang")]),
    ("My partner Jonas cooks.", []),
    ("He did not resign as chair of Acme Corp.", []),
    # a pronoun is someone the words do not name; a denial, a list and a call are no medicine
    ("Dr. Stein started her on donepezil.", []),
    ("I was never diagnosed with asthma.", []),
    ("They put me on the waiting list.", []),
    ("The clinic put me on hold.", []),
    ("I'm on DY1307 now, and I use Notion.", []),
    ("I take the bus to work.", []),
])
def test_a_form_said(text: str, said: list[tuple[str, str, str, str]]) -> None:
    assert [(s.kind, s.holder, s.value, text[s.start:s.end]) for s in forms_said(text)] == said


def test_the_writers_words_begin_after_who_says_them() -> None:
    text = "Rahul: Dr. Okafor put me on metformin."
    assert [s.value for s in forms_said(text, len("Rahul: "))] == ["metformin"]


@pytest.mark.parametrize(("text", "title", "ended"), [
    ("Tobias Arkwright retires as chief operating officer of Pellworth Instruments on 31 August.",
     "chief operating officer", True),
    ("Margaret Osei will step down as chief executive of Heliox Energy.", "chief executive", True),
    ("Yewande Ashby becomes the new finance director of Pellworth Instruments.", "finance director", False),
])
def test_a_role_carries_its_title_and_whether_it_ends(text: str, title: str, ended: bool) -> None:
    (said,) = forms_said(text)
    assert (said.detail, said.ended) == (title, ended)
