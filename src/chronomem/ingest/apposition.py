"""A relation stated in apposition is a fact of its own, not part of the fact it introduces.

"My daughter Amara just started at Lakeside Primary" states two things with different lives: Amara
is Daniel's daughter, for good, and she started at the school, until she leaves it. Models of every
size write it as one fact, "Daniel Okafor's daughter Amara just started at Lakeside Primary"; when
she leaves, ending that fact ends her being his daughter too, and a search for who Daniel's children
are finds a school. So a fact that opens with a possessive apposition (an entity's role, then the
entity holding it: "Daniel Okafor's daughter Amara", "Samuel Owusu's physiotherapist, Anna
Kowalski,") and goes on to say something of a third entity is two facts: the relation ("Amara is
Daniel Okafor's daughter") and the statement ("Amara just started at Lakeside Primary").

A role is one to three lower-case words or an acronym ("sister", "new lead", "CEO"), without a
preposition or a verb ("Hana's appointment with Dr. Keller", "Heliox's board appointed Victor
Lang" are not appositions); the statement goes on with a word in lower case that starts a predicate
("plays", "is", "just started"), not a conjunction ("and her husband Paolo").

Pure functions over strings, like :mod:`chronomem.ingest.grounding`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chronomem.ingest.grounding import is_named

__all__ = ["Apposition", "apposition", "holder_named"]

_ROLE = r"(?P<role>(?:[a-z][a-z-]*\s+){0,2}[a-z][a-z-]*|[A-Z]{2,5})"
_POSSESSIVE = r"(?:['’]s|(?<=s)['’])"  # "Daniel's", and "Lauren Hayes'" of a name ending in s
_OPENING = re.compile(
    rf"^(?P<owner>[^,;.!?]+?){_POSSESSIVE}\s+{_ROLE}(?P<comma>\s*,)?\s+(?P<after>\S.*)$",
    re.DOTALL,
)
_TRAILING = re.compile(
    rf"^(?P<holder>[^,;.!?]+?),\s+(?P<owner>[^,;.!?]+?){_POSSESSIVE}\s+{_ROLE},\s+(?P<predicate>\S.*)$",
    re.DOTALL,
)
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# words a role is never made of: it is a noun phrase, and these start or join something else
_NOT_IN_A_ROLE = _words("""
    a an the and or but nor of in on at to for from by with about as into onto over under than
    is are was were be been being has have had do does did will would can could shall should may might must
    who whose which that this these those not no
""")
# words a statement does not start with: they continue the apposition rather than say something
_NOT_A_PREDICATE = _words("""
    and or but nor who whose which that as of with at in on for to from by than
""")


@dataclass(frozen=True, slots=True)
class Apposition:
    """A fact text split: ``holder`` is ``owner``'s ``role``, and ``holder`` ``predicate``."""

    owner: str  # the key of the entity whose role it is
    holder: str  # the key of the entity holding the role
    role: str  # "daughter", "new lead", "CEO"
    relation: str  # "Amara is Daniel Okafor's daughter."
    statement: str  # "Amara just started at Lakeside Primary."
    holder_name: str  # the holder's name as the fact writes it: "Amara"


def apposition(fact: str, spellings: Mapping[str, Sequence[str]]) -> Apposition | None:
    """The apposition ``fact`` opens with ("Daniel Okafor's daughter Amara plays ...", "Zara, Ayesha
    Khan's niece, goes to ..."), when one entity of ``spellings`` (keys to names) is the owner and
    another the holder; ``None`` when it opens with none. The caller decides whether the statement
    says enough to stand as a fact (it names another entity)."""
    text = fact.strip()
    if (trailing := _TRAILING.match(text)) is not None:
        return _trailing(trailing, spellings)
    opening = _OPENING.match(text)
    if opening is None or not _is_a_role(opening["role"]):
        return None
    owner_text = opening["owner"].strip()
    owner = _one_named(owner_text, spellings)
    if owner is None:
        return None
    holding = _holder(opening["after"], {k: v for k, v in spellings.items() if k != owner})
    if holding is None:
        return None
    holder, holder_text = holding
    predicate = opening["after"][len(holder_text):]
    if opening["comma"]:  # "Samuel's physiotherapist, Anna Kowalski, is treating ...": the apposition closes
        if not predicate.lstrip().startswith(","):
            return None
        predicate = predicate.lstrip()[1:]
    return _split(owner, owner_text, opening["role"], holder, holder_text, predicate)


