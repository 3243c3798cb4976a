"""Facts said in a set form that models fold into another fact: a diagnosis, a medicine, a route, a role.

"Dr. Okafor diagnosed me with type 2 diabetes and put me on metformin" says that the writer has
type 2 diabetes and takes metformin; models of every size write one fact of the doctor and the
patient, or of the patient and the medicine, and the condition is lost as a fact of its own.
"I'm booked on BA283 from London Heathrow to Los Angeles" says where the flight goes; the fact
written is the booking. "Tobias Arkwright retires as chief operating officer of Pellworth
Instruments on 31 August" says he holds that role until then; the fact written is the retirement,
or none. These forms are read off the message's words and become facts of their own
where the answer joined no fact between the same two entities (``stages.facts``).

Each form names its holder (a name, or "me"/"I" for the writer: a pronoun for someone else, "her",
is left alone) and the words its value is named in; the caller maps both to the episode's
entities, so a word that is no entity ("put me on the waiting list") gives nothing.

Pure functions over strings, like :mod:`chronomem.ingest.endings`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chronomem.text.codes import CODE
from chronomem.text.names import WRITTEN_NAME

__all__ = ["Said", "forms_said"]


@dataclass(frozen=True, slots=True)
class Said:
    """A fact in a set form: ``holder`` (its words: a name, "me", "I", a flight code) ``kind``
    ("condition", "medicine", "departs", "arrives") a value named in ``value``; ``start:end`` are
    the words that say it."""

    kind: str
    holder: str
    value: str
    start: int
    end: int
    detail: str = ""  # what the form says beside its value: a role's title ("chief operating officer")
    ended: bool = False  # the form says the fact ends ("retires as ..."): on a day its sentence states


_PATIENT = rf"(?P<holder>me|{WRITTEN_NAME})"
# the words a value is named in: up to a clause's end, a comma, or a word that starts something else
_VALUE = (r"(?P<value>(?:(?!(?:for|because|after|since|last|this|next|on|in|at|and|but|so|when|which|who|"
          r"twice|once|daily|instead|until)\b)[^\s,;:.!?]+(?:\s+|(?=[,;:.!?]|$))){1,5})")
_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "Dr. Okafor diagnosed me with type 2 diabetes", "I was diagnosed with migraine last Thursday"
    ("condition", re.compile(rf"\bdiagnosed\s+{_PATIENT}\s+with\s+{_VALUE}")),
    ("condition", re.compile(rf"(?<![\w'’-])(?P<holder>I|{WRITTEN_NAME}),?(?:\s+(?:also|just|recently|finally))*"
                             rf"(?:\s+(?:was|got|has\s+been|had\s+been)|['’]ve\s+been)\s+diagnosed\s+with\s+{_VALUE}")),
    # "put me on metformin", "switched me from lisinopril to amlodipine", "kept me on Ventolin"
    ("medicine", re.compile(rf"\b(?:put|puts|started|starts|switched|switches|kept|keeps)\s+{_PATIENT}\s+"
                            rf"(?:from\s+[^,;.!?]+?\s+)?(?:on|onto|to)\s+(?!the\b|a\b|an\b|hold\b){_VALUE}")),
    # "I take sumatriptan when an attack starts"; not "I'm on DY1307", "I use Notion", "I take the bus"
    ("medicine", re.compile(rf"(?<![\w'’-])(?P<holder>I)(?:\s+(?:take|am\s+taking)|['’]m\s+taking)\s+"
                            rf"(?!the\b){_VALUE}")),
)
# "BA283 from London Heathrow to Los Angeles", "flight LH401 Frankfurt to New York JFK"
_ROUTE = re.compile(
    rf"(?P<holder>{CODE.pattern})\s+(?:from\s+)?(?P<origin>{WRITTEN_NAME})\s+to\s+(?P<value>{WRITTEN_NAME})")
# A role in an organisation, said with its holder and the organisation: its title (up to four words,
# one of them a word roles are named with), then "of" or "at" and the organisation's name.
_TITLE_WORD = (r"(?:(?i:officer|executive|director|chair(?:man|woman|person)?|president|manager|partner|"
               r"secretary|treasurer|counsel|founder|principal|dean|governor|chancellor|editor|controller|"
               r"head\s+of\s+[a-z][\w-]*)|C[EFOTIM]O|Head\s+of\s+[A-Z][\w-]*)")
_NOT_A_TITLE = r"(?!(?:of|at|on|from|with|and|effective|starting|until|in|for|to|when|who|after|before)\b)"
_TITLE = rf"(?P<detail>(?:{_NOT_A_TITLE}[\w-]+\s+){{0,3}}?{_TITLE_WORD})(?![\w-])"
_IN_ORG = rf"\s+(?:of|at)\s+(?P<value>{WRITTEN_NAME})"
_ROLE_HOLDER = rf"(?<![\w'’-])(?P<holder>{WRITTEN_NAME})(?:\s*,[^,.;:!?]{{1,60}},)?"  # "Ana Lee, our COO, ..."
_ROLES: tuple[tuple[bool, re.Pattern[str]], ...] = (
    # "Tobias Arkwright retires as chief operating officer of Pellworth", "will step down as CEO of Heliox"
    (True, re.compile(rf"{_ROLE_HOLDER}\s+(?:(?:will|is\s+to|has|have)\s+)?(?:retir(?:es|e|ed|ing)|"
                      rf"st(?:ep|eps|epped|epping|ands?|ood)\s+down|resign(?:s|ed|ing)?)\s+as\s+(?:its\s+|the\s+)?"
                      rf"{_TITLE}{_IN_ORG}")),
    # "Yewande Ashby becomes chief operating officer of Pellworth", "joins Halden as CFO" is a job
    (False, re.compile(rf"{_ROLE_HOLDER}\s+(?:will\s+)?(?:becomes?|became|become|t(?:akes?|ook)\s+over\s+as|"
                       rf"(?:has\s+been|was|is|will\s+be)\s+(?:appointed|named|promoted\s+to)(?:\s+as)?)\s+"
                       rf"(?:the\s+|its\s+)?(?:new\s+)?{_TITLE}{_IN_ORG}")),
    # "Heliox Energy has appointed Victor Lang as chief executive", "Corvane Robotics names Helen
    # Achterberg chief technology officer"
    (False, re.compile(rf"(?<![\w'’-])(?P<value>{WRITTEN_NAME})\s+(?:has\s+|have\s+)?"
                       rf"(?:appoint(?:ed|s)|name[ds]|promote[ds])\s+(?P<holder>{WRITTEN_NAME})\s+(?:as\s+)?"
                       rf"(?:its\s+)?(?:new\s+)?{_TITLE}")),
    # "Pinecone CEO Luis Ortega", "Tom Becker, Fabrikam's head of design,": a role named beside its holder
    (False, re.compile(rf"(?<![\w'’-])(?P<value>{WRITTEN_NAME})(?:['’]s)?\s+{_TITLE}\s+(?P<holder>{WRITTEN_NAME})")),
    (False, re.compile(rf"(?<![\w'’-])(?P<holder>{WRITTEN_NAME}),\s+(?P<value>{WRITTEN_NAME})['’]s\s+{_TITLE}\s*[,;]")),
)
_POSSESSIVE = re.compile(r"['’]s$")
_NEW = re.compile(r"^new\s+", re.IGNORECASE)
_NOT_AN_ORG = re.compile(r"My|Our|Your|His|Her|Their|Its|The|This|That|A|An")  # "My partner Jonas"
# a value named right after a title is a person ("... new CEO Victor Lang has named Priya Sethi as COO"),
# no organisation of a role
_TITLED = re.compile(rf"{_TITLE_WORD}\s+$")
_TITLED_FIRST = re.compile(rf"{_TITLE_WORD}\s")
# a form's sentence that denies it: "I was never diagnosed with asthma", "didn't put me on statins"
_DENIED = re.compile(r"\b(?:not|never|no)\b|n['’]t\b", re.IGNORECASE)


def forms_said(text: str, start: int = 0) -> list[Said]:
    """The diagnoses, medicines, roles and flight routes ``text`` says from ``start`` on (the writer's
    words, after a message's "Rahul: "), in order; none in a clause that denies them."""
    found: list[Said] = []
    for kind, form in _FORMS:
        for match in form.finditer(text, start):
            if not _DENIED.search(_clause_before(text, start, match.start())):
                value = match["value"].rstrip()
                found.append(Said(kind, match["holder"], value, match.start(), match.start("value") + len(value)))
    for ended, form in _ROLES:
        for match in form.finditer(text, start):
            value = _POSSESSIVE.sub("", match["value"])
            if (not _DENIED.search(_clause_before(text, start, match.start())) and not _NOT_AN_ORG.fullmatch(value)
                    and not _TITLED.search(text, start, match.start("value")) and not _TITLED_FIRST.match(value)):
                found.append(Said("role", match["holder"], value, match.start(), match.end(),
                                  detail=_NEW.sub("", match["detail"]), ended=ended))
    for match in _ROUTE.finditer(text, start):
        found.append(Said("departs", match["holder"], match["origin"], match.start(), match.end("origin")))
        found.append(Said("arrives", match["holder"], match["value"], match.start(), match.end("value")))
    return sorted(found, key=lambda said: said.start)


def _clause_before(text: str, start: int, at: int) -> str:
    """The words of ``at``'s clause before it (back to a comma, a semicolon or a sentence's end)."""
    opens = max((m.end() for m in re.finditer(r"[,;:.!?]\s*", text[start:at])), default=0)
    return text[start + opens:at]
