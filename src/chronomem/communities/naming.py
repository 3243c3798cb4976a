"""Names and summaries without a model: communities still form, named from their central members.

Members arrive ranked by centrality (fact weight inside the community), so the first few names say
what the community is about; the summary quotes the opening sentence of their own summaries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chronomem.domain import Entity

__all__ = ["append_members", "first_sentence", "member_name", "member_summary"]

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s")


def first_sentence(text: str, max_chars: int = 200) -> str:
    """The opening sentence of ``text``, cut at ``max_chars`` (with an ellipsis)."""
    text = " ".join(text.split())
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
    return sentence if len(sentence) <= max_chars else sentence[: max_chars - 1].rstrip() + "…"


def member_name(ranked: Sequence[Entity], count: int = 3) -> str:
    """"A, B, C": the most central members' names."""
    return ", ".join(dict.fromkeys(e.name for e in ranked[:count]))


def _describe(entity: Entity) -> str:
    sentence = first_sentence(entity.summary)
    return f"{entity.name}: {sentence}" if sentence else entity.name


def member_summary(ranked: Sequence[Entity], max_chars: int = 1200) -> str:
    """Who is in the community, most central first, each with its own first sentence, within a budget."""
    if not ranked:
        return ""
    head = f"{len(ranked)} members, most connected first."
    parts = [head]
    used = len(head)
    for entity in ranked:
        part = _describe(entity)
        if used + len(part) + 1 > max_chars:
            break
        parts.append(part)
        used += len(part) + 1
    return "\n".join(parts)


def append_members(summary: str, added: Sequence[Entity], max_chars: int = 1200) -> str:
    """Add newcomers to a summary without a model while it stays within budget (one line each)."""
    lines = [summary] if summary else []
    used = len(summary)
    for entity in added:
        line = _describe(entity)
        if used + len(line) + 1 > max_chars:
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)
