"""The ingestion prompts, each a function from a typed context to messages, beside its answer model.

They start from the paper's appendix (extract entities, resolve entities, extract facts, resolve
facts, extract dates) and differ where cost demanded it:

- dates are extracted in the fact-extraction call, not one call per fact;
- resolution is batched: one call answers every ambiguous entity, one every fact with candidates;
- candidates are numbered with small integers, not UUIDs: shorter prompts, no invented ids;
- ``COMBINED_EXTRACTION`` extracts entities and facts in one call (an option, measured in bench/);
- ``END_REVIEW`` asks which current facts a message ends: the paper leaves that to the per-fact
  resolution, where a change that reads nothing like the fact it ends is never offered;
- every prompt is a static prefix (the system message: role, rules, schema, then the ontology's
  types), byte-identical across episodes and groups with the same ontology, followed by the data
  (the user message). Providers with prompt caching (llama.cpp's RAM cache, vLLM, OpenAI, Anthropic)
  then evaluate the instructions once instead of on every call; nothing that varies per call (a
  date, a name, a count) may enter the system message (tests/ingest/test_prompt_prefixes.py).

Every answer is bounded (docs/design.md §5, :mod:`chronomem.llm.budget`): each list has a most items, each
string a longest length, attributes are a map of at most a few short scalar values; each prompt
tightens the counts from its context (one verdict per question shown, attributes only as many as
the declared types have, facts scaled to the episode). So the output cap sent is what the longest
valid answer needs, and a grammar-constrained local model cannot loop past it. The bounds live in
the answer schema only: code that builds these models itself (a JSON mapping, ``add_fact``) may
state more, and longer, than a model may answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field, WithJsonSchema, field_validator

from chronomem.domain import EpisodeKind
from chronomem.llm.base import Message, Prompt
from chronomem.llm.budget import text_bound

__all__ = [
    "COMBINED_EXTRACTION",
    "END_REVIEW",
    "ENTITY_EXTRACTION",
    "ENTITY_REFLEXION",
    "ENTITY_RESOLUTION",
    "FACT_EXTRACTION",
    "FACT_RESOLUTION",
    "SUMMARY_REWRITE",
    "CandidateEntity",
    "CandidateFact",
    "CombinedExtractionContext",
    "EndReviewContext",
    "EndedFact",
    "EndedFacts",
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


# -- bounds of the answers ---------------------------------------------------------------------------
# Generous (a real answer comes nowhere near them): they exist to end a looping model, not to edit
# a sound one. Past a list's bound the first items are kept and the rest counted (llm/parsing.py).

NAME_CHARS = 200  # an entity name, a fact's source or target
TYPE_CHARS = 64  # an entity type, a relation type, an attribute name
TEXT_CHARS = 500  # a fact sentence, its quote
DATE_CHARS = 40  # an ISO 8601 timestamp is 20
VALUE_CHARS = 300  # an attribute value
MAX_ATTRIBUTES = 16
MAX_ENTITIES = 40
MAX_FACTS = 40
MAX_NUMBERS = 20  # numbers of shown facts or candidates one item may name
MAX_QUESTIONS = 40  # questions of a batched resolution call (each answered once)
SUMMARY_CHARS = 4000


Name = Annotated[str, text_bound(NAME_CHARS, 1)]
TypeName = Annotated[str, text_bound(TYPE_CHARS)]
Text = Annotated[str, text_bound(TEXT_CHARS, 1)]
Date = Annotated[str, text_bound(DATE_CHARS)]
Quote = Annotated[str, text_bound(TEXT_CHARS)]
# the numbers a prompt shows (facts, candidates, questions) are small: three digits, not int64's 20
Number = Annotated[int, WithJsonSchema({"type": "integer", "minimum": 0, "maximum": 999})]

# attributes: a map of short scalar values. The ontology validates and converts each one
# (ontology.py); with no declared attributes the map must be empty (``{}``, see llm/budget.py).
_ATTRIBUTES_SCHEMA: dict[str, Any] = {
    "maxProperties": MAX_ATTRIBUTES,
    "propertyNames": {"maxLength": TYPE_CHARS},
    "additionalProperties": {
        "anyOf": [{"type": "string", "maxLength": VALUE_CHARS}, {"type": "number"}, {"type": "boolean"},
                  {"type": "null"}],
    },
}


def _attributes() -> Any:
    return Field(default_factory=dict, json_schema_extra=_ATTRIBUTES_SCHEMA)


def _at_most(items: int) -> Any:
    return Field(default_factory=list, json_schema_extra={"maxItems": items})


def _most_fields(types: tuple[TypeSpec, ...]) -> int:
    return max((len(spec.fields) for spec in types), default=0)


def entities_allowed(episode: EpisodeText) -> int:
    """The most entities an answer about ``episode`` may list: each is named in it (about one per
    ten characters at the densest, "Ann, Bob, Cy"), plus the speaker."""
    return min(MAX_ENTITIES, 2 + len(episode.current) // 10)


def _name_chars(episode: EpisodeText) -> int:
    # a name is written in the messages (the current one, or a previous one for its full form)
    return min(NAME_CHARS, max(len(text) for text in (episode.current, *episode.previous)))


def _episode_strings(episode: EpisodeText, model: str, *fields: str) -> dict[str, int]:
    return {f"{model}.{name}": _name_chars(episode) for name in fields}


def facts_allowed(episode: EpisodeText) -> int:
    """The most facts an answer about ``episode`` may list: each quotes it; one short sentence can
    state two or three ("Ann and Bob work at Acme")."""
    return min(MAX_FACTS, 2 + len(episode.current) // 12)


# -- shared context pieces ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EpisodeText:
    """The episode as the model sees it, with the previous episodes of its group for context."""

    current: str
    reference_time: datetime
    kind: EpisodeKind = EpisodeKind.MESSAGE
    previous: tuple[str, ...] = ()
    source_description: str = ""
    speaker: str | None = None  # a message's speaker: the "I" of its text


@dataclass(frozen=True, slots=True)
class TypeSpec:
    """An entity or relation type of the ontology: its name, docstring and attribute fields."""

    name: str
    description: str
    fields: tuple[tuple[str, str, str], ...] = ()  # (name, type, description)
    signature: tuple[tuple[str, str], ...] = ()  # relations: allowed (source type, target type)


def _reference(moment: datetime) -> str:
    return f"{moment.strftime('%Y-%m-%dT%H:%M:%SZ')} ({moment.strftime('%A')})"


def _static(role: str, rules: str, schema: str, *ontology: str) -> Message:
    """The system message: what is the same on every call of a prompt (for one ontology)."""
    parts = [f"{role} {_JSON_ONLY}", rules.strip(), f"Schema: {schema}", *(o.strip() for o in ontology if o)]
    return Message("system", "\n".join(parts))


def _data(*parts: str) -> Message:
    """The user message: the call's own data, after the static prefix."""
    return Message("user", "\n".join(p.strip() for p in parts if p and p.strip()))