def holder_named(fact: str) -> str | None:
    """The name of the holder a fact's opening apposition gives ("Mike" of "Lauren Hayes' husband
    Mike got a job at Summit Bank"), whether or not it is an entity yet: the capitalized words after
    the role. ``None`` when the fact opens with no apposition."""
    opening = _OPENING.match(fact.strip())
    if opening is None or not _is_a_role(opening["role"]):
        return None
    return _capitalized_opening(opening["after"]) or None


def _capitalized_opening(after: str) -> str:
    """The capitalized words ``after`` opens with, up to the first that is not or ends a clause."""
    words = []
    for word in after.split():
        bare = word.rstrip(",;:")
        if not bare[:1].isupper():
            break
        words.append(bare)
        if bare != word:
            break
    return " ".join(words)


def _trailing(match: re.Match[str], spellings: Mapping[str, Sequence[str]]) -> Apposition | None:
    """"Zara, Ayesha Khan's niece, goes to Park View School": the holder first, the role after it."""
    holder_text, owner_text = match["holder"].strip(), match["owner"].strip()
    if not _is_a_role(match["role"]) or not all(w[:1].isupper() for w in holder_text.split()):
        return None
    owner = _one_named(owner_text, spellings)
    holder = _one_named(holder_text, {k: v for k, v in spellings.items() if k != owner})
    if owner is None or holder is None:
        return None
    return _split(owner, owner_text, match["role"], holder, holder_text, match["predicate"])


def _split(owner: str, owner_text: str, role: str, holder: str, holder_text: str, predicate: str) -> Apposition | None:
    predicate = predicate.strip()
    first = predicate.split(maxsplit=1)[0] if predicate else ""
    if not first[:1].islower() or first.strip(",") in _NOT_A_PREDICATE:
        return None
    return Apposition(
        owner=owner, holder=holder, role=role,
        relation=f"{holder_text} is {owner_text}'s {role}.",
        statement=f"{holder_text} {predicate}",
        holder_name=holder_text,
    )


def _is_a_role(role: str) -> bool:
    return not any(word in _NOT_IN_A_ROLE for word in role.split()) and not role.endswith("ed")


def _one_named(text: str, spellings: Mapping[str, Sequence[str]]) -> str | None:
    """The one key of ``spellings`` one of whose names holds every word of ``text``."""
    keys = [key for key, names in spellings.items() if any(is_named(text, [name]) for name in names)]
    return keys[0] if len(keys) == 1 else None


def _holder(after: str, spellings: Mapping[str, Sequence[str]]) -> tuple[str, str] | None:
    """The entity whose name ``after`` opens with, and that name as written: a whole name (the
    longest that fits), else the capitalized words it opens with when they are words of exactly one
    entity's name ("Amara" for Amara Okafor)."""
    folded = after.casefold()
    whole = [(len(name), key, after[:len(name)]) for key, names in spellings.items() for name in names
             if folded.startswith(name.casefold()) and not after[len(name):len(name) + 1].isalnum()]
    if whole:
        _, key, written = max(whole)
        return key, written
    written = _capitalized_opening(after)
    if not written or not after.startswith(written):
        return None
    keys = [key for key, names in spellings.items() if any(is_named(written, [name]) for name in names)]
    return (keys[0], written) if len(keys) == 1 else None
