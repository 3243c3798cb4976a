"""χ: the context block (paper §3) — ranked facts, entities, communities (and episodes) as text.

The template is the paper's: facts with their date ranges, entities with their summaries, then
community summaries; optionally the most relevant raw episodes. Everything is fitted to a token
budget in rank order and deduplicated. Pure: the caller passes objects already ranked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from chronomem.domain import Community, Entity, Episode, Fact
from chronomem.providers.tokens import estimate_tokens
from chronomem.text.names import normalize_name

__all__ = ["DEFAULT_TOKEN_BUDGET", "build_context", "estimate_tokens", "evidence_quotes", "fact_line"]

DEFAULT_TOKEN_BUDGET = 2000

_HEADER = (
    "FACTS and ENTITIES represent relevant context to the current conversation.\n"
    "These are the most relevant facts and their valid date ranges. If the fact is about an event, "
    "the event takes place during this time.\n"
    "format: FACT (Date range: from - to)"
)
_ENTITY_INTRO = "These are the most relevant entities\nENTITY_NAME: entity summary"
_COMMUNITY_INTRO = "These are summaries of the most relevant communities (clusters of related entities)"
_EPISODE_INTRO = "These are the most relevant raw episodes (messages or documents), with when they happened"

# Share of the budget each section may take on the first pass; what one leaves, the next ones use.
_SHARES = {"facts": 0.5, "entities": 0.3, "communities": 0.1, "episodes": 0.1}


def _date(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%SZ") if value is not None else ""


def fact_line(
    fact: Fact, *, now: datetime | None = None, quote: str | None = None, names: Mapping[str, str] | None = None
) -> str:
    """``- fact (Date range: from - to)``; superseded facts say when they stopped being true; with
    ``quote``, the words of the episode that state it follow. A fact over three or more entities (a
    hyperedge) names them all, from ``names`` (id → name)."""
    start = _date(fact.valid_at) or "unknown"
    ended = fact.invalid_at is not None and (now is None or fact.invalid_at <= now)
    end = _date(fact.invalid_at) if ended else "present"
    line = f"- {fact.fact}{_participants(fact, names or {})} (Date range: {start} - {end})"
    if fact.expired_at is not None and (now is None or fact.expired_at <= now):
        if fact.invalid_at is not None:
            line += f" [superseded: no longer true from {_date(fact.invalid_at)}]"
        else:
            line += f" [superseded: retracted on {_date(fact.expired_at)}]"
    elif ended:
        line += f" [ended: no longer true from {_date(fact.invalid_at)}]"
    if quote:
        line += f' [source: "{" ".join(quote.split())}"]'
    return line


def _participants(fact: Fact, names: Mapping[str, str]) -> str:
    if not fact.other_entity_ids:
        return ""
    return f" [participants: {', '.join(names.get(i, i) for i in dict.fromkeys(fact.entity_ids))}]"


def evidence_quotes(facts: Sequence[Fact], episodes: Sequence[Episode]) -> dict[str, str]:
    """fact id -> the text of its first evidence span whose episode is among ``episodes``."""
    texts = {e.id: e.text for e in episodes}
    quotes: dict[str, str] = {}
    for fact in facts:
        for span in fact.evidence:
            if span.episode_id in texts:
                quotes[fact.id] = texts[span.episode_id][span.start : span.end]
                break
    return quotes


def _entity_line(entity: Entity) -> str:
    summary = " ".join(entity.summary.split())
    return f"- {entity.name}: {summary}" if summary else f"- {entity.name}"


def _community_line(community: Community) -> str:
    summary = " ".join(community.summary.split())
    return f"- {community.name}: {summary}" if community.name else f"- {summary}"


def _episode_line(episode: Episode) -> str:
    return f"- ({_date(episode.reference_time)}) {' '.join(episode.text.split())}"


def _dedupe(lines: Sequence[str]) -> list[str]:
    """Keep the first (best ranked) of lines that say the same thing."""
    seen: set[str] = set()
    kept = []
    for line in lines:
        key = normalize_name(line)
        if key and key not in seen:
            seen.add(key)
            kept.append(line)
    return kept


def _fit(lines: Sequence[str], budget: int) -> tuple[list[str], int]:
    """The longest prefix of ``lines`` within ``budget`` tokens (a line that does not fit is
    skipped, so one long line does not hide the shorter ones after it)."""
    kept, used = [], 0
    for line in lines:
        cost = estimate_tokens(line) + 1
        if used + cost <= budget:
            kept.append(line)
            used += cost
    return kept, used


def _allocate(sections: dict[str, list[str]], budget: int) -> dict[str, list[str]]:
    """Two passes: each section first gets its share, then leftovers go to sections in order."""
    chosen: dict[str, list[str]] = {}
    used_total = 0
    for name, lines in sections.items():
        chosen[name], used = _fit(lines, int(budget * _SHARES[name]))
        used_total += used
    for name, lines in sections.items():
        rest = [line for line in lines if line not in chosen[name]]
        extra, used = _fit(rest, budget - used_total)
        used_total += used
        order = {line: i for i, line in enumerate(lines)}
        chosen[name] = sorted(chosen[name] + extra, key=order.__getitem__)
    return chosen


def build_context(
    facts: Sequence[Fact],
    entities: Sequence[Entity],
    communities: Sequence[Community] = (),
    episodes: Sequence[Episode] = (),
    *,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    now: datetime | None = None,
    quotes: Mapping[str, str] | None = None,
    names: Mapping[str, str] | None = None,
) -> str:
    """The paper's context string for already-ranked objects, within about ``token_budget`` tokens.

    ``now`` decides whether a fact's ``invalid_at`` is past ("to" date) or still ahead ("present").
    ``quotes`` (fact id -> the episode's words, :func:`evidence_quotes`) are shown after their facts;
    ``names`` (entity id → name) names the participants of hyperedges.
    Empty sections are left out; with nothing at all, the result is an empty string.
    """
    sections = {
        "facts": _dedupe([fact_line(f, now=now, quote=(quotes or {}).get(f.id), names=names) for f in facts]),
        "entities": _dedupe([_entity_line(e) for e in entities]),
        "communities": _dedupe([_community_line(c) for c in communities if c.summary or c.name]),
        "episodes": _dedupe([_episode_line(e) for e in episodes]),
    }
    if not any(sections.values()):
        return ""
    fixed = estimate_tokens(_HEADER + _ENTITY_INTRO) + 20  # intros and tags
    chosen = _allocate(sections, max(0, token_budget - fixed))
    parts = [_HEADER, "<FACTS>", *chosen["facts"], "</FACTS>", _ENTITY_INTRO, "<ENTITIES>"]
    parts += [*chosen["entities"], "</ENTITIES>"]
    if chosen["communities"]:
        parts += [_COMMUNITY_INTRO, "<COMMUNITIES>", *chosen["communities"], "</COMMUNITIES>"]
    if chosen["episodes"]:
        parts += [_EPISODE_INTRO, "<EPISODES>", *chosen["episodes"], "</EPISODES>"]
    return "\n".join(parts)