def _instructions(text: str) -> str:
    return f"<INSTRUCTIONS>\n{text.strip()}\n</INSTRUCTIONS>" if text.strip() else ""


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


# One rule for every kind of episode (the CURRENT MESSAGE says its kind), so that the instructions
# stay one static prefix when messages, documents and records alternate.
_FIRST_SUBJECT = (
    "Extract first: for a message, the speaker (the part before the colon); for a JSON record, the entity "
    "the record is about, then the entities its fields name; for a text, its main actor."
)


# -- entity extraction -------------------------------------------------------------------------------


MAX_ALIASES = 5  # names the text gives one entity; more is a model listing everything it sees


class ExtractedEntity(BaseModel):
    name: Name = Field(min_length=1)
    type: TypeName = "Entity"
    # other names the episode itself gives the entity ("International Business Machines (IBM)");
    # resolution accepts one only where the episode contains it (``stages.entities``)
    aliases: list[Name] = _at_most(MAX_ALIASES)
    attributes: dict[str, Any] = _attributes()
    # what the CURRENT MESSAGE says about the entity, one sentence: the note its summary grows by
    # (chronomem.ingest.summaries), written in this call so that summaries cost no call of their own
    summary: Quote = ""

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
    entities: list[ExtractedEntity] = _at_most(MAX_ENTITIES)


@dataclass(frozen=True, slots=True)
class EntityExtractionContext:
    episode: EpisodeText
    entity_types: tuple[TypeSpec, ...] = ()
    instructions: str = ""
    notes: bool = True  # ask for each entity's summary note (IngestConfig.entity_notes)


_SUMMARY_RULE = (
    "summary: one sentence, what the CURRENT MESSAGE says about the entity (names, not pronouns; dates "
    "resolved against REFERENCE TIME); only what it says."
)


