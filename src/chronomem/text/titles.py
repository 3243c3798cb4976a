"""Titles of a position: "CEO", "Chief Operating Officer", "Vice President".

A title is written with capitals like a name ("Victor Lang, currently Chief Operating Officer, as
CEO") but names nobody: it is what a person holds, and the fact that says so joins the person and
the organisation. A model that writes a title as a fact's end ("CEO is Victor Lang") has stated an
identity, not a relation. A title here is a chief-officer acronym ("CEO", "CFO", "CISO"), a
vice-president's ("VP", "SVP", "EVP"), or words ending in a position's noun ("Chief Operating
Officer", "Managing Director", "Vice President of Sales", "Chairwoman"), with no possessive or digit in them
("Officer Kim's" and "District 9 Director" are something else).
"""

from __future__ import annotations

import re

__all__ = ["is_a_title"]

_ACRONYM = re.compile(r"C[A-Z]{1,2}O|[SE]?VP")
_POSITION = re.compile(
    r"(?:[A-Z][a-z]+\s+)*"
    r"(?:Officer|President|Director|Chair|Chairman|Chairwoman|Chairperson|Secretary|Treasurer|Counsel|Founder)"
    r"(?:\s+(?:of|for)(?:\s+(?:and|the|[A-Z][a-z]+))+)?"  # "Vice President of Sales and Marketing"
)


def is_a_title(name: str) -> bool:
    """Whether ``name`` is the title of a position rather than the name of something."""
    text = " ".join(name.split())
    return bool(_ACRONYM.fullmatch(text) or _POSITION.fullmatch(text))
