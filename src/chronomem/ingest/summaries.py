"""Incremental entity summaries, the pure part (docs/design.md §2, step 8).

An entity's summary is a narrative that grows by one *note* per episode that says something new about
it. With a model, the note is the one sentence the entity-extraction answer already carries ("what
this message says about the entity"), so a summary costs no call of its own; without one (declared
structure, ``add_fact``, the heuristic stand-in) the notes are what the graph says: the sentences of
the message that name the entity, and the texts of its new facts. A note that adds no word the summary
lacks is skipped. Only when a summary passes a bound is it rewritten by the model, in one batched call
with every other summary close to the bound, so rewrites are rare and amortized (Graphiti rewrites
every touched entity's summary on every episode, one call each).

Who wrote a summary is ``Entity.summary_source``: ``"model"`` when a language model wrote every part
of it, ``"graph"`` when some part is the graph's own text (the fallback), ``"edit"`` after a hand
edit. Every API that returns an entity returns it, so a caller can tell a model-written narrative
from the stitched fallback (as the user and thread summaries say "[no model summary]").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from chronomem.domain import Entity, Fact

__all__ = [
    "BY_EDIT",
    "BY_GRAPH",
    "BY_MODEL",
    "NOTE_MAX_CHARS",
    "append_sentences",
    "bounded",
    "is_news",
    "mention_note",
    "rebuild_summary",
    "remove_sentences",
    "sentence",
    "to_rewrite",
    "unsupported_names",
]

BY_MODEL, BY_GRAPH, BY_EDIT = "model", "graph", "edit"
NOTE_MAX_CHARS = 300  # one note; a longer answer is cut at a sentence end (the model was asked for one sentence)

_WORD = re.compile(r"[\w'’-]+")
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# words that carry no information of their own; negations are *not* here: "does not like" is news
_FILLER = _wordset(
    "a an the and or but of to in on at for with by from as is are was were be been being has have had it its "
    "this that these those they them their he she his her him i me my we our you your says said say told tells "
    "about also just very really so then there here who which what when where how"
)
_MONTHS = _wordset(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday"
)


def sentence(text: str) -> str:
    """A text as one sentence of a summary."""
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


def bounded(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars``, at the last sentence end that fits (else the last word)."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if end > max_chars // 3:
        return cut[: end + 1]
    return cut.rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _content_words(text: str) -> set[str]:
    words = (m.casefold().strip("'’-").removesuffix("'s").removesuffix("’s") for m in _WORD.findall(text))
    return {w for w in words if w and w not in _FILLER}


def is_news(summary: str, note: str) -> bool:
    """Whether ``note`` adds a word (numbers and negations count) that ``summary`` does not have.

    Skipping a note that adds none saves the characters, and so the rewrites, that repetition
    ("Caroline talks about the support group again") would cost; bench/ingest.py counts how often a
    skipped note's entity got a new fact in the same episode (a skip that may have missed something).
    """
    return bool(_content_words(note) - _content_words(summary))


def unsupported_names(text: str, sources: Iterable[str]) -> list[str]:
    """Capitalized words of ``text`` (names, places, titles) that none of ``sources`` contains.

    A cheap hallucination check for model-written summaries: a name the episodes never said was
    invented. Month and day names are allowed (relative dates are resolved into them), numbers are
    not judged (resolved dates produce them: "two weeks ago" -> "on 8 May 2023"), and neither is a
    sentence's first word, which a paraphrase capitalizes ("Attended …"): a name invented there
    slips through.
    """
    known = {w.casefold().strip("'’-") for source in sources for w in _WORD.findall(source)}
    found = []
    for part in _SENTENCE.findall(text):
        for word in _WORD.findall(part)[1:]:
            folded = word.casefold().strip("'’-")
            if not word[0].isupper() or folded in _FILLER or folded in _MONTHS:
                continue
            if folded not in known and folded.removesuffix("'s").removesuffix("’s") not in known:
                found.append(word)
    return list(dict.fromkeys(found))


def mention_note(message: str, name: str, *, speaker: str | None = None, max_chars: int = NOTE_MAX_CHARS) -> str:
    """What a message says about ``name`` without a model, as one note: its first sentence that names
    it (the speaker's first sentence of some substance when it is the speaker), bounded. Empty when
    the message does not name it."""
    body = message
    if speaker and message.startswith(f"{speaker}:"):
        body = message[len(speaker) + 1 :].strip()
    sentences = [" ".join(s.split()) for s in _SENTENCE.findall(body) if s.strip()]
    if speaker and name.casefold() == speaker.casefold():
        # "Hey Mel!" says nothing about the speaker: the first sentence with three content words does
        picked = next((s for s in sentences if len(_content_words(s)) >= 3), sentences[0] if sentences else "")
    else:
        words = _content_words(name) or {name.casefold()}
        picked = next((s for s in sentences if words <= _content_words(s) or name.casefold() in s.casefold()), "")
    if not picked:
        return ""
    return bounded(sentence(f"{speaker} said: {picked}" if speaker else picked), max_chars)


def append_sentences(summary: str, texts: Iterable[str]) -> str:
    """``summary`` with every sentence of ``texts`` it does not already contain appended."""
    result = summary.strip()
    for text in texts:
        line = sentence(text)
        if line not in result:
            result = f"{result} {line}".strip()
    return result


def remove_sentences(summary: str, texts: Iterable[str]) -> str:
    """``summary`` without the sentences of ``texts`` (those a rewrite merged away are not found)."""
    result = summary
    for text in texts:
        result = result.replace(sentence(text), "")
    return " ".join(result.split())


def rebuild_summary(facts: Sequence[Fact], max_chars: int) -> str:
    """A summary made only of ``facts`` (current ones, newest kept when over the bound)."""
    ordered = sorted((f for f in facts if f.expired_at is None), key=lambda f: (f.created_at, f.id))
    lines: list[str] = []
    size = 0
    for fact in reversed(ordered):
        line = sentence(fact.fact)
        if line in lines:
            continue
        if size + len(line) + 1 > max_chars:
            break
        lines.append(line)
        size += len(line) + 1
    return " ".join(reversed(lines))


def to_rewrite(entities: Iterable[Entity], max_chars: int, early_fraction: float) -> list[Entity]:
    """The summaries to rewrite now: none unless one passed ``max_chars``; then every one past the early bound."""
    candidates = list(entities)
    if not any(len(e.summary) > max_chars for e in candidates):
        return []
    return [e for e in candidates if len(e.summary) > max_chars * early_fraction]