def _entity_guidelines(entity_types: tuple[TypeSpec, ...], *, notes: bool) -> str:
    typing = (
        "Give each entity the most specific type listed in ENTITY TYPES (or Entity), and the attributes "
        "of that type the text states; never guess attributes."
        if entity_types
        else 'Use type "Entity".'
    )
    # the rule that differs by ontology comes last, so the rest is a prefix every group shares
    return (
        "Extract the entities explicitly or implicitly mentioned in the CURRENT MESSAGE.\n"
        "1. Extract significant entities, concepts or actors.\n"
        "2. No nodes for relationships, actions, dates, times or years (dates become fact timestamps).\n"
        "3. Be as specific as possible; use full names.\n"
        "4. Do not extract entities mentioned only in PREVIOUS MESSAGES.\n"
        '5. aliases: other names the CURRENT MESSAGE gives it ("Robert (Bob) Smith", "IBM, formerly ..."), else [].\n'
        + (f"6. {_SUMMARY_RULE}\n7. {_FIRST_SUBJECT}\n8. {typing}" if notes else f"6. {_FIRST_SUBJECT}\n7. {typing}")
    )


def _entity_schema(entity_types: tuple[TypeSpec, ...], *, notes: bool) -> str:
    """One extracted entity's JSON shape; attributes only where a type declares some to fill."""
    attributes = ', "attributes": {}' if entity_types else ""
    summary = ', "summary": str' if notes else ""
    return f'{{"name": str, "type": str, "aliases": [str]{attributes}{summary}}}'


def _build_entity_extraction(ctx: EntityExtractionContext) -> list[Message]:
    example = _ENTITY_EXAMPLE if ctx.notes else _ENTITY_EXAMPLE_WITHOUT_NOTES
    return [
        _static("You extract entity nodes from conversations and documents for a knowledge graph.",
                _entity_guidelines(ctx.entity_types, notes=ctx.notes),
                f'{{"entities": [{_entity_schema(ctx.entity_types, notes=ctx.notes)}]}}\n{example}',
                _types_block("ENTITY TYPES", ctx.entity_types)),
        _data(_instructions(ctx.instructions), _episode_block(ctx.episode)),
    ]


def _entity_limits(ctx: EntityExtractionContext) -> dict[str, int]:
    return {"ExtractedEntities.entities": entities_allowed(ctx.episode),
            "ExtractedEntity.attributes": _most_fields(ctx.entity_types),
            **_episode_strings(ctx.episode, "ExtractedEntity", "name")}


ENTITY_EXTRACTION: Prompt[EntityExtractionContext, ExtractedEntities] = Prompt(
    name="extract_entities",
    answer=ExtractedEntities,
    build=_build_entity_extraction,
    max_output_tokens=600,
    role="extraction",
    limits=_entity_limits,
    keeps_complete_items=True,  # each entity stands alone: a runaway list keeps what came first
)


# -- reflexion: which entities were missed? ----------------------------------------------------------


class MissedEntities(BaseModel):
    missed: list[ExtractedEntity] = _at_most(MAX_ENTITIES)


@dataclass(frozen=True, slots=True)
class ReflexionContext:
    episode: EpisodeText
    extracted: tuple[str, ...]
    entity_types: tuple[TypeSpec, ...] = ()  # the attributes a missed entity may carry


def _build_reflexion(ctx: ReflexionContext) -> list[Message]:
    rules = (
        "Which significant entities of the CURRENT MESSAGE are missing from EXTRACTED ENTITIES? No dates, no "
        f"relations or actions. Answer an empty list if none. {_SUMMARY_RULE}"
    )
    extracted = "\n".join(ctx.extracted)
    return [
        _static("You review entity extraction.", rules,
                f'{{"missed": [{_entity_schema(ctx.entity_types, notes=True)}]}}'),
        _data(_episode_block(ctx.episode), f"<EXTRACTED ENTITIES>\n{extracted}\n</EXTRACTED ENTITIES>"),
    ]


def _reflexion_limits(ctx: ReflexionContext) -> dict[str, int]:
    missing = max(0, entities_allowed(ctx.episode) - len(ctx.extracted))
    return {"MissedEntities.missed": missing, "ExtractedEntity.attributes": _most_fields(ctx.entity_types),
            **_episode_strings(ctx.episode, "ExtractedEntity", "name")}


ENTITY_REFLEXION: Prompt[ReflexionContext, MissedEntities] = Prompt(
    name="entity_reflexion", answer=MissedEntities, build=_build_reflexion, max_output_tokens=400,
    role="extraction", limits=_reflexion_limits, keeps_complete_items=True,
)


# -- fact extraction (with dates) --------------------------------------------------------------------


