"""Sentences that say a state ended or changed: "I quit Globex", "we broke up", "she no longer takes
metformin"; "I start at Initech on June 10", "we moved to Porto".

A fact stated by such a sentence ends what held between the same two entities until then: the job
at the company quit, the relationship broken up, the medicine stopped. The rule is applied to what
any model extracts (:func:`chronomem.ingest.stages.facts.resolve_facts`), because judging which
stored fact a new one ends is where a small model fails most: the packaged 1.5B model called
"Maya quit Globex" a restatement of "Maya works at Globex".

A change is narrower: a new value of a state one holds one of at a time (a job, a home), said as new
("new job", "start at", "moved to") by a sentence, ends the fact that gave its holder another value.

The verbs are the ones that end a state held between two parties, not an action or a visit ("left
the office", "stopped by", "sold the car to Ana" end nothing between the two); a negated one
("didn't quit") ends nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chronomem.ingest.grounding import is_named_any
from chronomem.text.names import WRITTEN_NAME

__all__ = [
    "NewValue", "changed_states", "couple_stage", "ended_states_said", "ends_the_thing", "goes_on", "holds_state",
    "new_states_said", "new_values_said", "same_state", "says_a_change", "states_an_end", "states_held",
]

_ENDS = re.compile(
    r"\b(?:"
    r"quit(?:s|ting)?|resign(?:s|ed|ing)?|retir(?:e|es|ed|ing)|step(?:s|ped|ping)?\s+down|"
    r"laid\s+off|(?:was|were|got|been|be)\s+(?:fired|let\s+go)|"
    r"br(?:eak|eaks|oke|eaking)\s+up|split(?:s|ting)?\s+up|divorc(?:e|es|ed|ing)|separated|"
    r"mov(?:e|es|ed|ing)\s+(?:out|away)|no\s+longer|anymore|any\s+more|"
    r"stopp?(?:ed|ing|s)?(?!\s+by)|discontinu(?:e|es|ed|ing)|cancel+(?:s|ed|ing)?|call(?:s|ed|ing)?\s+off|"
    r"left\s+(?:my|his|her|their|the|our)\s+(?:job|position|role|post|company|firm|team|school|program(?:me)?)|"
    r"graduat(?:e|es|ed|ing)|dropp(?:ed|ing)?\s+out|withdr(?:aw|aws|awn|awing|ew)\s+from|"
    r"g(?:ave|ive|ives|iving)\s+up|last\s+day"
    r")\b",
    re.IGNORECASE,
)
# an end ruled out by the words before it ("didn't quit", "will never leave", "not going to resign"),
# in its own clause ("Not well, so I withdrew" is an end)
_NEGATION = re.compile(
    r"\b(?:not|never|didn['’]?t|don['’]?t|doesn['’]?t|won['’]?t|wouldn['’]?t|can['’]?t|cannot|isn['’]?t|"
    r"wasn['’]?t|haven['’]?t|hasn['’]?t)[^\w,;:.!?]+(?:\w+[^\w,;:.!?]+){0,3}$",
    re.IGNORECASE,
)
# ends that are negative by their nature: the negation before them is what they say
_NEGATIVE_ENDS = re.compile(r"^(?:no\s+longer|any\s*more)$", re.IGNORECASE)


def _ends_said(sentence: str) -> list[str]:
    """The end words of ``sentence`` that no negation before them rules out."""
    return [match.group(0) for match in _ENDS.finditer(sentence)
            if _NEGATIVE_ENDS.match(match.group(0)) or not _NEGATION.search(sentence[: match.start()])]


def states_an_end(sentence: str) -> bool:
    """Does ``sentence`` say that a state between its parties ended (or will end on a stated day)?"""
    return bool(_ends_said(sentence))


# ends of having or running a thing, said with the thing right after ("sold Rågkorn in July", "closed
# down the Elm Street shop"): they end what held between the owner and the thing, and nothing
# between the seller and a buyer ("sold my car to Ana" ends nothing between the two)
_ENDS_OF_A_THING = re.compile(r"\b(?:sold|sell(?:s|ing)?|(?:clos(?:e|es|ed|ing)|shut(?:s|ting)?)\s+down|closed)\s+",
                              re.IGNORECASE)
# the verb's object: up to four words ("the bakery Rågkorn"), before a preposition or a clause's end
_OBJECT = re.compile(r"^(?:(?!(?:to|for|in|on|at|by|with|from|and|but|last|this|next)\b)[^\s,;:.!?]+\s*){1,4}",
                     re.IGNORECASE)


def ends_the_thing(sentence: str, thing: Sequence[str]) -> bool:
    """Does ``sentence`` say that what its owner had in ``thing`` (its names) ended: sold, closed down?"""
    return any((said := _OBJECT.match(sentence[m.end():])) is not None and is_named_any(thing, said.group())
               for m in _ENDS_OF_A_THING.finditer(sentence) if not _NEGATION.search(sentence[: m.start()]))


# the stages of a couple, in order: a later one ends the one before between the same two people
# ("Nils married Maja" ends "Nils is engaged to Maja"); an end ("divorced", "broke up") is an end
_COUPLE_STAGES = (
    re.compile(r"\b(?:dating|going\s+out\s+with|girlfriend|boyfriend|(?:is|are|was|were)\s+seeing)\b", re.IGNORECASE),
    re.compile(r"\b(?:engaged|fianc[ée]e?)\b", re.IGNORECASE),
    re.compile(r"\b(?:married|marr(?:y|ies|ying)|wed(?:ded|s)?|wife|husband|spouse)\b", re.IGNORECASE),
)
_DENIED = re.compile(r"\b(?:not|never|no\s+longer)\b|n['’]t\b", re.IGNORECASE)


def couple_stage(fact: str) -> int | None:
    """The latest stage of a couple ``fact`` says (0 dating, 1 engaged, 2 married), ``None`` when it
    says none, or denies one ("Nils isn't married")."""
    if _DENIED.search(fact):
        return None
    return max((stage for stage, said in enumerate(_COUPLE_STAGES) if said.search(fact)), default=None)


# words that say something changed or is over, beside the ends above: a new value ("my new lead",
# "now on DY1307", "switched me to amlodipine", "moved to Tuesday") or a past one ("left St. Agnes",
# "signed me off", "physio is done", "used to", "former", "until May")
_CHANGES = re.compile(
    r"\b(?:new|now|instead|no\s+more|switch(?:es|ed|ing)?|swapp?(?:ed|ing|s)?|mov(?:e|es|ed|ing)|"
    r"chang(?:e|es|ed|ing)|replac(?:e|es|ed|ing)|rebook(?:s|ed|ing)?|reschedul(?:e|es|ed|ing)|"
    r"postpon(?:e|es|ed|ing)|push(?:es|ed)?\s+back|brought\s+forward|left|leav(?:e|es|ing)|"
    r"sign(?:s|ed)?\s+(?:\w+\s+)?off|done|over|finish(?:es|ed|ing)?|end(?:s|ed|ing)?|sold|clos(?:e|es|ed|ing)|"
    r"lost|former(?:ly)?|used\s+to|until|till|ex-\w+|took\s+over|succeed(?:s|ed|ing)?|join(?:s|ed|ing)?)\b",
    re.IGNORECASE,
)


def says_a_change(words: str) -> bool:
    """Do ``words`` say that something ended or changed (:func:`states_an_end`, or a word of change:
    "new", "now", "switched", "moved", "left", "done", "until")? A quote that ends a fact says so."""
    return states_an_end(words) or bool(_CHANGES.search(words))


# words that say a state goes on ("still teaching there", "kept me on Ventolin", "will remain chair")
_GOES_ON = re.compile(r"\b(?:still|continu(?:e|es|ed|ing)|remain(?:s|ed|ing)?|keep(?:s|ing)?|kept|"
                      r"carr(?:y|ies|ied|ying)\s+on)\b", re.IGNORECASE)


def goes_on(sentence: str) -> bool:
    """Does ``sentence`` say that a state goes on, and no end?"""
    return bool(_GOES_ON.search(sentence)) and not states_an_end(sentence)


# where a move goes: "moved to Porto", "moved back to Porto", "moved from Lisbon to Porto"
_ON_TO = r"(?:back\s+|from\s+(?:[\w'’.-]+\s+){1,4}?)?to\b"

# what one is at a place beside a job: "a patient at Bayview", "a member of", "a student at"
_NOT_A_JOB = r"(?:patient|member|regular|guest|customer|client|visitor|fan|volunteer|student|pupil|resident)"

# States a person holds one of at a time, each with the words a sentence says a new one with, and
# the words a fact of that state reads with: a new job ends the job before it, a move the home.
_STATES: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "job": (
        re.compile(r"\b(?:new\s+(?:job|role|position)|start(?:s|ed|ing)?\s+(?:a\s+)?(?:new\s+)?(?:job|work|"
                   r"as\b|at\b)|(?:was|got|been|get|gets)\s+hired|join(?:s|ed|ing)\s+\S+(?:\s+\S+)?\s+as\b)",
                   re.IGNORECASE),
        re.compile(r"\b(?:works?|worked|working)\s+(?:(?:the|a|an|as|in|on)\s+(?:[\w-]+\s+){0,3})?(?:at|for)\b|"
                   r"\b(?:job|position|role)\s+(?:at|with)\b|"
                   r"\bemployed\s+(?:at|by)\b|\bjoin(?:s|ed)\s+\S+(?:\s+\S+)?\s+as\b|\bstart(?:s|ed)\s+(?:a\s+)?"
                   r"(?:new\s+)?(?:job|work|as|at)\b|"
                   # "is a pharmacist at CareRx", "has been a data engineer at Quillfeather since 2021";
                   # not a patient, a member or a student, which one is beside a job
                   rf"\b(?:is|was|(?:has|have|had)\s+been|['’]s)\s+(?:an?|the)\s+(?!{_NOT_A_JOB}\b)"
                   r"(?:[\w-]+\s+){1,3}(?:at|for)\b", re.IGNORECASE),
    ),
    "home": (
        re.compile(rf"\b(?:mov(?:e|es|ed|ing)|relocat(?:e|es|ed|ing))\s+{_ON_TO}", re.IGNORECASE),
        re.compile(rf"\b(?:lives?|lived|living|resides?|based)\s+in\b|\b(?:moved|relocated)\s+{_ON_TO}",
                   re.IGNORECASE),
    ),
}


@dataclass(frozen=True, slots=True)
class NewValue:
    """A new home or job a text says in a set form: ``holders`` (their words: names, "I", "we")
    moved to, or have a new job at, ``value`` (its words); ``start:end`` are the words that say it."""

    state: str
    holders: tuple[str, ...]
    value: str
    start: int
    end: int


_HOLDER = rf"(?:I|[Ww]e|{WRITTEN_NAME})(?!['’]s\b)"
# "Ana and Rui moved from Lisbon to Porto", "I've just moved back to Lisbon", "Lauren moved to Denver"
_MOVED = re.compile(
    rf"(?<![\w'’-])(?P<holders>{_HOLDER}(?:(?:\s*,\s*|\s*,?\s+and\s+){_HOLDER})*)"
    rf"(?:['’]ve|\s+(?:have|has|had))?(?:\s+(?:just|recently|finally|also|both|all))*"
    rf"\s+(?:moved|relocated)\s+{_ON_TO}\s+(?P<value>(?:the\s+)?{WRITTEN_NAME})"
)
# "Rui's new job at Marés Logistics", "my new role with Halden": a job named by its holder's possessive
_JOB_OF = re.compile(
    rf"(?<![\w'’-])(?:(?P<holder>{WRITTEN_NAME})['’]s|(?P<mine>[Mm]y))\s+(?:new\s+)?(?:job|position|role|post)\s+"
    rf"(?:at|with)\s+(?P<value>(?:the\s+)?{WRITTEN_NAME})"
)
_HOLDERS_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")


def new_values_said(text: str, start: int = 0) -> list[NewValue]:
    """The moves ("Ana and Rui moved from Lisbon to Porto": a home of each) and possessive jobs
    ("Rui's new job at Marés Logistics") ``text`` says from ``start`` on, in the past or the
    present: a move someone "is moving" on next month is a plan, not a home yet."""
    found = [_said("home", tuple(_HOLDERS_SPLIT.split(m["holders"])), m)
             for m in _MOVED.finditer(text, start) if not _NEGATION.search(text[start:m.start()])]
    return found + [_said("job", (m["holder"] or m["mine"],), m) for m in _JOB_OF.finditer(text, start)]


def _said(state: str, holders: tuple[str, ...], match: re.Match[str]) -> NewValue:
    return NewValue(state, holders, match["value"], match.start(), match.end("value"))


def changed_states(sentence: str, fact: str, target: Sequence[str] = ()) -> list[str]:
    """The states ("job", "home") whose new value ``fact`` is, when ``sentence`` says it is a new one
    ("I start at Initech on June 10", "we moved to Porto"). With the names of the fact's ``target``,
    only a state the fact gives *it* as the value: "Ana and Rui moved from Lisbon to Porto for Rui's
    new job at Marés Logistics", of Ana and Porto, is a new home and not a new job of Ana's."""
    if _NEGATION.search(sentence):
        return []
    return [state for state, (change, held) in _STATES.items()
            if (change.search(sentence) or _says_now(sentence))
            and any(_names_next(fact[m.end():], target) for m in held.finditer(fact))]


