"""Messages that *report* an event the question asks about, told apart from plans, by rules.

"What is the order of the three trips I took in the past three months?" is answered by the
sessions where the user says "I just got back from a solo camping trip to Yosemite today", not by
the ones where they are "planning a trip to Sequoia" or ask "what should I pack for a trip?" —
yet all of them mention trips, and the plans, being questions to the assistant, sit closer to the
question in embedding space. Without an LLM-built graph there is no extracted event to search; a
tense-and-aspect cue on the user's own sentences is the next best thing:

- :func:`asks_what_was_done`: the question asks what the user did — a first-person past or
  perfect verb ("did I attend", "trips I took", "have I led", "I've been to"), not what they
  prefer, plan or were told ("did I mention", "did you say"). Only such questions get the signal.
- :func:`done_words`: what the reports must mention — the question's content words without
  its time expression, its counting frame and its light verbs ("trips I took" → "trips").
- :func:`reports_event`: a sentence of the message names one of those words (in any regular form)
  and has a first-person past-tense or perfect verb ("I went", "we attended", "I just got back",
  "I've finished", "my wife and I visited"), not a plan ("I'm planning", "thinking of going",
  "I want to", "I'll") nor the chat formulas "I was wondering / hoping / thinking".

The searcher fuses the reporting candidates, in their fused order, as one more ranking at
``SearchConfig.report_boost``. ``bench/report_cues.py`` measures the rule's precision and recall
on a labelled sample of LongMemEval user sentences (``bench/data/report_sentences.json``).

Pure functions: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from chronomem.search.decompose import focus_query
from chronomem.text.timeparse import strip_time
from chronomem.text.wordforms import word_forms

__all__ = ["asks_what_was_done", "done_words", "mentions", "reports_event", "sentences"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Irregular past tenses of verbs that report an event (not "thought", "knew", "felt": states).
_IRREGULAR_PAST = (
    "went took got came saw bought ran did made had began won met flew drove rode ate drank wrote spent left "
    "found gave sold built caught brought kept lost paid sent sang swam threw wore sat heard held fed broke "
    "chose grew led lent shot slept spoke stole woke hung dug fought hid rebuilt became"
)
# Their participles, after "have" / "'ve" / "had" ("I've been to", "I have taken").
_PARTICIPLES = (
    "been gone taken done seen made had got gotten begun won met flown driven ridden eaten drunk written spent "
    "left found given sold built caught brought kept lost paid sent sung swum thrown worn heard held fed broken "
    "chosen grown led run read bought become"
)
# "-ed" words that are not past tenses
_NOT_PAST = "need feed seed speed bleed breed proceed succeed exceed indeed embed shed bed red wed"
_PAST = _words(_IRREGULAR_PAST)
_PERFECT = _words(_PARTICIPLES)
_NOT_ED = _words(_NOT_PAST)
# what may stand between the subject and its verb: "I just got back", "we finally visited"
_ADVERBS = _words("just recently finally also actually already even first then once really only last still")
# "I was wondering if you could …": chat formulas in the past tense that report nothing
_FORMULA_AFTER = _words("wondering hoping thinking looking trying going planning considering curious told")
# after "been": "I've been thinking about going" is a plan, "I've been collecting stamps" is not
_PLANNING = _words("thinking wanting meaning planning considering hoping looking trying debating")

_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SUBJECT = frozenset({"i", "we"})
_HAVE = frozenset({"'ve", "have", "'d", "had", "'s", "has"})  # "I've", "we'd", "my family's been" (rare)

# The question asks what the user did: a first-person past ("did I", "I took", "I attended") or
# perfect ("have I", "I've been to") — not about the conversation ("did I mention", "did you say").
_DID_I = re.compile(
    r"\b(?:did|have|had|has)\s+(?:I|we|my\s+\w+)\b(?!\s+(?:mention|say|tell|ask|talk|discuss|share|"
    r"bring\s+up|note|write\s+down|told)\b)",
    re.IGNORECASE,
)
_I_PAST = re.compile(r"\b(?:I|we)(?:'ve|\s+have)?\s+(?:\w+ly\s+|just\s+)?(?P<verb>[a-z]+)\b")
# "I wanted to follow up", "you mentioned", "we talked about": the conversation, not an event
_ABOUT_CHAT = re.compile(
    r"\b(?:our|the|a)\s+(?:previous|last|earlier)\s+(?:conversation|chat|discussion|session)\b|"
    r"\byou\s+(?:\w+\s+)?(?:mentioned|said|told|recommended|suggested|gave|provided|listed|shared)\b",
    re.IGNORECASE,
)
_NOT_EVENTS = _words(
    "wanted noticed wondered thought mentioned asked said told talked discussed liked loved hoped needed "
    "wished planned considered felt knew seemed realized realised remembered")
# what the reports need not repeat: light verbs and the question's own frame
_LIGHT = _words(
    "take took taken do did done go went gone get got have had make made spend spent attend attended "
    "participate participated try tried use used complete completed start started join joined finish "
    "finished buy bought visit visited order earliest latest first last total number many much times "
    "currently ever recently previously still between day days passed long old")
# words of a question too common in chat to tie a report to it ("the new feed", "different types")
_GENERIC = _words(
    "new different type types kind kinds sort sorts total amount cost weight number average minimum maximum "
    "higher lower more less per recent current favorite favourite several various other few lot lots "
    "thing things stuff item items way ways time times one two three four five")
_STOP = _words(
    "what when where which while whom whose does doing have having been being were with from that this these "
    "those they them their there here about into after before would could should also just some many much "
    "more most very than then like the and for are was how did you your mine our ours its any all each "
    "other own same can will")


def sentences(text: str) -> list[str]:
    """The text cut at sentence ends and line breaks."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _is_past(word: str) -> bool:
    return word in _PAST or (word.endswith("ed") and len(word) > 4 and word not in _NOT_ED)