class ExtractedFact(BaseModel):
    source: Name = Field(min_length=1)
    relation_type: TypeName = "RELATES_TO"
    target: Name = Field(min_length=1)
    fact: Text = Field(min_length=1)
    quote: Quote | None = None  # the words of the CURRENT MESSAGE that state it (checked: grounding.py)
    valid_at: Date | None = None
    invalid_at: Date | None = None
    attributes: dict[str, Any] = _attributes()
    # further participants of a fact over three or more entities (a hyperedge, paper §2.2.2)
    others: list[Name] = _at_most(MAX_NUMBERS)
    # resolution folded into extraction: numbers of the EXISTING FACTS shown in the prompt
    duplicate_of: Number | None = None
    contradicts: list[Number] = _at_most(MAX_NUMBERS)
    # EARLIER facts of this same answer (1 = its first) that this one makes no longer true: a
    # correction or a change within one episode; the later statement wins (stages/facts.py)
    supersedes: list[Number] = _at_most(MAX_NUMBERS)


class ExtractedFacts(BaseModel):
    facts: list[ExtractedFact] = _at_most(MAX_FACTS)
    same_as: list[EntityMatch] = _at_most(MAX_QUESTIONS)  # answers about POSSIBLE DUPLICATES


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
    # the ENTITIES each sentence of the message names together, in reading order
    pairs: tuple[tuple[str, str], ...] = ()


_FACT_SCHEMA = (
    '{"source": str, "relation_type": str, "target": str, "fact": str, "quote": str, '
    '"valid_at": str|null, "invalid_at": str|null, "attributes": {}, "others": [str], "supersedes": [int]}'
)

_FACT_GUIDELINES = (
    "Extract the facts the CURRENT MESSAGE states between the ENTITIES.\n"
    "1. source and target: two different ENTITIES, as listed; a fact joining more (Alice sold the car to Bob "
    "for Carol) lists the rest in others.\n"
    "2. relation_type: a short SCREAMING_SNAKE_CASE predicate (LOVES, WORKS_FOR).\n"
    "3. fact: a self-contained sentence in the third person with every relevant detail: the speaker's name "
    "for I/me/my, names for pronouns; quote: the shortest span of the CURRENT MESSAGE that states it, copied "
    "word for word.\n"
    "4. valid_at / invalid_at: when it became / stopped being true, ISO 8601 (YYYY-MM-DDTHH:MM:SSZ), only "
    "when part of the fact, else null. Resolve relative dates ('two weeks ago', 'next Thursday', 'last "
    "summer') against REFERENCE TIME. Present tense with no date: valid from REFERENCE TIME. A date alone is "
    "00:00:00, a year alone January 1. Never infer dates from related events. Something that ended (a job "
    "left, a medicine stopped, a move away, a break-up, a cancelled plan) is the relation that held, with "
    "invalid_at when it ended (WORKS_AT with invalid_at, not a new LEFT relation).\n"
    "5. supersedes: numbers (1 = first) of your earlier facts this one ends (a correction, a change), else [].\n"
    "6. Every fact the CURRENT MESSAGE states: one sentence often states several (who, what, where, since "
    "when), each its own fact. NAMED TOGETHER lists the pairs of ENTITIES each sentence names (the speaker "
    "stands for I/me/my): work through it and give a fact for every pair its sentence relates."
)

