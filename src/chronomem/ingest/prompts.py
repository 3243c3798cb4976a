"""The ingestion prompts, each a function from a typed context to messages, beside its answer model.

They start from the paper's appendix (extract entities, resolve entities, extract facts, resolve
facts, extract dates) and differ where cost demanded it:

- dates are extracted in the fact-extraction call, not one call per fact;
- resolution is batched: one call answers every ambiguous entity, one every fact with candidates;
- candidates are numbered with small integers, not UUIDs: shorter prompts, no invented ids;
- ``COMBINED_EXTRACTION`` extracts entities and facts in one call (an option, measured in bench/).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, field_validator

from chronomem.domain import EpisodeKind
from chronomem.llm.base import Message, Prompt

__all__ = [
    "COMBINED_EXTRACTION",
    "ENTITY_EXTRACTION",
    "ENTITY_REFLEXION",
    "ENTITY_RESOLUTION",
    "FACT_EXTRACTION",
    "FACT_RESOLUTION",
    "SUMMARY_REWRITE",
    "CandidateEntity",
    "CandidateFact",
    "CombinedExtractionContext",
    "EntityExtractionContext",
    "EntityMatch",
    "EntityMatches",
    "EntityQuestion",
    "EntityRef",
    "EntityResolutionContext",
    "EpisodeText",
    "ExtractedEntities",
    "ExtractedEntity",
    "ExtractedFact",
    "ExtractedFacts",
    "ExtractedGraph",
    "FactExtractionContext",
    "FactQuestion",
    "FactResolutionContext",
    "FactVerdict",
    "FactVerdicts",
    "MissedEntities",
    "ReflexionContext",
    "RewrittenSummaries",
    "RewrittenSummary",
    "SummaryContext",
    "SummaryItem",
    "TypeSpec",
]

_JSON_ONLY = "Answer with one JSON object only, matching the schema given. No prose."


# -- shared context pieces ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EpisodeText:
    """The episode as the model sees it, with the previous episodes of its group for context."""

    current: str
    reference_time: datetime
    kind: EpisodeKind = EpisodeKind.MESSAGE
    previous: tuple[str, ...] = ()
    source_description: str = ""


@dataclass(frozen=True, slots=True)
class TypeSpec:
    """An entity or relation type of the ontology: its name, docstring and attribute fields."""

    name: str
    description: str
    fields: tuple[tuple[str, str, str], ...] = ()  # (name, type, description)
    signature: tuple[tuple[str, str], ...] = ()  # relations: allowed (source type, target type)


def _reference(moment: datetime) -> str:
    return f"{moment.strftime('%Y-%m-%dT%H:%M:%SZ')} ({moment.strftime('%A')})"


def _episode_block(episode: EpisodeText) -> str:
    previous = "\n".join(episode.previous) or "(none)"
    source = f"\n<SOURCE>{episode.source_description}</SOURCE>" if episode.source_description else ""
    return (
        f"<PREVIOUS MESSAGES>\n{previous}\n</PREVIOUS MESSAGES>\n"
        f"<CURRENT MESSAGE kind={episode.kind.value}>\n{episode.current}\n</CURRENT MESSAGE>{source}\n"
        f"<REFERENCE TIME>{_reference(episode.reference_time)}</REFERENCE TIME>"
    )


def _types_block(title: str, types: tuple[TypeSpec, ...]) -> str:
    if not types:
        return ""
    lines = []
    for spec in types:
        line = f"- {spec.name}: {spec.description}"
        if spec.signature:
            line += " Joins " + ", ".join(f"{s}->{t}" for s, t in spec.signature) + "."
        for name, kind, description in spec.fields:
            line += f"\n    attribute {name} ({kind}): {description}"
        lines.append(line)
    return f"<{title}>\n" + "\n".join(lines) + f"\n</{title}>\n"


def _first_subject(kind: EpisodeKind) -> str:
    if kind is EpisodeKind.MESSAGE:
        return "Always extract the speaker (the part before the colon) as the first entity."
    if kind is EpisodeKind.JSON:
        return "Extract the entity the record is about first, then the entities its fields name."
    return "Extract the main actor of the text first."


# -- entity extraction -------------------------------------------------------------------------------


MAX_ALIASES = 5  # names the text gives one entity; more is a model listing everything it sees


class ExtractedEntity(BaseModel):
    name: str = Field(min_length=1)
    type: str = "Entity"
    # other names the episode itself gives the entity ("International Business Machines (IBM)");
    # resolution accepts one only where the episode contains it (``stages.entities``)
    aliases: list[str] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(default_factory=dict)

    @field_validator("aliases", mode="before")
    @classmethod
    def _bounded_aliases(cls, value: Any) -> Any:
        """Trimmed, blanks and over-long strings dropped, at most ``MAX_ALIASES``: extra ones are
        cut rather than failing the whole answer (a retry would cost a call)."""
        if not isinstance(value, list):
            return value
        kept = [a.strip() for a in value if isinstance(a, str) and 0 < len(a.strip()) <= 100]
        return list(dict.fromkeys(kept))[:MAX_ALIASES]


class ExtractedEntities(BaseModel):
    entities: list[ExtractedEntity] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class EntityExtractionContext:
    episode: EpisodeText
    entity_types: tuple[TypeSpec, ...] = ()
    instructions: str = ""


def _entity_guidelines(kind: EpisodeKind, entity_types: tuple[TypeSpec, ...]) -> str:
    typing = (
        "Give each entity the most specific type listed in ENTITY TYPES (or Entity), and the attributes "
        "of that type the text states; never guess attributes."
        if entity_types
        else 'Use type "Entity".'
    )
    return (
        "Extract the entities explicitly or implicitly mentioned in the CURRENT MESSAGE.\n"
        f"1. {_first_subject(kind)}\n"
        "2. Extract other significant entities, concepts or actors of the CURRENT MESSAGE.\n"
        "3. Do not create nodes for relationships or actions.\n"
        "4. Do not create nodes for dates, times or years (they become fact timestamps later).\n"
        "5. Be as specific as possible; use full names.\n"
        "6. Do not extract entities mentioned only in PREVIOUS MESSAGES.\n"
        f"7. {typing}\n"
        '8. aliases: other names the CURRENT MESSAGE gives it ("Robert (Bob) Smith", "IBM, formerly ..."), else [].'
    )


def _entity_schema(entity_types: tuple[TypeSpec, ...]) -> str:
    """One extracted entity's JSON shape; attributes only where a type declares some to fill."""
    attributes = ', "attributes": {}' if entity_types else ""
    return f'{{"name": str, "type": str, "aliases": [str]{attributes}}}'


