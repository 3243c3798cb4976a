"""Other forms of a query's words for full-text search, by rules: "research" also finds "Researching".

The full-text index matches words exactly (no stemmer: see ``store/sqlite/text.py``), so "What did
Caroline research?" misses the turn "Researching adoption agencies", and "Where has Melanie
camped?" misses "my family camping at the beach". :func:`expand_query` appends, after the query's
own words, the regular inflections of each content word — the base form, -s/-es, -ed, -ing(s), -er(s),
and -y ↔ -ies/-ied — built from a crude base ("camped" → "camp", "moving" → "mov"). Forms that no
text contains cost nothing (no posting list); a real form weighs in BM25 by its own rarity.

Only lower-case content words are expanded (four letters or more, not function words): "does" →
"do" would match everything, and a name does not inflect. Irregular forms ("ran", "bought") are
out of reach of rules and left alone.
"""

from __future__ import annotations

from chronomem.text.words import LETTERS

__all__ = ["expand_query", "word_forms"]

_MAX_FORMS = 48  # the index reads at most 64 words of a query: the query's own come first
# function words of questions: their other forms would match most turns
_SKIP_WORDS = (
    "what when where which while whom whose does doing done have having been being were with from "
    "that this these those they them their there here about into after before would could should "
    "also just some many much more most very than then like"
)
_SKIP = frozenset(_SKIP_WORDS.split())


def _base(word: str) -> str:
    """A crude base: "camped" → "camp", "shopping" → "shop", "stories" → "story", "kids" → "kid"."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if base[-1] == base[-2] and base[-1] not in "lsz":  # "shopping": the doubled consonant
                base = base[:-1]
            return base
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def word_forms(word: str) -> list[str]:
    """The regular inflections of a (casefolded) word, itself first."""
    base = _base(word)
    forms = [word, base, base + "s", base + "es", base + "e", base + "ed", base + "ing", base + "ings", base + "er",
             base + "ers"]
    if base.endswith("e"):
        forms += [base + "d", base[:-1] + "ing", base + "r", base + "rs"]
    if base.endswith("y"):
        forms += [base[:-1] + "ies", base[:-1] + "ied"]
    return list(dict.fromkeys(forms))


def expand_query(query: str) -> str:
    """The query's words, then the other forms of its content words (at most ``_MAX_FORMS``)."""
    found = LETTERS.findall(query)
    words = [w.casefold() for w in found]
    extra: dict[str, None] = {}
    for word in dict.fromkeys(found):
        folded = word.casefold()
        if len(word) >= 4 and folded not in _SKIP and not word[0].isupper():  # names do not inflect
            extra.update(dict.fromkeys(f for f in word_forms(folded)[1:] if f not in words))
    return " ".join([*words, *list(extra)[:_MAX_FORMS]])