# Worked examples, in the static prefix: with a provider's prompt cache they cost nothing after the
# first call, and they show what rules alone do not (third person, several facts from one sentence,
# an ended relation, a resolved date) to small models and large ones alike.
_ENTITY_EXAMPLE = (
    "Example. CURRENT MESSAGE: \"Lena Ortiz: My brother Sam moved to Denver for a job at Pixel Labs.\"\n"
    'Answer: {"entities": [{"name": "Lena Ortiz", "type": "Entity", "aliases": [], "summary": "Lena Ortiz\'s '
    'brother is Sam."}, {"name": "Sam", "type": "Entity", "aliases": [], "summary": "Sam, Lena Ortiz\'s brother, '
    'moved to Denver for a job at Pixel Labs."}, {"name": "Denver", "type": "Entity", "aliases": [], "summary": '
    '"Sam moved to Denver."}, {"name": "Pixel Labs", "type": "Entity", "aliases": [], "summary": "Sam works at '
    'Pixel Labs."}]}'
)
_ENTITY_EXAMPLE_WITHOUT_NOTES = (
    "Example. CURRENT MESSAGE: \"Lena Ortiz: My brother Sam moved to Denver for a job at Pixel Labs.\"\n"
    'Answer: {"entities": [{"name": "Lena Ortiz", "type": "Entity", "aliases": []}, {"name": "Sam", "type": '
    '"Entity", "aliases": []}, {"name": "Denver", "type": "Entity", "aliases": []}, {"name": "Pixel Labs", '
    '"type": "Entity", "aliases": []}]}'
)
_FACT_EXAMPLE = (
    "Example. REFERENCE TIME: 2024-03-04T10:00:00Z (Monday). ENTITIES: Lena Ortiz, Sam, Denver, Pixel Labs, "
    "Brightway. CURRENT MESSAGE: \"Lena Ortiz: My brother Sam moved to Denver last week for a job at Pixel "
    "Labs. He quit Brightway on Friday.\" NAMED TOGETHER: Lena Ortiz + Sam; Lena Ortiz + Denver; Lena Ortiz "
    "+ Pixel Labs; Sam + Denver; Sam + Pixel Labs; Denver + Pixel Labs; Brightway + Sam\n"
    'Answer: {"facts": ['
    '{"source": "Sam", "relation_type": "SIBLING_OF", "target": "Lena Ortiz", "fact": "Sam is Lena Ortiz\'s '
    'brother.", "quote": "My brother Sam", "valid_at": null, "invalid_at": null}, '
    '{"source": "Sam", "relation_type": "LIVES_IN", "target": "Denver", "fact": "Sam moved to Denver in the '
    'week of 2024-02-26.", "quote": "moved to Denver last week", "valid_at": "2024-02-26T00:00:00Z", '
    '"invalid_at": null}, '
    '{"source": "Sam", "relation_type": "WORKS_AT", "target": "Pixel Labs", "fact": "Sam works at Pixel Labs.", '
    '"quote": "for a job at Pixel Labs", "valid_at": "2024-03-04T10:00:00Z", "invalid_at": null}, '
    '{"source": "Sam", "relation_type": "WORKS_AT", "target": "Brightway", "fact": "Sam worked at Brightway '
    'until he quit on 2024-03-01.", "quote": "He quit Brightway on Friday", "valid_at": null, '
    '"invalid_at": "2024-03-01T00:00:00Z"}]}'
)


def _relation_types_block(edge_types: tuple[TypeSpec, ...]) -> str:
    """The declared relation types and the rule to use them: with the ontology, at the prefix's end."""
    if not edge_types:
        return ""
    return (f"{_types_block('RELATION TYPES', edge_types)}relation_type: prefer a name listed in RELATION TYPES "
            "when it fits, with its attributes.")


# Stated on every call (not only when the data shows existing facts or possible duplicates), so the
# system message stays one static prefix; without those sections the answer leaves the fields empty.
_FOLDED_FACTS = (
    "If EXISTING FACTS are shown: for each fact, duplicate_of: the EXISTING FACT (number) between the same two "
    "entities that states the same information, else null; contradicts: the EXISTING FACTS it makes no longer "
    "true (a changed state: a new employer, a move), else []. Facts that can both be true never contradict. "
    "Without EXISTING FACTS: duplicate_of null, contradicts []."
)
_FOLDED_ENTITIES = (
    "If POSSIBLE DUPLICATES are shown: for each, give in same_as whether the NEW name is the same real-world "
    "entity as one of its existing candidates (duplicate_of: the existing number, name: the most complete full "
    "name) or not (duplicate_of: null). Refer to entities by the names listed in ENTITIES. Without POSSIBLE "
    "DUPLICATES: same_as []."
)


_FOLDED_SCHEMA = (
    '{"facts": [' + _FACT_SCHEMA[:-1] + ', "duplicate_of": int|null, "contradicts": [int]}], '
    '"same_as": [{"index": int, "duplicate_of": int|null, "name": str|null}]}'
)


def _build_fact_extraction(ctx: FactExtractionContext) -> list[Message]:
    entities = "\n".join(f"- {e.name} ({e.type})" for e in ctx.entities)
    existing = _numbered_facts(ctx.existing)
    questions = "\n".join(_render_entity_question(q) for q in ctx.ambiguous)
    together = "\n".join(f"- {a} + {b}" for a, b in ctx.pairs)
    return [
        _static("You extract dated facts between entities for a temporal knowledge graph.",
                f"{_FACT_GUIDELINES}\n{_FOLDED_FACTS}\n{_FOLDED_ENTITIES}",
                f"{_FOLDED_SCHEMA}\n{_FACT_EXAMPLE}",
                _relation_types_block(ctx.edge_types)),
        _data(_instructions(ctx.instructions), _episode_block(ctx.episode),
              f"<ENTITIES>\n{entities}\n</ENTITIES>",
              f"<NAMED TOGETHER>\n{together}\n</NAMED TOGETHER>" if ctx.pairs else "",
              f"<EXISTING FACTS>\n{existing}\n</EXISTING FACTS>" if ctx.existing else "",
              f"<POSSIBLE DUPLICATES>\n{questions}\n</POSSIBLE DUPLICATES>" if ctx.ambiguous else ""),
    ]


