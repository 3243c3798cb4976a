"""Codes a text names: flight numbers, booking references, order and model numbers.

"I'm now on DY1307", "my booking reference is QX7L2P": a code is what a user comes back for, and a
model reading for people, places and things skips it as often as not. A code is one token of
capital letters and digits with at least one of each and two digits, four to twelve long ("BA269",
"QX7L2P", "A320"), not a time or a quantity ("10AM", "500MG" read as such are left to the date
parser and the fact text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CODE", "Reference", "codes_in", "references_given"]

CODE = re.compile(r"(?<![\w-])(?=[A-Z0-9]{4,12}(?![\w-]))(?=[A-Z0-9]*[A-Z])(?=(?:[A-Z]*\d){2})[A-Z0-9]+")
_NOT_A_CODE = re.compile(r"\d+(?:AM|PM|MG|KG|KM|ML|GB|MB|TB|HZ|MHZ|GHZ|MM|CM|TH|ST|ND|RD|S)")


def codes_in(text: str) -> list[str]:
    """The codes ``text`` names, each once, in the order they first appear."""
    found = (m.group() for m in CODE.finditer(text))
    return list(dict.fromkeys(code for code in found if not _NOT_A_CODE.fullmatch(code)))


@dataclass(frozen=True, slots=True)
class Reference:
    """A code given as the writer's own reference: ``label`` ("booking reference"), ``code``, and
    the span ``start:end`` of the words that give it ("booking reference QX7L2P")."""

    label: str
    code: str
    start: int
    end: int


# what a code is given as, right before it: "booking reference QX7L2P", "confirmation number:
# ED4471", "Confirmation code is 7KD4PW", "reservation no. 12AB34"
_GIVEN_AS = re.compile(
    r"\b(?P<label>(?:(?:booking|flight|hotel|reservation|ticket)\s+)?(?:reference|confirmation)"
    r"(?:\s+(?:number|code|no\.?))?|(?:booking|reservation|ticket)\s+(?:number|code|no\.?))"
    r"\s*(?:(?::|is|was)\s*)?$",
    re.IGNORECASE,
)
# a sentence the writer says of themselves: "I'm booked on BA283 ...", "We booked the Roxy ...", or
# one that opens with the reference ("Confirmation code is 7KD4PW."); not "My colleague Bethan is
# booked on KL1062, booking reference ..." (whose reference that is, the words do not settle)
_OWN_SENTENCE = re.compile(
    r"(?:(?:I|We)(?:['’](?:m|ve|d|re))?\b|(?:My|Our)\s+(?:booking|flight|hotel|reservation|ticket|confirmation)\b|"
    r"(?:(?:booking|flight|hotel|reservation|ticket)\s+)?(?:reference|confirmation)\b)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?]\s+|\n")


def references_given(text: str, start: int = 0) -> list[Reference]:
    """The codes ``text`` gives as its writer's own references (see ``_GIVEN_AS`` and
    ``_OWN_SENTENCE``), in order; a code given as a reference twice, once. The writer's words begin
    at ``start`` (after a message's "Rhys: ")."""
    found: dict[str, Reference] = {}
    for code in CODE.finditer(text, start):
        if code.group() in found or _NOT_A_CODE.fullmatch(code.group()):
            continue
        opens = max((m.end() for m in _SENTENCE_END.finditer(text, start, code.start())), default=start)
        given = _GIVEN_AS.search(text, opens, code.start())
        if given is not None and _OWN_SENTENCE.match(text, opens):
            found[code.group()] = Reference(" ".join(given["label"].lower().split()), code.group(),
                                            given.start(), code.end())
    return list(found.values())
