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
5. ``… when I Y`` in a "how long / how old" question → the two clauses;
6. a measure from one event to another: ``how many days before X did I Y`` (``after``, ``since``
   likewise) → X, Y.

Pure functions: no I/O. A question naming fewer than two events gives ``[]`` (search it whole).

A question that counts, totals or orders what is spread over several sessions ("how many doctor's
appointments did I go to in March?", "what is the order of the three trips I took…?") names one
kind of thing, wrapped in a frame that asks for a number or an order. The frame is worded like a
question, so its embedding drifts toward other questions in the haystack ("which one would you
recommend?") rather than the statements that hold the evidence ("I just got back from a trip").
:func:`focus_query` strips the frame, the auxiliary, the count and the time expression, leaving
what each piece of evidence mentions ("doctor's appointments I go to", "trips I took"); the
searcher searches it beside the whole question.
"""

from __future__ import annotations

import re

from chronomem.text.timeparse import strip_time

__all__ = ["event_queries", "focus_query", "is_aggregate"]

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
# "How many days before the team meeting I was preparing for did I attend the workshop?": the
# anchor event runs up to the auxiliary that opens the question's own clause — an auxiliary followed
# by its subject ("did I", "did Rachel"), not one inside the anchor ("I was preparing").
_OFFSET = re.compile(
    r"^how\s+(?:many|much|long)\s+(?:\w+\s+){0,3}?(?:before|after|since|prior\s+to)\s+(?P<x>.+?)\s+"
    r"(?P<y>(?:did|do|does|was|were|had|has|have|is|are)\s+(?-i:I|i|we|my|our|[A-Z][\w'-]*)\b.+?)[?.!]*$",
    re.IGNORECASE,
)
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


def _offset(question: str) -> list[str]:
    m = _OFFSET.search(question)
    if not m:
        return []
    # the question's clause without its auxiliary: "did I attend the workshop" → "I attend the workshop"
    own = m["y"].split(None, 1)[1]
    return _distinct([m["x"], own])


def event_queries(question: str) -> list[str]:
    """One sub-query per event the question names (at least two), or ``[]``."""
    for rule in (_quoted, _between, _compared, _listed, _when, _offset):
        found = rule(question)
        if found:
            return found
    return []


# Questions that count, total or order things spread over sessions.
_AGGREGATE = re.compile(
    r"^(?:how\s+many|how\s+much|what\s+(?:is|was|are|were)\s+the\s+(?:order|total|sum|number|average))\b"
    r"|^(?:count|list)\b"  # the imperative: "Count the doctor visits I had in March."
    r"|\b(?:in\s+total|altogether|all\s+the|how\s+many\s+times|in\s+(?:what|which)\s+order)\b",
    re.IGNORECASE,
)
# The frame that asks for the number or the order, at the start of the question.
_FRAME = re.compile(
    r"^(?:what\s+(?:is|was|are|were)\s+the\s+(?:order|(?:total\s+)?(?:number|amount|cost|weight|sum|average)|total)"
    r"(?:\s+of)?\s+|how\s+many\s+(?:times\s+)?|how\s+much\s+(?:more\s+|less\s+)?|in\s+(?:what|which)\s+order\s+"
    r"|(?:count|list)\s+(?:all\s+)?(?:the\s+)?)"
    # what is measured, not what happened: "how many days (had passed) between", "hours of jogging"
    r"(?:(?:days|weeks|months|years|hours|minutes)(?:\s+of|\s+(?:had\s+|have\s+)?passed|\s+ago)?\s+)?",
    re.IGNORECASE,
)
_AUXILIARY = re.compile(r"\b(?:did|do|does|have|has|had|am)\s+(?=(?:I|we)\b)", re.IGNORECASE)
_ORDERING = re.compile(
    r",?\s*\b(?:from\s+(?:the\s+)?(?:earliest|first|oldest)\s+to\s+(?:the\s+)?(?:latest|last|newest|most\s+recent)|"
    r"from\s+(?:the\s+)?(?:latest|last|newest)\s+to\s+(?:the\s+)?(?:earliest|first|oldest)|in\s+total|"
    r"altogether|in\s+order|so\s+far|recently)\b",
    re.IGNORECASE,
)
# "the three trips": how many the question expects, which no piece of evidence says
_COUNT = re.compile(r"^(?:the\s+)?(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?=\w)", re.IGNORECASE)
# the same after a possessive inside the focus: "I go on my three trips" → "I go on my trips"
_OWN_COUNT = re.compile(r"\b(?P<det>my|our)\s+(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?=\w)",
                        re.IGNORECASE)
_DANGLING = re.compile(r"\s+(?:in|on|at|during|from|since|of|over|for)\s*$", re.IGNORECASE)


def is_aggregate(question: str) -> bool:
    """Does the question count, total or order things ("how many", "the total", "in total", "the order of")?"""
    return bool(_AGGREGATE.search(question))


def focus_query(question: str) -> str:
    """What each piece of evidence of a counting, totalling or ordering question mentions, or ``""``
    (not such a question, or nothing left once the frame is gone)."""
    if not is_aggregate(question):
        return ""
    text = strip_time(question)
    text = _ORDERING.sub("", _FRAME.sub("", text.strip()))
    text = _AUXILIARY.sub("", _OWN_COUNT.sub(r"\g<det> ", _COUNT.sub("", text.strip())))
    text = _DANGLING.sub("", _clean(text))
    focus = _clean(text)
    return focus if focus and focus.casefold() != _clean(question).casefold() else ""
