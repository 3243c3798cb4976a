"""A question about a speaker, rewritten in that speaker's own voice, by rules.

Turns are spoken in the first person ("I love pottery, it's so relaxing", "my home country,
Sweden"); questions put to memory talk about the speaker in the third person ("What activities
does Melanie partake in?", "What is Caroline's identity?", "Where did Caroline move from?"). The
question's embedding and its full-text words carry the name, the third-person verb forms and the
question frame, none of which the evidence holds. :func:`perspective_query` rewrites the question
as the speaker would say it, and the searcher searches that sentence beside the whole question:

    What activities does Melanie partake in?         → activities I partake in
    Where did Caroline move from 4 years ago?        → I moved from
    What is Caroline's identity?                     → my identity
    Who supports Caroline when she has a bad day?    → supports me when I have a bad day

The rules, in order:

1. the question must name exactly one of the speakers (whole words, any case); two or more, or
   none, and nothing is rewritten;
2. the name's possessive becomes "my" ("Melanie's kids" → "my kids"); the name after an
   auxiliary becomes "I" with the auxiliary folded in ("does Melanie partake" → "I partake",
   "did Caroline move" → "I moved", "has Melanie read" → "I have read", "is John trying" → "I am
   trying", "would Caroline pursue" → "I would pursue"); the name as a subject elsewhere becomes
   "I" with a third-person verb made first-person ("What Jon thinks" → "I think"); the name as an
   object becomes "me" ("Who supports Caroline" → "supports me"). A name followed by a verb reads
   as a subject, so "Who did Caroline meet?" → "I met" (the question asks whom she met: her
   own words say "I met");
3. third-person pronouns become first-person ones: the question names one speaker, so "she",
   "her", "his" almost always mean that speaker ("with her family" → "with my family"; "her"
   before a noun is "my", elsewhere "me");
4. the question frame goes: the wh-words ("what", "how many", "what kind of", "in what ways") and
   an auxiliary left at the front ("What is my identity" → "my identity"), and time expressions
   (the whole query's time windows still apply).

Pure functions: no I/O. ``did`` + verb takes the verb's past form: regular ones by rule (moved,
studied, stopped), a table of common irregular ones (went, made, bought), others by rule too (a
wrong form costs little: the embedding barely notices and full text also matches other forms).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from chronomem.text.timeparse import strip_time

__all__ = ["Perspective", "named_speakers", "perspective_query"]

_SELF, _OWN = "\x00SELF", "\x00OWN"  # placeholders for the name and its possessive
_TOKEN = re.compile(r"\x00(?:SELF|OWN)|[\w+&/-]+(?:['’]\w*)?|[^\w\s]")
_PUNCTUATION = frozenset(",.;:!?")

_DO = frozenset({"do", "does"})
_PAST = frozenset({"did"})
_HAVE = {"has": "have", "have": "have", "had": "had"}
_BE = {"is": "am", "are": "am", "was": "was", "were": "was"}
_MODALS = frozenset({"can", "could", "will", "would", "should", "might", "may", "must", "shall"})
_AUXILIARIES = _DO | _PAST | _HAVE.keys() | _BE.keys() | _MODALS
# what may stand between the auxiliary's subject and its verb: "did Melanie recently paint"
_ADVERBS = frozenset({"ever", "also", "both", "still", "first", "already", "just", "often", "never", "always",
                      "not", "really", "even", "once", "again"})
# after these a name opens a clause (it is the subject); after anything else it is an object
_CLAUSE_OPENERS = frozenset({"what", "which", "where", "when", "why", "how", "who", "that", "and", "after",
                             "before", "while", "if", "because", "since", "until", "once", "whether"})
# words "her" does not own: "give her a book", "remind her of", "supports her when"
_NOT_OWNED = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "at", "for", "with", "by", "from", "about", "as", "into", "when",
    "while", "and", "or", "but", "that", "if", "after", "before", "so", "because", "this", "these", "those",
    "up", "out", "off", "over", "back", "down", "away", "during", "through", "since", "until", "most", "feel",
    "some", "any",
})
_PRONOUNS = {"she": "I", "he": "I", "his": "my", "him": "me", "herself": "myself", "himself": "myself",
             "hers": "mine"}
# the question frame: wh-words and the words that only shape the question
_FRAME = re.compile(
    r"^(?:(?:in|for|to|from|with|on|at|by)\s+)?(?:what|which|where|when|why|how|who|whom|whose)\b"
    r"(?:\s+(?:many|much|long|often|old|far|soon|else))?"
    r"(?:\s+(?:kinds?|types?|sorts?)\s+of\b)?(?:\s+ways?\b)?\s*",
    re.IGNORECASE,
)
_LEADING_AUXILIARY = re.compile(r"^(?:is|are|was|were|do|does|did|has|have|had)\s+(?!I\b)", re.IGNORECASE)
_IRREGULAR_PAST = {
    "be": "was", "become": "became", "begin": "began", "bring": "brought", "build": "built", "buy": "bought",
    "catch": "caught", "choose": "chose", "come": "came", "do": "did", "draw": "drew", "drink": "drank",
    "drive": "drove", "eat": "ate", "fall": "fell", "feel": "felt", "find": "found", "fly": "flew",
    "forget": "forgot", "get": "got", "give": "gave", "go": "went", "grow": "grew", "have": "had",
    "hear": "heard", "hold": "held", "keep": "kept", "know": "knew", "learn": "learned", "leave": "left",
    "lend": "lent", "lose": "lost", "make": "made", "meet": "met", "pay": "paid", "put": "put", "read": "read",
    "ride": "rode", "run": "ran", "say": "said", "see": "saw", "sell": "sold", "send": "sent", "set": "set",
    "sing": "sang", "sit": "sat", "speak": "spoke", "spend": "spent", "swim": "swam", "take": "took",
    "teach": "taught", "tell": "told", "think": "thought", "throw": "threw", "understand": "understood",
    "wear": "wore", "win": "won", "write": "wrote",
}
_VOWELS = frozenset("aeiou")
# a rewrite of only these says nothing: "What did Melanie do?" → "I did"
_EMPTY = frozenset({"i", "me", "my", "mine", "myself", "am", "do", "did", "done", "be", "been", "being"}) \
    | _AUXILIARIES | _PUNCTUATION


@dataclass(frozen=True, slots=True)
class Perspective:
    """The speaker a question is about, and the question in that speaker's voice."""

    speaker: str
    query: str