def _fact_limits(
    episode: EpisodeText, entities: int, edge_types: tuple[TypeSpec, ...], name_chars: int
) -> dict[str, int]:
    facts, length = facts_allowed(episode), len(episode.current)
    # others: participants besides the fact's two ends, so none with two entities (the bound is not
    # tighter: a sloppy list of names may hold the right ones after a wrong one)
    return {"ExtractedFact.others": entities if entities > 2 else 0, "ExtractedFact.supersedes": facts - 1,
            "ExtractedFact.attributes": _most_fields(edge_types),
            # a quote is a span of the message (a little slack for whitespace); the sentence may add
            # the names its pronouns stand for
            "ExtractedFact.quote": length + 16, "ExtractedFact.fact": 2 * length + 100,
            "ExtractedFact.source": name_chars, "ExtractedFact.target": name_chars,
            "ExtractedFact.others[]": name_chars}


def _fact_extraction_limits(ctx: FactExtractionContext) -> dict[str, int]:
    # source, target and others name the ENTITIES listed, as listed
    names = max((len(e.name) for e in ctx.entities), default=NAME_CHARS)
    return {**_fact_limits(ctx.episode, len(ctx.entities), ctx.edge_types, names),
            "ExtractedFacts.facts": facts_allowed(ctx.episode),
            "ExtractedFact.contradicts": len(ctx.existing), "ExtractedFact.duplicate_of": len(ctx.existing),
            "ExtractedFacts.same_as": len(ctx.ambiguous)}


FACT_EXTRACTION: Prompt[FactExtractionContext, ExtractedFacts] = Prompt(
    name="extract_facts",
    answer=ExtractedFacts,
    build=_build_fact_extraction,
    max_output_tokens=1200,
    role="extraction",
    limits=_fact_extraction_limits,
    keeps_complete_items=True,
)


# -- combined extraction: entities and facts in one call ---------------------------------------------


class ExtractedGraph(BaseModel):
    entities: list[ExtractedEntity] = _at_most(MAX_ENTITIES)
    facts: list[ExtractedFact] = _at_most(MAX_FACTS)


@dataclass(frozen=True, slots=True)
class CombinedExtractionContext:
    episode: EpisodeText
    entity_types: tuple[TypeSpec, ...] = ()
    edge_types: tuple[TypeSpec, ...] = ()
    instructions: str = ""


def _build_combined(ctx: CombinedExtractionContext) -> list[Message]:
    rules = (
        f"First, entities:\n{_entity_guidelines(ctx.entity_types, notes=True)}\n"
        f"Then, facts between those entities:\n{_FACT_GUIDELINES}"
    )
    return [
        _static("You build a temporal knowledge graph: entities, then dated facts between them.", rules,
                f'{{"entities": [{_entity_schema(ctx.entity_types, notes=True)}], "facts": [{_FACT_SCHEMA}]}}',
                _types_block("ENTITY TYPES", ctx.entity_types), _relation_types_block(ctx.edge_types)),
        _data(_instructions(ctx.instructions), _episode_block(ctx.episode)),
    ]


def _combined_limits(ctx: CombinedExtractionContext) -> dict[str, int]:
    entities = entities_allowed(ctx.episode)
    # no existing facts are shown here: nothing to restate or contradict (resolution follows)
    return {**_fact_limits(ctx.episode, entities, ctx.edge_types, _name_chars(ctx.episode)),
            "ExtractedGraph.entities": entities, "ExtractedGraph.facts": facts_allowed(ctx.episode),
            "ExtractedEntity.attributes": _most_fields(ctx.entity_types), "ExtractedFact.contradicts": 0,
            "ExtractedFact.duplicate_of": 0}