def _build_entity_extraction(ctx: EntityExtractionContext) -> list[Message]:
    schema = f'{{"entities": [{_entity_schema(ctx.entity_types)}]}}'
    system = f"You extract entity nodes from conversations and documents for a knowledge graph. {_JSON_ONLY}"
    user = (
        f"{_episode_block(ctx.episode)}\n{_types_block('ENTITY TYPES', ctx.entity_types)}"
        f"{_entity_guidelines(ctx.episode.kind, ctx.entity_types)}\n{ctx.instructions}\nSchema: {schema}"
    )
    return [Message("system", system), Message("user", user.strip())]


ENTITY_EXTRACTION: Prompt[EntityExtractionContext, ExtractedEntities] = Prompt(
    name="extract_entities",
    answer=ExtractedEntities,
    build=_build_entity_extraction,
    max_output_tokens=600,
    role="extraction",
)


# -- reflexion: which entities were missed? ----------------------------------------------------------


class MissedEntities(BaseModel):
    missed: list[ExtractedEntity] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ReflexionContext:
    episode: EpisodeText
    extracted: tuple[str, ...]


def _build_reflexion(ctx: ReflexionContext) -> list[Message]:
    user = (
        f"{_episode_block(ctx.episode)}\n<EXTRACTED ENTITIES>\n"
        + "\n".join(ctx.extracted)
        + "\n</EXTRACTED ENTITIES>\n"
        "Which significant entities of the CURRENT MESSAGE are missing from EXTRACTED ENTITIES? Same rules: "
        "no dates, no relations or actions. Answer an empty list if none.\n"
        'Schema: {"missed": [{"name": str, "type": str, "aliases": [str], "attributes": {}}]}'
    )
    return [Message("system", f"You review entity extraction. {_JSON_ONLY}"), Message("user", user)]


ENTITY_REFLEXION: Prompt[ReflexionContext, MissedEntities] = Prompt(
    name="entity_reflexion", answer=MissedEntities, build=_build_reflexion, max_output_tokens=400, role="extraction"
)


# -- fact extraction (with dates) --------------------------------------------------------------------