# "now" beside a job or home says it is the current one ("She's working at the Denver Health pharmacy
# now", "I live in Porto now"); after "for ten years", "until" or "by" it says the state went on
_NOW = re.compile(r"\bnow\b", re.IGNORECASE)
_WENT_ON_TILL = re.compile(r"\b(?:for\s+(?:[\w-]+\s+){1,3}|until\s+|till\s+|up\s+to\s+|by\s+|since\s+)$",
                           re.IGNORECASE)


def _says_now(sentence: str) -> bool:
    return any(not _WENT_ON_TILL.search(sentence[: m.start()]) for m in _NOW.finditer(sentence))


def _names_next(rest: str, target: Sequence[str]) -> bool:
    """Does ``rest`` name one of ``target`` within its next few words (any, without names)?"""
    return not target or is_named_any(target, " ".join(rest.split()[:_VALUE_WITHIN]))


_VALUE_WITHIN = 8  # words between "works at"/"moved to" and the value ("started as a senior nurse at St. Agnes")


def new_states_said(sentence: str) -> frozenset[str]:
    """The states ("job", "home") ``sentence`` says a new value of ("we moved to Porto for Rui's new
    job"), when it says no end as well; none otherwise. Such a sentence ends values of those states
    and nothing else."""
    if states_an_end(sentence):
        return frozenset()
    return frozenset(state for state, (change, _) in _STATES.items() if change.search(sentence))


