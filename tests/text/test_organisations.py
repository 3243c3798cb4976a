"""Names of organisations and venues taken from the text by their head word."""

from __future__ import annotations

import pytest

from chronomem.text.organisations import organisations_named_in


@pytest.mark.parametrize(("text", "names"), [
    ("Bit of background: I've taught chemistry at Westcombe Academy in Exeter since 2018.", ["Westcombe Academy"]),
    ("On September 1 I start as head of science at Kingsmead Free School in Bath.", ["Kingsmead Free School"]),
    ("I've booked four nights at the Hotel Zubia Berri from the 22nd.", ["Hotel Zubia Berri"]),
    ("She coaches at Fernhill Rovers and studies at the University of Bath.",
     ["Fernhill Rovers", "University of Bath"]),
    ("The Brightwater Sports Clinic referred me. Pellworth Instruments, a maker of marine sensors, agreed.",
     ["Brightwater Sports Clinic", "Pellworth Instruments"]),
    # no head word, or a head word alone: no name of this kind
    ("Big News: mostly on Saturday Mornings with Ana Lopes.", []),
    ("The School was closed, and the Hotel too.", []),
])
def test_names_by_their_head_word(text: str, names: list[str]) -> None:
    assert organisations_named_in(text) == names
