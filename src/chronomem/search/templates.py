"""Named context templates: the context block in a form the caller chose (Zep's context templates).

A template is text with variables, each a section of the block::

    # ABOUT THE USER
    %{user_summary}
    # WHAT IS TRUE NOW
    %{edges limit=8 types=[WORKS_AT,LIVES_IN]}
    # PEOPLE AND PLACES
    %{entities limit=5 types=[Person]}
    %{episodes limit=3}

Variables: ``edges`` (or ``facts``), ``entities`` (or ``nodes``), ``episodes``, ``user_summary``,
``thread_summaries``. Each but ``user_summary`` takes ``limit=N`` (1–100) and ``types=[…]`` (relation
types for edges, labels for entities). The text around the variables is kept as written. Parsing
refuses unknown variables and parameters, so a template that was stored renders. Pure: retrieval
happens elsewhere; :func:`render_template` gets the ranked objects, and the evidence quotes of the
facts when the caller asked for them (each fact line then ends with ``[source: "…"]``, as in the
paper's block).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from chronomem.domain import Entity, Episode, Fact
from chronomem.errors import InvalidInputError
from chronomem.search.context import fact_line

__all__ = ["MAX_TEMPLATE_CHARS", "Section", "Template", "parse_template", "render_template"]

MAX_TEMPLATE_CHARS = 1_200
_DEFAULT_LIMIT = 10
_MAX_LIMIT = 100
_VARIABLE = re.compile(r"%\{\s*([a-z_]+)((?:\s+[a-z_]+=(?:\[[^\]]*\]|[^\s}]+))*)\s*\}")
_PARAM = re.compile(r"([a-z_]+)=(\[[^\]]*\]|[^\s}]+)")
_KINDS = {"edges": "facts", "facts": "facts", "entities": "entities", "nodes": "entities",
          "episodes": "episodes", "user_summary": "user_summary", "thread_summaries": "thread_summaries"}


@dataclass(frozen=True, slots=True)
class Section:
    kind: str  # facts | entities | episodes | user_summary | thread_summaries
    limit: int = _DEFAULT_LIMIT
    types: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed template: the literal text between variables, and the sections in order."""

    text: str
    pieces: tuple[str | Section, ...]

    def limit(self, kind: str) -> int:
        """How many objects of a kind the template shows at most (0: the kind is not in it)."""
        return max((p.limit for p in self.pieces if isinstance(p, Section) and p.kind == kind), default=0)


def _section(name: str, params: str) -> Section:
    kind = _KINDS.get(name)
    if kind is None:
        raise InvalidInputError(f"unknown template variable %{{{name}}}; use one of {sorted(_KINDS)}")
    limit, types = _DEFAULT_LIMIT, ()
    for key, value in _PARAM.findall(params):
        if key == "limit" and kind != "user_summary":
            if not value.isdigit() or not 1 <= int(value) <= _MAX_LIMIT:
                raise InvalidInputError(f"limit of %{{{name}}} must be 1-{_MAX_LIMIT}, got {value!r}")
            limit = int(value)
        elif key == "types" and kind in ("facts", "entities") and value.startswith("["):
            types = tuple(t.strip() for t in value[1:-1].split(",") if t.strip())
        else:
            raise InvalidInputError(f"%{{{name}}} does not take {key}={value}")
    return Section(kind, limit, types)


def parse_template(text: str) -> Template:
    """Parse (and so validate) a template's text."""
    if not text.strip() or len(text) > MAX_TEMPLATE_CHARS:
        raise InvalidInputError(f"a template needs 1-{MAX_TEMPLATE_CHARS} characters")
    pieces: list[str | Section] = []
    position = 0
    for match in _VARIABLE.finditer(text):
        pieces.append(text[position : match.start()])
        pieces.append(_section(match.group(1), match.group(2)))
        position = match.end()
    pieces.append(text[position:])
    if "%{" in "".join(p for p in pieces if isinstance(p, str)):
        raise InvalidInputError("the template has a malformed %{…} variable")
    return Template(text, tuple(p for p in pieces if p != ""))


def _episode_line(episode: Episode) -> str:
    return f"- ({episode.reference_time.strftime('%Y-%m-%d %H:%M:%SZ')}) {' '.join(episode.text.split())}"


def _entity_line(entity: Entity) -> str:
    summary = " ".join(entity.summary.split())
    return f"- {entity.name}: {summary}" if summary else f"- {entity.name}"


@dataclass(frozen=True, slots=True)
class _Found:
    """What the sections are filled from."""

    facts: Sequence[Fact]
    entities: Sequence[Entity]
    episodes: Sequence[Episode]
    summaries: Mapping[str, Sequence[str]]
    quotes: Mapping[str, str]
    now: datetime | None


def _lines(section: Section, found: _Found) -> list[str]:
    if section.kind == "facts":
        chosen = [f for f in found.facts if not section.types or f.relation_type in section.types]
        return [fact_line(f, now=found.now, quote=found.quotes.get(f.id)) for f in chosen[: section.limit]]
    entities, episodes, summaries = found.entities, found.episodes, found.summaries
    if section.kind == "entities":
        picked = [e for e in entities if not section.types or set(e.labels) & set(section.types)]
        return [_entity_line(e) for e in picked[: section.limit]]
    if section.kind == "episodes":
        return [_episode_line(e) for e in episodes[: section.limit]]
    texts = list(summaries.get(section.kind, ()))
    return texts if section.kind == "user_summary" else [f"- {t}" for t in texts[: section.limit]]


def render_template(
    template: Template,
    *,
    facts: Sequence[Fact] = (),
    entities: Sequence[Entity] = (),
    episodes: Sequence[Episode] = (),
    summaries: Mapping[str, Sequence[str]] | None = None,
    quotes: Mapping[str, str] | None = None,
    now: datetime | None = None,
) -> str:
    """The template with each variable replaced by its lines (ranked objects, best first).
    ``summaries`` holds the ``user_summary`` text and the ``thread_summaries`` lines; ``quotes``
    (fact id → the episode's words, :func:`chronomem.search.context.evidence_quotes`) follow their
    facts."""
    found = _Found(facts, entities, episodes, summaries or {}, quotes or {}, now)
    parts = []
    for piece in template.pieces:
        if isinstance(piece, str):
            parts.append(piece)
        else:
            parts.append("\n".join(_lines(piece, found)))
    return "".join(parts).strip()