class ExtractedFact(BaseModel):
    source: str = Field(min_length=1)
    relation_type: str = "RELATES_TO"
    target: str = Field(min_length=1)
    fact: str = Field(min_length=1)
    quote: str | None = None  # the words of the CURRENT MESSAGE that state it (checked: grounding.py)
    valid_at: str | None = None
    invalid_at: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    # further participants of a fact over three or more entities (a hyperedge, paper §2.2.2)
    others: list[str] = Field(default_factory=list)
    # resolution folded into extraction: numbers of the EXISTING FACTS shown in the prompt
    duplicate_of: int | None = None
    contradicts: list[int] = Field(default_factory=list)


class ExtractedFacts(BaseModel):
    facts: list[ExtractedFact] = Field(default_factory=list)
    same_as: list[EntityMatch] = Field(default_factory=list)  # answers about POSSIBLE DUPLICATES


@dataclass(frozen=True, slots=True)
class EntityRef:
    name: str
    type: str = "Entity"


@dataclass(frozen=True, slots=True)
class FactExtractionContext:
    """Facts of the episode; with ``existing`` facts and ``ambiguous`` entities, resolution rides along.

    Folding both resolutions into this call is what keeps ingestion at about two calls per episode:
    the batched resolution calls are then needed only for candidates the model was not shown.
    """

    episode: EpisodeText
    entities: tuple[EntityRef, ...]
    edge_types: tuple[TypeSpec, ...] = ()
    instructions: str = ""
    existing: tuple[CandidateFact, ...] = ()  # current facts of these entities, near the episode
    ambiguous: tuple[EntityQuestion, ...] = ()  # extracted names that may be existing entities


_FACT_SCHEMA = (
    '{"source": str, "relation_type": str, "target": str, "fact": str, "quote": str, '
    '"valid_at": str|null, "invalid_at": str|null, "attributes": {}, "others": [str]}'
)

_FACT_GUIDELINES = (
    "Extract the facts the CURRENT MESSAGE states between the ENTITIES.\n"
    "1. Only facts between two different listed entities; source and target are entity names as listed. "
    "A fact that joins more entities (Alice sold the car to Bob for Carol) lists the rest in others.\n"
    "2. relation_type is a short SCREAMING_SNAKE_CASE predicate (LOVES, IS_FRIENDS_WITH, WORKS_FOR){edge_rule}.\n"
    "3. fact is a self-contained sentence with every relevant detail (resolve pronouns to names); quote is the "
    "shortest span of the CURRENT MESSAGE, copied word for word, that states it.\n"
    "Dates, as ISO 8601 (YYYY-MM-DDTHH:MM:SSZ), only when they are part of the fact:\n"
    "4. valid_at: when the relationship became true; invalid_at: when it stopped being true; else null.\n"
    "5. Resolve relative dates ('two weeks ago', 'next Thursday', 'last summer') against REFERENCE TIME.\n"
    "6. A fact stated in the present tense with no date is valid from REFERENCE TIME.\n"
    "7. A date without a time is 00:00:00; a year alone is January 1 of that year.\n"
    "8. Do not infer dates from related events."
)


def _fact_guidelines(edge_types: tuple[TypeSpec, ...]) -> str:
    edge_rule = "; prefer a name listed in RELATION TYPES when it fits, with its attributes" if edge_types else ""
    return _FACT_GUIDELINES.replace("{edge_rule}", edge_rule)


_FOLDED_FACTS = (
    "For each fact, duplicate_of: the EXISTING FACT (number) between the same two entities that states the "
    "same information, else null; contradicts: the EXISTING FACTS it makes no longer true (a changed state: a "
    "new employer, a move), else []. Facts that can both be true never contradict."
)
_FOLDED_ENTITIES = (
    "For each POSSIBLE DUPLICATE, give in same_as whether the NEW name is the same real-world entity as one of "
    "its existing candidates (duplicate_of: the existing number, name: the most complete full name) or not "
    "(duplicate_of: null). Refer to entities by the names listed in ENTITIES."
)