COMBINED_EXTRACTION: Prompt[CombinedExtractionContext, ExtractedGraph] = Prompt(
    name="extract_graph",
    answer=ExtractedGraph,
    build=_build_combined,
    max_output_tokens=1800,
    role="extraction",
    limits=_combined_limits,
    keeps_complete_items=True,
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
    index: Number
    duplicate_of: Number | None = None
    name: Name | None = None  # the most complete full name, when it is a duplicate


class EntityMatches(BaseModel):
    matches: list[EntityMatch] = _at_most(MAX_QUESTIONS)


def _render_entity_question(question: EntityQuestion) -> str:
    lines = [f"NEW {question.index}: {question.name} ({question.type})"]
    for c in question.candidates:
        summary = f" — {c.summary}" if c.summary else ""
        lines.append(f"  existing {c.index}: {c.name}{summary}")
    return "\n".join(lines)


def _build_entity_resolution(ctx: EntityResolutionContext) -> list[Message]:
    questions = "\n".join(_render_entity_question(q) for q in ctx.questions)
    rules = (
        "For each NEW node, decide whether it is the same real-world entity as one of its existing candidates. "
        "Names of duplicates may differ (nicknames, partial names); use names, summaries and the messages. "
        "If it is a duplicate give duplicate_of (the existing number) and name (the most complete full name); "
        "otherwise duplicate_of is null."
    )
    return [
        _static("You deduplicate knowledge-graph entities.", rules,
                '{"matches": [{"index": int, "duplicate_of": int|null, "name": str|null}]}'),
        _data(_episode_block(ctx.episode),
              f"<NEW NODES WITH EXISTING CANDIDATES>\n{questions}\n</NEW NODES WITH EXISTING CANDIDATES>"),
    ]


def _entity_resolution_limits(ctx: EntityResolutionContext) -> dict[str, int]:
    # the most complete name is one of the names shown, or written in the messages
    shown = [len(name) for q in ctx.questions for name in (q.name, *(c.name for c in q.candidates))]
    return {"EntityMatches.matches": len(ctx.questions),
            "EntityMatch.name": min(NAME_CHARS, max([_name_chars(ctx.episode), *shown]))}


ENTITY_RESOLUTION: Prompt[EntityResolutionContext, EntityMatches] = Prompt(
    name="resolve_entities",
    answer=EntityMatches,
    build=_build_entity_resolution,
    max_output_tokens=500,
    role="resolution",
    limits=_entity_resolution_limits,
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
    index: Number
    duplicate_of: Number | None = None
    contradicts: list[Number] = _at_most(MAX_NUMBERS)


class FactVerdicts(BaseModel):
    verdicts: list[FactVerdict] = _at_most(MAX_QUESTIONS)


def _span(valid_at: datetime | None, invalid_at: datetime | None) -> str:
    if valid_at is None and invalid_at is None:
        return ""
    start = valid_at.date().isoformat() if valid_at else "?"
    end = invalid_at.date().isoformat() if invalid_at else "now"
    return f" [{start} .. {end}]"


def _numbered_facts(facts: tuple[CandidateFact, ...]) -> str:
    """Stored facts as the extraction and end-review prompts list them: one a line, numbered."""
    return "\n".join(f"{c.index}: {c.relation_type}: {c.fact}{_span(c.valid_at, c.invalid_at)}" for c in facts)


def _render_fact_question(question: FactQuestion) -> str:
    lines = [f"NEW {question.index}: {question.relation_type}: {question.fact}{_span(question.valid_at, None)}"]
    for c in question.candidates:
        mark = "same pair" if c.same_pair else "shares an entity"
        lines.append(f"  existing {c.index} ({mark}): {c.relation_type}: {c.fact}{_span(c.valid_at, c.invalid_at)}")
    return "\n".join(lines)


def _build_fact_resolution(ctx: FactResolutionContext) -> list[Message]:
    questions = "\n".join(_render_fact_question(q) for q in ctx.questions)
    rules = (
        "For each NEW fact:\n"
        "1. duplicate_of: the 'same pair' existing fact that states the same information (wording may "
        "differ), else null.\n"
        "2. contradicts: the existing facts the NEW fact makes no longer true (a changed state: a new "
        "employer, a move, a break-up). Facts that can both be true do not contradict; a different topic "
        "never contradicts. Empty list if none."
    )
    return [
        _static("You maintain a temporal knowledge graph: you find duplicate and superseded facts.", rules,
                '{"verdicts": [{"index": int, "duplicate_of": int|null, "contradicts": [int]}]}'),
        _data(f"<NEW FACTS WITH EXISTING FACTS>\n{questions}\n</NEW FACTS WITH EXISTING FACTS>"),
    ]


def _fact_resolution_limits(ctx: FactResolutionContext) -> dict[str, int]:
    candidates = max((len(q.candidates) for q in ctx.questions), default=0)
    return {"FactVerdicts.verdicts": len(ctx.questions), "FactVerdict.contradicts": candidates}


FACT_RESOLUTION: Prompt[FactResolutionContext, FactVerdicts] = Prompt(
    name="resolve_facts",
    answer=FactVerdicts,
    build=_build_fact_resolution,
    max_output_tokens=500,
    role="resolution",
    limits=_fact_resolution_limits,
)


# -- ended facts: what the message makes no longer true ----------------------------------------------


@dataclass(frozen=True, slots=True)
class EndReviewContext:
    """The episode and the current facts of its entities, numbered from 1 (``CandidateFact.index``)."""

    episode: EpisodeText
    known: tuple[CandidateFact, ...]


class EndedFact(BaseModel):
    number: Number
    ended_at: Date | None = None
    quote: Quote = ""  # the words of the CURRENT MESSAGE that say it ended (checked: stages/ended.py)


class EndedFacts(BaseModel):
    ended: list[EndedFact] = _at_most(MAX_QUESTIONS)


_END_RULES = (
    "KNOWN FACTS were true before the CURRENT MESSAGE. List the ones the CURRENT MESSAGE says are no longer "
    "true: ended (quit, moved away, broke up, stopped, cancelled, stepped down, sold) or replaced by a new value "
    "of the same thing (a new employer, team, manager, role or home; a medicine switched; a flight rebooked; "
    "an appointment moved).\n"
    "For each: number: the KNOWN FACT; ended_at: when it stopped being true, ISO 8601 (YYYY-MM-DDTHH:MM:SSZ), "
    "relative dates resolved against REFERENCE TIME, null if the message does not say; quote: the shortest "
    "words of the CURRENT MESSAGE that say so, copied word for word.\n"
    "Do not list a fact the message does not speak of, or one that can still be true beside what it says (a "
    "second hobby, another friend, a visit). Most messages end nothing: then the list is empty."
)
_END_EXAMPLE = (
    "Example. REFERENCE TIME: 2024-06-10T09:00:00Z (Monday). KNOWN FACTS: 1: WORKS_AT: Sam works at Brightway. "
    "2: LIVES_IN: Sam lives in Denver. 3: SIBLING_OF: Sam is Lena Ortiz's brother. CURRENT MESSAGE: \"Lena "
    "Ortiz: Sam started at Pixel Labs in May. He still lives in Denver.\"\n"
    'Answer: {"ended": [{"number": 1, "ended_at": "2024-05-01T00:00:00Z", "quote": "Sam started at Pixel '
    'Labs in May"}]}'
)


def _build_end_review(ctx: EndReviewContext) -> list[Message]:
    known = _numbered_facts(ctx.known)
    return [
        _static("You keep a temporal knowledge graph current: you find the facts a message ends.", _END_RULES,
                '{"ended": [{"number": int, "ended_at": str|null, "quote": str}]}\n' + _END_EXAMPLE),
        _data(_episode_block(ctx.episode), f"<KNOWN FACTS>\n{known}\n</KNOWN FACTS>"),
    ]


END_REVIEW: Prompt[EndReviewContext, EndedFacts] = Prompt(
    name="review_endings",
    answer=EndedFacts,
    build=_build_end_review,
    max_output_tokens=600,
    role="resolution",
    # one entry per known fact at most; a quote is a span of the message
    limits=lambda ctx: {"EndedFacts.ended": len(ctx.known), "EndedFact.quote": len(ctx.episode.current) + 16},
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
    index: Number
    summary: Annotated[str, text_bound(SUMMARY_CHARS)]


class RewrittenSummaries(BaseModel):
    summaries: list[RewrittenSummary] = _at_most(MAX_QUESTIONS)


def _build_summary_rewrite(ctx: SummaryContext) -> list[Message]:
    items = "\n".join(f"ENTITY {i.index}: {i.name}\n{i.summary}" for i in ctx.items)
    rules = (
        "Each entity's text is notes in time order, oldest first. Rewrite each as one narrative summary of "
        "at most LENGTH characters: who or what the entity is, then what happened, with names and dates. "
        "Where a later note contradicts an earlier one, the later one wins; drop repetition. Use only what "
        "the notes say."
    )
    return [
        _static("You write entity summaries for a knowledge graph.", rules,
                '{"summaries": [{"index": int, "summary": str}]}'),
        _data(f"<LENGTH>{ctx.target_chars}</LENGTH>", f"<ENTITIES>\n{items}\n</ENTITIES>"),
    ]


SUMMARY_REWRITE: Prompt[SummaryContext, RewrittenSummaries] = Prompt(
    name="rewrite_summaries",
    answer=RewrittenSummaries,
    build=_build_summary_rewrite,
    max_output_tokens=1500,
    role="summary",
    # one summary per entity shown; twice the length asked for is still a valid answer
    limits=lambda ctx: {"RewrittenSummaries.summaries": len(ctx.items),
                        "RewrittenSummary.summary": 2 * ctx.target_chars},
)
