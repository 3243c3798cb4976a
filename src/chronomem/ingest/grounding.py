"""Grounded extraction (docs/design.md §2, step 5): what a model extracts must be in the episode.

- A fact carries the quote of the current message that states it; the quote must occur in the
  message (case and whitespace aside, with a small fuzzy tolerance for a model that drops a comma or
  changes a letter), and where it occurs becomes the fact's evidence span.
- An entity must be named in the current or previous messages (every word of its name, case,
  accents and whitespace aside; the speaker counts, being in the "speaker: text" line).
- A fact text must be a statement about its entities: one with no letters (``'}, {'``), that
  names none of its entities, or that says nothing but their names ("Alice, Globex", "source: Alice,
  target: Globex"), is junk.

Pure functions over strings; the stages apply them and count what they reject.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from rapidfuzz import fuzz

from chronomem.ingest.voice import in_third_person
from chronomem.text.names import fold_accents, name_key, plain_punctuation, visible_text
from chronomem.text.words import WORD

__all__ = [
    "ONLY_AN_IDENTITY", "PARAPHRASE_SHARE", "QUOTE_TOLERANCE", "REFERS_BACK", "is_named", "is_named_any", "junk_reason",
    "locate_quote", "named_entities", "sentence_around", "sentence_spans", "sentence_stating", "sentences",
    "stating_sentence",
]

QUOTE_TOLERANCE = 90.0  # rapidfuzz partial-ratio (0-100) a quote must reach when it is not found verbatim
# share of a fact's own words (not its entities' names) that the sentence naming its entities must
# hold, for a fact whose quote is missing or is not the message's words
PARAPHRASE_SHARE = 0.5
# a sentence runs to a full stop, question or exclamation mark or line break; a full stop after a
# title or an initial ("Dr. Okafor", "St. Agnes", "J. Smith", "Mrs. Hill") ends none, one after a
# short word does ("Oh. I see", "No. We left")
_TITLES = ("Dr", "Mr", "Ms", "Mrs", "Mx", "St", "Mt", "Ft", "Jr", "Sr", "Prof", "Rev", "Gen", "Col", "Lt", "Sgt",
           "Capt", "Gov", "Sen", "Rep", "Hon", "Fr")
_SENTENCE = re.compile(r"(?:[^.!?\n]|(?<=\b[A-Z])\.|" + "|".join(rf"(?<=\b{t})\." for t in _TITLES) + r")+[.!?]*")
_MIN_FUZZY_QUOTE = 12  # shorter quotes must occur exactly: a fuzzy match of a few letters proves nothing
_NON_SPACE = re.compile(r"\S+")


@functools.lru_cache(maxsize=8192)
def _fold(char: str) -> str:
    """One character as names compare it (:func:`~chronomem.text.names.name_key`'s folds): nothing for
    what a reader does not see (a soft hyphen, a zero-width space, ®), accents and drawn-in marks off,
    typographic quotes and dashes plain (a model often writes "I'm" for the message's "I’m")."""
    return fold_accents(plain_punctuation(visible_text(char))).casefold()


def _folded_with_offsets(text: str) -> tuple[str, list[int]]:
    """``text`` casefolded, accents dropped and whitespace runs made one space, with each folded
    character's offset in ``text`` (so a match maps back to the original)."""
    chars: list[str] = []
    offsets: list[int] = []
    for index, char in enumerate(text):
        if char.isspace():
            if chars and chars[-1] != " ":
                chars.append(" ")
                offsets.append(index)
            continue
        for folded in _fold(char):
            chars.append(folded)
            offsets.append(index)
    return "".join(chars), offsets


def _folded(text: str) -> str:
    if text.isascii():  # the common case, without the per-character walk
        return " ".join(text.lower().split())
    return _folded_with_offsets(text)[0].strip()


def locate_quote(quote: str, text: str) -> tuple[int, int] | None:
    """Where ``quote`` occurs in ``text`` as ``(start, end)`` character offsets, or ``None``."""
    words = quote.strip().strip("\"'").split()
    if not words:
        return None
    wanted = _folded(" ".join(words))
    if text.isascii() and wanted.isascii():
        found = _find_ascii(wanted, text)
        if found is not None:
            return found
    haystack, offsets = _folded_with_offsets(text)
    at = haystack.find(wanted)
    if at >= 0:
        return offsets[at], offsets[at + len(wanted) - 1] + 1
    if len(wanted) < _MIN_FUZZY_QUOTE or len(wanted) > len(haystack) + 2:
        return None
    alignment = fuzz.partial_ratio_alignment(wanted, haystack, score_cutoff=QUOTE_TOLERANCE)
    if alignment is None or alignment.dest_end <= alignment.dest_start:
        return None
    return _whole_words(text, offsets[alignment.dest_start], offsets[alignment.dest_end - 1] + 1)


def _find_ascii(wanted: str, text: str) -> tuple[int, int] | None:
    """Exact search, case and spacing aside, for ASCII text (no per-character walk): the text's words,
    lowercased and joined by single spaces, with where each word starts on both sides."""
    spans = [m.span() for m in _NON_SPACE.finditer(text)]
    folded, starts, at = [], [], 0
    for start, end in spans:
        starts.append(at)
        folded.append(text[start:end].lower())
        at += end - start + 1
    index = " ".join(folded).find(wanted)
    if index < 0:
        return None

    def original(position: int) -> int:
        word = bisect.bisect_right(starts, position) - 1
        return spans[word][0] + position - starts[word]

    return original(index), original(index + len(wanted) - 1) + 1


def _whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """A fuzzy span without surrounding spaces, widened to whole words."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    return start, end


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """The words of ``text`` as written (folded) and as names compare them (:func:`name_key`'s words:
    "UA1234" gives "ua" and "1234", "St." at the start "saint", "Baker St" "street")."""
    # name_key's own cache is for names: a message goes through the uncached function (cached here)
    return frozenset(WORD.findall(_folded(text))) | frozenset(WORD.findall(name_key.__wrapped__(text)))


def is_named(name: str, texts: Iterable[str]) -> bool:
    """Is every word of ``name`` a word of one of ``texts`` (or of a word's start: "Alice" in "Alice's"),
    as written or under the folds that make two names one (:func:`~chronomem.text.names.name_key`): a
    model that writes "The Beatles" for "beatles", "UA 1234" for "UA1234" or "Baker Street" for
    "Baker St." names what the message names."""
    spellings = [WORD.findall(_folded(name)), WORD.findall(name_key(name))]
    if not any(spellings):
        return False
    for text in texts:
        words = _words(text)
        for wanted in spellings:
            if wanted and all(w in words or any(v.startswith(w) for v in words) for w in wanted):
                return True
    return False


def named_entities(spellings: Mapping[str, Sequence[str]], text: str) -> frozenset[str]:
    """The keys of ``spellings`` (an entity's names) that ``text`` names: by a whole name, or by a
    capitalized word of one that none of the others has. People and places are named in part once
    introduced ("Anna" for Anna Kowalski, "St. Agnes" for St. Agnes Hospital); a word two of them
    share ("Clinic" of two clinics, "Okafor" of two siblings) tells neither apart."""
    words = {key: {w for name in names for w in WORD.findall(name)
                   if len(w) > 2 and w[0].isupper() and w.lower() not in _FUNCTION_WORDS}
             for key, names in spellings.items()}
    shared = Counter(w for found in words.values() for w in found)
    said = set(WORD.findall(text))
    return frozenset(key for key, names in spellings.items()
                     if is_named_any(names, text) or any(shared[w] == 1 and w in said for w in words[key]))


def is_named_any(names: Iterable[str], text: str) -> bool:
    """Does ``text`` name one of ``names`` (:func:`is_named`)?"""
    return any(is_named(name, [text]) for name in names)


# The words of an answer's shape, not of a statement: "source: Alice, target: Globex", "Alice
# RELATES_TO Globex" say no more than the two names.
_SCHEMA_WORDS = frozenset({"source", "target", "fact", "facts", "relation", "relation_type", "relates_to",
                           "entity", "entities", "name", "type", "null", "none"})


def junk_reason(fact: str, entity_names: Sequence[str]) -> str | None:
    """Why a fact text is not a statement about its entities, or ``None`` when it is one."""
    if not any(char.isalpha() for char in fact):
        return "has no letters"
    words = [w for name in entity_names for w in WORD.findall(name) if len(w) > 1 or w.isdigit()]
    if words and not any(is_named(word, [fact]) for word in words):
        return "names none of its entities"
    named = {w for name in entity_names for w in WORD.findall(_folded(name))}
    said = set(WORD.findall(_folded(fact))) - named - _SCHEMA_WORDS
    if not said:
        return "says nothing but its entities' names"
    if not said - _COPULA:
        return ONLY_AN_IDENTITY
    return None


# a statement that one entity is the other, or a name of it, and nothing more: "Assistant is Chen
# Wei's assistant" (the 1.5B's fact of an assistant's "Thanks, Chen") tells no reader anything. It is
# a well-formed answer with nothing in it, not a misread format: no corrective retry is asked for it
ONLY_AN_IDENTITY = "says no more than that one of its entities is the other"
_COPULA = frozenset(("is", "are", "was", "were", "be", "s", "a", "an", "the"))


# words that say nothing of what a fact states: a paraphrase is judged by the rest
_FUNCTION_WORDS = frozenset((
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "do",
    "does", "did", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "but", "as",
    "that", "this", "these", "those", "it", "its", "s", "his", "her", "their", "who", "which", "named",
    "called",
))


def _content_stems(text: str, names: Sequence[str]) -> set[str]:
    """The words of ``text`` that are neither its entities' names nor function words, cut to their
    first five letters (so "adopted" meets "adopts", "sister" "sisters")."""
    named = {w for name in names for w in WORD.findall(_folded(name))}
    return {w[:5] for w in WORD.findall(_folded(text)) if w not in named and w not in _FUNCTION_WORDS}


def stating_sentence(fact: str, names: Sequence[str], text: str, speaker: str | None = None) -> tuple[int, int] | None:
    """The sentence of ``text`` that states ``fact`` in other words, as ``(start, end)``, or ``None``.

    For a fact whose quote is missing or is not the message's words (a model that quotes its own
    sentence, "Bolt is Maya's dog", for the message's "I adopted a dog named Bolt"): the sentence
    must name every one of the fact's entities (a message's speaker counts as named in each of its
    sentences), and at least :data:`PARAPHRASE_SHARE` of what the fact says besides their names must
    be words of that sentence, so an invented statement about named entities ("Ana hates Lisbon"
    for "Ana lives in Lisbon") is still rejected.
    """
    claimed = _content_stems(fact, [*names, speaker or ""])
    if not claimed:
        return None
    before = ""
    for match in _SENTENCE.finditer(text):
        sentence, previous, before = match.group(0), before, match.group(0)
        # "They just had a baby": a pronoun names what the sentence before named ("Ana ... with Rui")
        referred = [previous] if REFERS_BACK.search(sentence) else []
        if not all(is_named(name, [sentence, *referred]) or (speaker and is_named(name, [speaker]))
                   for name in names):
            continue
        said = _content_stems(in_third_person(sentence, speaker), [*names, speaker or ""])
        if len(claimed & said) >= PARAPHRASE_SHARE * len(claimed):
            start = match.start() + len(sentence) - len(sentence.lstrip())
            return start, match.start() + len(sentence.rstrip())
    return None


# third-person pronouns: a sentence with one refers back to an entity the sentence before named
REFERS_BACK = re.compile(r"\b(?:he|she|they|him|her|them|his|hers|their|theirs)\b", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (a full stop, question or exclamation mark, or a line break ends
    one), stripped, empty ones left out."""
    return [s for match in _SENTENCE.finditer(text) if (s := match.group(0).strip())]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where the sentences of :func:`sentences` are in ``text``, each ``(start, end)``, stripped."""
    spans = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group(0)
        if stripped := sentence.strip():
            start = match.start() + sentence.index(stripped)
            spans.append((start, start + len(stripped)))
    return spans


def sentence_around(text: str, start: int, end: int) -> str:
    """The sentence(s) of ``text`` that hold the span ``start:end`` (a quote may cross a full stop)."""
    held = _held(text, start, end)
    return text[held[0][0]:held[-1][1]].strip() if held else ""


def sentence_stating(text: str, start: int, end: int, fact: str) -> str:
    """Of the sentences of ``text`` that hold the span ``start:end``, the one sharing the most words
    with ``fact``: a quote that runs over two sentences ("... will step down on March 31. The board
    has appointed Victor Lang ... effective April 1") states its fact in one of them."""
    held = [text[a:b].strip() for a, b in _held(text, start, end)]
    claimed = _content_stems(fact, [])
    return max(held, key=lambda sentence: len(claimed & _content_stems(sentence, [])), default="")


def _held(text: str, start: int, end: int) -> list[tuple[int, int]]:
    every = [m.span() for m in _SENTENCE.finditer(text)]
    held = [(a, b) for a, b in every if a < max(end, start + 1) and b > start]
    return held or [(a, b) for a, b in every if a <= start][-1:]  # an empty span at the very end