def _names(speaker: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(speaker)}(?P<own>['’]s?)?(?!\w)", re.IGNORECASE)


def named_speakers(question: str, speakers: Iterable[str]) -> list[str]:
    """The speakers the question names (whole words, any case), in sorted order."""
    return sorted(s for s in set(speakers) if s and _names(s).search(question))


def _past(verb: str) -> str:
    """A verb's past form: the irregular table, else the regular rule (move → moved, study →
    studied, stop → stopped)."""
    if verb in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[verb]
    if verb.endswith("e"):
        return verb + "d"
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in _VOWELS:
        return verb[:-1] + "ied"
    if len(verb) <= 4 and len(verb) >= 3 and verb[-1] not in _VOWELS | set("wxy") and verb[-2] in _VOWELS \
            and verb[-3] not in _VOWELS:
        return verb + verb[-1] + "ed"  # one syllable, consonant-vowel-consonant: the consonant doubles
    return verb + "ed"


def _first_person(verb: str) -> str:
    """A third-person present verb in the first person ("thinks" → "think", "has" → "have")."""
    lowered = verb.casefold()
    if lowered in _HAVE or lowered in _BE:
        return _HAVE.get(lowered) or _BE[lowered]
    if lowered in _DO:
        return "do"
    if lowered.endswith("ies") and len(lowered) > 4:
        return lowered[:-3] + "y"
    if lowered.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return lowered[:-2]
    if lowered.endswith("s") and not lowered.endswith(("ss", "us", "is", "'s", "’s")) and len(lowered) > 3:
        return lowered[:-1]
    return verb


def _is_word(token: str | None) -> bool:
    return token is not None and token[0].isalpha() and token[0].islower()


def _skip_adverbs(tokens: list[str], start: int) -> int:
    """The index of the first token from ``start`` that is not an adverb."""
    n = start
    while n < len(tokens) and (tokens[n].casefold() in _ADVERBS or tokens[n].casefold().endswith("ly")):
        n += 1
    return n


def _subject(tokens: list[str], at: int) -> list[str]:
    """The speaker as the subject at ``at``: "I", its auxiliary folded in, the verb made first-person.
    Returns the new token list."""
    before = tokens[at - 1].casefold() if at > 0 else ""
    verb_at = _skip_adverbs(tokens, at + 1)
    verb = tokens[verb_at] if verb_at < len(tokens) else None
    if before in _AUXILIARIES:
        start = at - 1
        if before in _DO:
            auxiliary: list[str] = []
        elif before in _PAST:
            auxiliary = []
            if _is_word(verb):
                tokens = [*tokens[:verb_at], _past(verb.casefold()), *tokens[verb_at + 1 :]]  # type: ignore[union-attr]
        elif before in _HAVE:
            auxiliary = [_HAVE[before]]
        elif before in _BE:
            auxiliary = [_BE[before]]
        else:
            auxiliary = [before]  # a modal: "would Caroline pursue" → "I would pursue"
        return [*tokens[:start], "I", *auxiliary, *tokens[at + 1 :]]
    if _is_word(verb):
        tokens = [*tokens[:verb_at], _first_person(verb), *tokens[verb_at + 1 :]]  # type: ignore[arg-type]
    return [*tokens[:at], "I", *tokens[at + 1 :]]


def _rewrite_name(tokens: list[str]) -> list[str]:
    """Every mention of the speaker in the first person (rule 2)."""
    n = 0
    while n < len(tokens):
        token = tokens[n]
        if token == _OWN:
            tokens = [*tokens[:n], "my", *tokens[n + 1 :]]
        elif token == _SELF:
            before = tokens[n - 1].casefold() if n > 0 else ""
            after = tokens[n + 1] if n + 1 < len(tokens) else None
            opens = n == 0 or before in _CLAUSE_OPENERS or before in _PUNCTUATION
            if before in _AUXILIARIES or (opens and _is_word(after)):
                tokens = _subject(tokens, n)
            else:
                tokens = [*tokens[:n], "me", *tokens[n + 1 :]]
        n += 1
    return tokens


def _rewrite_pronouns(tokens: list[str]) -> list[str]:
    """Third-person pronouns in the first person (rule 3)."""
    n = 0
    while n < len(tokens):
        lowered = tokens[n].casefold()
        if lowered == "her":
            after = tokens[n + 1] if n + 1 < len(tokens) else None
            owns = after is not None and after[0].isalnum() and after.casefold() not in _NOT_OWNED
            tokens[n] = "my" if owns else "me"
        elif lowered in ("she", "he"):
            tokens = _subject([*tokens[:n], _SELF, *tokens[n + 1 :]], n)
        elif lowered in _PRONOUNS:
            tokens[n] = _PRONOUNS[lowered]
        n += 1
    return tokens


def _join(tokens: list[str]) -> str:
    text = ""
    for token in tokens:
        text += token if token in _PUNCTUATION or not text else " " + token
    return text


def _drop_frame(text: str) -> str:
    """Without the wh-words and a leading auxiliary, the time expressions and the final mark (rule 4)."""
    text = strip_time(text)
    text = _LEADING_AUXILIARY.sub("", _FRAME.sub("", text.strip()))
    return " ".join(text.strip(" ,;:?!.").split())


def perspective_query(question: str, speakers: Iterable[str]) -> Perspective | None:
    """The question in the voice of the one speaker it names, or ``None`` (it names none, or more
    than one, or nothing is left once the frame is gone)."""
    named = named_speakers(question, speakers)
    if len(named) != 1:
        return None
    [speaker] = named
    marked = _names(speaker).sub(lambda m: f" {_OWN if m['own'] else _SELF} ", question)
    tokens = _rewrite_pronouns(_rewrite_name(_TOKEN.findall(marked)))
    rewritten = _drop_frame(_join(tokens))
    if not set(_TOKEN.findall(rewritten.casefold())) - _EMPTY:
        return None  # "What did Melanie do?" → "I did": nothing to search for
    return Perspective(speaker, rewritten)