def _build_fact_extraction(ctx: FactExtractionContext) -> list[Message]:
    entities = "\n".join(f"- {e.name} ({e.type})" for e in ctx.entities)
    folded, schema = "", f'"facts": [{_FACT_SCHEMA}]'
    if ctx.existing:
        existing = "\n".join(
            f"{c.index}: {c.relation_type}: {c.fact}{_span(c.valid_at, c.invalid_at)}" for c in ctx.existing
        )
        folded += f"<EXISTING FACTS>\n{existing}\n</EXISTING FACTS>\n{_FOLDED_FACTS}\n"
        schema = schema[:-2] + ', "duplicate_of": int|null, "contradicts": [int]}]'
    if ctx.ambiguous:
        questions = "\n".join(_render_entity_question(q) for q in ctx.ambiguous)
        folded += f"<POSSIBLE DUPLICATES>\n{questions}\n</POSSIBLE DUPLICATES>\n{_FOLDED_ENTITIES}\n"
        schema += ', "same_as": [{"index": int, "duplicate_of": int|null, "name": str|null}]'
    user = (
        f"{_episode_block(ctx.episode)}\n<ENTITIES>\n{entities}\n</ENTITIES>\n"
        f"{_types_block('RELATION TYPES', ctx.edge_types)}{_fact_guidelines(ctx.edge_types)}\n{folded}"
        f"{ctx.instructions}\nSchema: {{{schema}}}"
    )
    system = f"You extract dated facts between entities for a temporal knowledge graph. {_JSON_ONLY}"
    return [Message("system", system), Message("user", user.strip())]


FACT_EXTRACTION: Prompt[FactExtractionContext, ExtractedFacts] = Prompt(
    name="extract_facts",
    answer=ExtractedFacts,
    build=_build_fact_extraction,
    max_output_tokens=1200,
    role="extraction",
)


# -- combined extraction: entities and facts in one call ---------------------------------------------


class ExtractedGraph(BaseModel):
    entities: list[ExtractedEntity] = Field(default_factory=list)
    facts: list[ExtractedFact] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CombinedExtractionContext:
    episode: EpisodeText
    entity_types: tuple[TypeSpec, ...] = ()
    edge_types: tuple[TypeSpec, ...] = ()
    instructions: str = ""


def _build_combined(ctx: CombinedExtractionContext) -> list[Message]:
    kind = ctx.episode.kind
    user = (
        f"{_episode_block(ctx.episode)}\n{_types_block('ENTITY TYPES', ctx.entity_types)}"
        f"{_types_block('RELATION TYPES', ctx.edge_types)}"
        f"First, entities:\n{_entity_guidelines(kind, ctx.entity_types)}\n"
        f"Then, facts between those entities:\n{_fact_guidelines(ctx.edge_types)}\n{ctx.instructions}\n"
        'Schema: {"entities": [' + _entity_schema(ctx.entity_types) + "], "
        f'"facts": [{_FACT_SCHEMA}]}}'
    )
    system = f"You build a temporal knowledge graph: entities, then dated facts between them. {_JSON_ONLY}"
    return [Message("system", system), Message("user", user.strip())]


COMBINED_EXTRACTION: Prompt[CombinedExtractionContext, ExtractedGraph] = Prompt(
    name="extract_graph",
    answer=ExtractedGraph,
    build=_build_combined,
    max_output_tokens=1800,
    role="extraction",
)


# -- entity resolution, batched ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CandidateEntity:
    index: int
    name: str
    summary: str = ""


@dataclass(frozen=True, slots=True)
class EntityQuestion:
    index: int
    name: str
    type: str
    candidates: tuple[CandidateEntity, ...]


@dataclass(frozen=True, slots=True)
class EntityResolutionContext:
    episode: EpisodeText
    questions: tuple[EntityQuestion, ...]


class EntityMatch(BaseModel):
    index: int
    duplicate_of: int | None = None
    name: str | None = None  # the most complete full name, when it is a duplicate


class EntityMatches(BaseModel):
    matches: list[EntityMatch] = Field(default_factory=list)


def _render_entity_question(question: EntityQuestion) -> str:
    lines = [f"NEW {question.index}: {question.name} ({question.type})"]
    for c in question.candidates:
        summary = f" — {c.summary}" if c.summary else ""
        lines.append(f"  existing {c.index}: {c.name}{summary}")
    return "\n".join(lines)


def _build_entity_resolution(ctx: EntityResolutionContext) -> list[Message]:
    questions = "\n".join(_render_entity_question(q) for q in ctx.questions)
    user = (
        f"{_episode_block(ctx.episode)}\n<NEW NODES WITH EXISTING CANDIDATES>\n{questions}\n"
        "</NEW NODES WITH EXISTING CANDIDATES>\n"
        "For each NEW node, decide whether it is the same real-world entity as one of its existing candidates. "
        "Names of duplicates may differ (nicknames, partial names); use names, summaries and the messages. "
        "If it is a duplicate give duplicate_of (the existing number) and name (the most complete full name); "
        "otherwise duplicate_of is null.\n"
        'Schema: {"matches": [{"index": int, "duplicate_of": int|null, "name": str|null}]}'
    )
    return [Message("system", f"You deduplicate knowledge-graph entities. {_JSON_ONLY}"), Message("user", user)]


