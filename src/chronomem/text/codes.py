"""Codes a text names: flight numbers, booking references, order and model numbers.

"I'm now on DY1307", "my booking reference is QX7L2P": a code is what a user comes back for, and a
model reading for people, places and things skips it as often as not. A code is one token of
capital letters and digits with at least one of each and two digits, four to twelve long ("BA269",
"QX7L2P", "A320"), not a time or a quantity ("10AM", "500MG" read as such are left to the date
parser and the fact text).
"""

from __future__ import annotations

import re

__all__ = ["codes_in"]

_CODE = re.compile(r"(?<![\w-])(?=[A-Z0-9]{4,12}(?![\w-]))(?=[A-Z0-9]*[A-Z])(?=(?:[A-Z]*\d){2})[A-Z0-9]+")
_NOT_A_CODE = re.compile(r"\d+(?:AM|PM|MG|KG|KM|ML|GB|MB|TB|HZ|MHZ|GHZ|MM|CM|TH|ST|ND|RD|S)")


def codes_in(text: str) -> list[str]:
    """The codes ``text`` names, each once, in the order they first appear."""
    found = (m.group() for m in _CODE.finditer(text))
    return list(dict.fromkeys(code for code in found if not _NOT_A_CODE.fullmatch(code)))