# ends of one state only: moving out ends a home and no job, quitting a job and no home
_STATE_ENDS: dict[str, re.Pattern[str]] = {
    "home": re.compile(r"mov(?:e|es|ed|ing)\s+(?:out|away)", re.IGNORECASE),
    "job": re.compile(r"quit(?:s|ting)?|resign(?:s|ed|ing)?|retir(?:e|es|ed|ing)|step(?:s|ped|ping)?\s+down|"
                      r"laid\s+off|(?:was|were|got|been|be)\s+(?:fired|let\s+go)|"
                      r"left\s+(?:my|his|her|their|the|our)\s+(?:job|position|role|post)", re.IGNORECASE),
}


def ended_states_said(sentence: str) -> frozenset[str]:
    """The states ("job", "home") ``sentence`` says the end of, when every end it says is of one of
    them ("Lena moved out at the end of January": a home); none when it says an end of any kind
    ("no longer", "stopped", "broke up"), which may end anything."""
    states: set[str] = set()
    for said in _ends_said(sentence):
        owned = {state for state, end in _STATE_ENDS.items() if end.fullmatch(said)}
        if not owned:
            return frozenset()
        states |= owned
    return frozenset(states)


def states_held(fact: str) -> frozenset[str]:
    """The states ("job", "home") ``fact`` reads as a value of."""
    return frozenset(state for state in _STATES if holds_state(fact, state))


def holds_state(fact: str, state: str) -> bool:
    """Does ``fact`` read as a value of ``state`` ("Maya works at Globex" of "job")?"""
    return bool(_STATES[state][1].search(fact))


def same_state(first: str, second: str) -> bool:
    """Do both facts read as values of one state ("works at Globex" and "works at Initech")?"""
    return any(held.search(first) and held.search(second) for _, held in _STATES.values())