def _is_event_past(word: str) -> bool:
    """A past tense that tells of something done, not said or thought ("I mentioned", "I wanted")."""
    return _is_past(word) and word not in _NOT_EVENTS


def _verb_reports(tokens: list[str], start: int) -> bool:
    """Does the verb phrase after the subject at ``start - 1`` report a past event?"""
    n = start
    while n < len(tokens) and tokens[n] in _ADVERBS:
        n += 1
    if n >= len(tokens):
        return False
    word = tokens[n]
    if word in _HAVE:  # "I've (just) finished", "I had visited"; not "I had to", "I've been thinking of"
        n += 1
        while n < len(tokens) and tokens[n] in _ADVERBS:
            n += 1
        if n >= len(tokens):
            return False
        participle = tokens[n]
        following = tokens[n + 1] if n + 1 < len(tokens) else ""
        if participle == "been":
            return following not in _PLANNING
        if participle in _PERFECT or _is_event_past(participle):
            return True
        # "had" as the verb itself: "I had an appointment" (not "I'd like", nor "I had to")
        return word == "had" and participle != "to"
    if word in ("was", "were"):  # "I was at the concert" yes; "I was wondering" no
        following = tokens[n + 1] if n + 1 < len(tokens) else ""
        return bool(following) and following not in _FORMULA_AFTER and not following.endswith("ing")
    return _is_event_past(word)


def _tokens(sentence: str) -> list[str]:
    """Lower-case words, contractions split off the subject: "I've" → "i", "'ve"."""
    out: list[str] = []
    for word in _WORD.findall(sentence.replace("’", "'")):  # a typographic apostrophe: "I’ve"
        folded = word.casefold()
        head, apostrophe, tail = folded.partition("'")
        if apostrophe and head in _SUBJECT:
            out += [head, "'" + tail]
        else:
            out.append(folded)
    return out


def _reports_in(sentence: str) -> bool:
    tokens = _tokens(sentence)
    return any(t in _SUBJECT and _verb_reports(tokens, n + 1) for n, t in enumerate(tokens))


def _forms(words: Collection[str]) -> set[str]:
    return {form for word in words for form in word_forms(word)}


def mentions(sentence: str, words: Collection[str]) -> bool:
    """Does the sentence hold one of ``words`` (casefolded) in any regular form?"""
    return bool(_forms(words) & set(_tokens(sentence)))


def reports_event(text: str, words: Collection[str]) -> bool:
    """Does a sentence of ``text`` mention one of ``words`` (casefolded, any regular form) and
    report, in the first person and a past or perfect tense, something that happened?"""
    wanted = _forms(words)
    if not wanted:
        return False
    return any(wanted & set(_tokens(sentence)) and _reports_in(sentence) for sentence in sentences(text))


def asks_what_was_done(question: str) -> bool:
    """Does the question ask what the user did, took, attended … (see the module docstring)?"""
    if _ABOUT_CHAT.search(question):
        return False
    if _DID_I.search(question):
        return True
    verbs = (m["verb"].casefold() for m in _I_PAST.finditer(question))
    return any(_is_event_past(verb) for verb in verbs)


def done_words(question: str) -> list[str]:
    """The content words the reports must mention: the focus of a counting or ordering question (or
    the question without its time expression), less function words and light verbs."""
    text = focus_query(question) or strip_time(question)
    words = [w.casefold() for w in _WORD.findall(text)]
    return list(dict.fromkeys(
        w for w in words if len(w) >= 3 and w not in _STOP | _LIGHT | _GENERIC and "'" not in w
    ))
