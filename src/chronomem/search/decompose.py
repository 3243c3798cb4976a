"""The events a question names, found by rules: one sub-query per event, so each is retrieved.

A question that orders, counts or measures several events ("how many days between the day I fixed
my bike and the day I upgraded the pedals?", "which did I join first, 'Page Turners' or
'Marketing Professionals'?", "the total cost of the food bowl, the measuring cup and the collar")
needs every event's evidence, but one embedding of the whole question lands between them and word
overlap favours whichever event has the rarer words. Searching once per event and fusing the
rankings (the searcher does) gives each event its own best hits.

Rules, in order (the first that applies wins):

1. quoted titles or events: ``'The Hate U Give' or 'The Nightingale'`` → each quotation;
2. ``between X and Y`` → X, Y;
3. a comparison: ``X compared to / compared with / versus / than Y`` → the question up to the
   marker, and Y;
4. alternatives or a list after the question's verb phrase: ``…, A or B?``, ``A, B, C and D`` →
   the question with the coordination replaced by each item alone;
5. ``… when I Y`` in a "how long / how old" question → the two clauses.

Pure functions: no I/O. A question naming fewer than two events gives ``[]`` (search it whole).
"""

from __future__ import annotations

import re

__all__ = ["event_queries"]

_QUOTED = re.compile(r"""(?<![\w'"])(['"‘“])(?P<text>[^'"‘’“”]{3,}?)(['"’”])(?![\w])""")
_BETWEEN = re.compile(
    r"\bbetween\s+(?:the\s+(?:day|time|date)\s+(?:when\s+|that\s+)?)?(?P<x>.+?)\s+and\s+"
    r"(?:the\s+(?:day|time|date)\s+(?:when\s+|that\s+)?)?(?P<y>.+?)[?.!]*$",
    re.IGNORECASE,
)
_COMPARED = re.compile(r"\s+(?:compared\s+(?:to|with)|versus|vs\.?|rather\s+than|than)\s+(?P<y>.+?)[?.!]*$",
                       re.IGNORECASE)
# A coordination ending the question: "…, A or B?" or "A, B, C, and D I got for Max?" (the tail
# after the last item is a relative clause: "I …", "that …").
_COORDINATION = re.compile(
    r"(?P<items>[^?!.;]*?,[^?!.;]*?\s(?:and|or)\s[^,?!.;]+?)"
    r"(?P<tail>\s+(?:I|that|which|who|we|my)\b[^,?]*)?[?.!]*$",
    re.IGNORECASE,
)
_WHEN = re.compile(r"^(?P<x>how\s+(?:long|old|many|much)\b.+?)\s+when\s+(?P<y>.+?)[?.!]*$", re.IGNORECASE)
_MIN_WORDS = 1


def _clean(text: str) -> str:
    return " ".join(text.strip(" ,;:?!.").split())


def _distinct(parts: list[str]) -> list[str]:
    kept = list(dict.fromkeys(p for p in (_clean(p) for p in parts) if len(p.split()) >= _MIN_WORDS))
    return kept if len(kept) >= 2 else []


def _quoted(question: str) -> list[str]:
    return _distinct([m["text"] for m in _QUOTED.finditer(question)])


def _between(question: str) -> list[str]:
    m = _BETWEEN.search(question)
    return _distinct([m["x"], m["y"]]) if m else []


def _compared(question: str) -> list[str]:
    m = _COMPARED.search(question)
    return _distinct([question[: m.start()], m["y"]]) if m else []


def _items(coordination: str) -> tuple[str, list[str]]:
    """(the words before the first item, the items). Alternatives (``"first, A, B or C"``) follow
    the stem's comma, so what precedes it is the stem. A list (``"cost of A, B, and C"``) starts
    inside the first comma-part: its first item is as many words as the longest other item."""
    parts = [p.strip() for p in coordination.split(",")]
    last = parts[-1]
    connector = re.search(r"(?:^|\s)(and|or)\s", last, re.IGNORECASE)
    if connector is None:
        return "", []
    before, after = last[: connector.start()].strip(), last[connector.end() :].strip()
    items = [*parts[1:-1], *([before] if before else []), after]
    if connector[1].casefold() == "or":
        return parts[0] + ", ", items
    width = max(len(item.split()) for item in items)
    words = parts[0].split()
    return " ".join(words[:-width]) + " ", [" ".join(words[-width:]), *items]


def _listed(question: str) -> list[str]:
    """The question once per item of its final coordination, the words around it kept."""
    m = _COORDINATION.search(question)
    if not m:
        return []
    stem, items = _items(m["items"])
    head, tail = question[: m.start()] + stem, m["tail"] or ""
    return _distinct([f"{head}{item}{tail}" for item in items])


def _when(question: str) -> list[str]:
    m = _WHEN.search(question)
    return _distinct([m["x"], m["y"]]) if m else []


def event_queries(question: str) -> list[str]:
    """One sub-query per event the question names (at least two), or ``[]``."""
    for rule in (_quoted, _between, _compared, _listed, _when):
        found = rule(question)
        if found:
            return found
    return []