ENTITY_RESOLUTION: Prompt[EntityResolutionContext, EntityMatches] = Prompt(
    name="resolve_entities",
    answer=EntityMatches,
    build=_build_entity_resolution,
    max_output_tokens=500,
    role="resolution",
)


# -- fact resolution, batched: duplicates and contradictions -----------------------------------------


@dataclass(frozen=True, slots=True)
class CandidateFact:
    index: int
    fact: str
    relation_type: str
    same_pair: bool  # between the same two entities (may be a duplicate); else only a contradiction
    valid_at: datetime | None = None
    invalid_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class FactQuestion:
    index: int
    fact: str
    relation_type: str
    candidates: tuple[CandidateFact, ...]
    valid_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class FactResolutionContext:
    questions: tuple[FactQuestion, ...]


class FactVerdict(BaseModel):
    index: int
    duplicate_of: int | None = None
    contradicts: list[int] = Field(default_factory=list)


class FactVerdicts(BaseModel):
    verdicts: list[FactVerdict] = Field(default_factory=list)


def _span(valid_at: datetime | None, invalid_at: datetime | None) -> str:
    if valid_at is None and invalid_at is None:
        return ""
    start = valid_at.date().isoformat() if valid_at else "?"
    end = invalid_at.date().isoformat() if invalid_at else "now"
    return f" [{start} .. {end}]"


def _render_fact_question(question: FactQuestion) -> str:
    lines = [f"NEW {question.index}: {question.relation_type}: {question.fact}{_span(question.valid_at, None)}"]
    for c in question.candidates:
        mark = "same pair" if c.same_pair else "shares an entity"
        lines.append(f"  existing {c.index} ({mark}): {c.relation_type}: {c.fact}{_span(c.valid_at, c.invalid_at)}")
    return "\n".join(lines)


def _build_fact_resolution(ctx: FactResolutionContext) -> list[Message]:
    questions = "\n".join(_render_fact_question(q) for q in ctx.questions)
    user = (
        f"<NEW FACTS WITH EXISTING FACTS>\n{questions}\n</NEW FACTS WITH EXISTING FACTS>\n"
        "For each NEW fact:\n"
        "1. duplicate_of: the 'same pair' existing fact that states the same information (wording may "
        "differ), else null.\n"
        "2. contradicts: the existing facts the NEW fact makes no longer true (a changed state: a new "
        "employer, a move, a break-up). Facts that can both be true do not contradict; a different topic "
        "never contradicts. Empty list if none.\n"
        'Schema: {"verdicts": [{"index": int, "duplicate_of": int|null, "contradicts": [int]}]}'
    )
    system = f"You maintain a temporal knowledge graph: you find duplicate and superseded facts. {_JSON_ONLY}"
    return [Message("system", system), Message("user", user)]


FACT_RESOLUTION: Prompt[FactResolutionContext, FactVerdicts] = Prompt(
    name="resolve_facts",
    answer=FactVerdicts,
    build=_build_fact_resolution,
    max_output_tokens=500,
    role="resolution",
)


# -- summary rewrite, batched ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SummaryItem:
    index: int
    name: str
    summary: str


@dataclass(frozen=True, slots=True)
class SummaryContext:
    items: tuple[SummaryItem, ...]
    target_chars: int


class RewrittenSummary(BaseModel):
    index: int
    summary: str


class RewrittenSummaries(BaseModel):
    summaries: list[RewrittenSummary] = Field(default_factory=list)


def _build_summary_rewrite(ctx: SummaryContext) -> list[Message]:
    items = "\n".join(f"ENTITY {i.index}: {i.name}\n{i.summary}" for i in ctx.items)
    user = (
        f"<ENTITIES>\n{items}\n</ENTITIES>\n"
        f"Rewrite each entity's summary in at most {ctx.target_chars} characters. Keep the most important and "
        "most recent facts, names and dates; drop repetition. Use only what the summary says.\n"
        'Schema: {"summaries": [{"index": int, "summary": str}]}'
    )
    return [Message("system", f"You condense entity summaries. {_JSON_ONLY}"), Message("user", user)]


SUMMARY_REWRITE: Prompt[SummaryContext, RewrittenSummaries] = Prompt(
    name="rewrite_summaries",
    answer=RewrittenSummaries,
    build=_build_summary_rewrite,
    max_output_tokens=1500,
    role="summary",
)
