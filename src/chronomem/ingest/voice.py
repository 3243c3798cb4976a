"""Facts in the third person: a speaker's "I", "me" and "my" become the speaker's name.

A fact is read later, out of its conversation, in a context block that may hold facts of many
speakers: "I moved to Lisbon" there says nothing about who moved. The extraction prompt asks for
standalone sentences with pronouns resolved, and a capable model complies; a small one often copies
the message. This is the guarantee either way, applied to what any model returns: first-person
singular words of a message's speaker are replaced by the speaker's name, with the verb that follows
"I" agreed ("I live" → "Maya lives", "I'm" → "Maya is", "I've" → "Maya has").

Only the first person singular is rewritten: "we" and "our" include others the text may not name,
and "you" is the other party, so those are left for the model (and counted by bench/extraction.py).
"""

from __future__ import annotations

import re

__all__ = ["FIRST_PERSON", "in_third_person"]

FIRST_PERSON = re.compile(r"\bI\b|\b(?i:me|my|mine|myself)\b")

# contractions and forms of "to be"/"to have"/"to do" whose third person is not the verb plus "s"
_AFTER_I = {
    "am": "is", "'m": " is", "’m": " is", "was": "was", "have": "has", "'ve": " has", "’ve": " has",
    "do": "does", "'ll": " will", "’ll": " will", "'d": " would", "’d": " would",
    "don't": "doesn't", "don’t": "doesn’t", "haven't": "hasn't", "haven’t": "hasn’t",
}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# words that leave the verb as it is: modals, past forms that do not end in -ed, and verbs whose
# present and past are spelled alike ("I quit" is more often past than present in a fact)
_UNCHANGED = _words("""
    can could will would shall should may might must did didn't didn’t wasn't wasn’t
    had went got began became bought brought came chose drew drove ate fell felt found flew forgot
    gave grew heard held kept knew left lent lost made meant met paid ran rang rode said sang sat saw
    sent shook slept sold spent spoke stood stole swam taught thought told took threw understood woke
    wore won wrote quit put read set cut let hit hurt cost shut split spread
""")
# adverbs that may stand between "I" and its verb ("I just started", "I really like")
_ADVERBS = _words("""
    just really also still now recently finally actually usually often always never already currently
    even only mostly sometimes officially soon then again generally normally rarely seldom
""")
# words after "I" that are not its verb ("I and my sister", "I, too,"), or a plural verb that only a
# subject of several takes ("Kofi and I are taking the train"): left as they are
_NOT_VERBS = _words("""
    and or but nor so yet with without to at in on of for from by about as than the a an this that
    these those my your his her its our their too either neither both alone myself are were
""")
# quoted speech stays as it was said: a quotation, or what follows "said:"
_QUOTED = re.compile(r"(\b(?:said|says|wrote|writes|asked|asks):.*$|\"[^\"]*\"|“[^”]*”)", re.DOTALL)
_I_VERB = re.compile(r"\bI(['’](?:m|ve|ll|d))?\b((?:\s+[A-Za-z’'-]+){0,3})")
_POSSESSIVE = re.compile(r"\b(?:my|mine)\b", re.IGNORECASE)
_OBJECT = re.compile(r"\b(?:me|myself)\b", re.IGNORECASE)


def _third_person_verb(verb: str) -> str:
    lowered = verb.lower()
    if lowered in _AFTER_I:
        return _AFTER_I[lowered]
    if lowered in _UNCHANGED or lowered.endswith("ed") or not verb.isalpha() or not verb.islower():
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _rewrite_subject(match: re.Match[str], speaker: str) -> str:
    contraction, rest = match.group(1), match.group(2) or ""
    if contraction:
        return speaker + _AFTER_I[contraction.replace("’", "'")] + rest
    words = re.split(r"(\s+)", rest)  # ["", " ", "just", " ", "started", ...]
    for index in range(2, len(words), 2):
        word = words[index]
        if word.lower() in _ADVERBS:
            continue
        if word.lower() not in _NOT_VERBS:
            words[index] = _third_person_verb(word)
        break
    return speaker + "".join(words)


def in_third_person(text: str, speaker: str | None) -> str:
    """``text`` with the speaker's first-person singular words replaced by ``speaker``; unchanged
    without a speaker or without such words."""
    if not speaker or not FIRST_PERSON.search(text):
        return text
    parts = _QUOTED.split(text)  # odd positions: quoted speech
    return "".join(part if index % 2 else _rewrite(part, speaker) for index, part in enumerate(parts))


def _rewrite(text: str, speaker: str) -> str:
    text = _I_VERB.sub(lambda m: _rewrite_subject(m, speaker), text)
    text = _POSSESSIVE.sub(f"{speaker}'s", text)
    return _OBJECT.sub(speaker, text)
