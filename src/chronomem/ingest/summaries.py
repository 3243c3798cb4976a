"""Incremental entity summaries, the pure part (DESIGN §2, step 8).

A summary grows by appending the text of each new fact about the entity; an invalidated or removed
fact's sentence is taken out again. Only when a summary passes a bound is it rewritten by the model,
and then in one batched call with every other summary close to the bound, so that rewrites are rare
and amortized (Graphiti rewrites every touched entity's summary on every episode).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from chronomem.domain import Entity, Fact

__all__ = ["append_sentences", "rebuild_summary", "remove_sentences", "sentence", "to_rewrite"]


def sentence(text: str) -> str:
    """A fact text as one sentence of a summary."""
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


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
