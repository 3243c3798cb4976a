"""Stages 5–7 on facts: drafts with ids and dates, resolution against existing facts, invalidation."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from chronomem.domain import Entity, EvidenceSpan, Fact, to_relation_type
from chronomem.ingest.apposition import apposition
from chronomem.ingest.dates import date_in_text, only_date_in, own_clause_date, parse_model_datetime
from chronomem.ingest.endings import (
    changed_states,
    couple_stage,
    ends_the_thing,
    holds_state,
    new_values_said,
    same_state,
    states_an_end,
)
from chronomem.ingest.fact_resolution import (
    FactCandidates,
    FactOutcome,
    identical_fact,
    same_pair,
    same_relation,
    same_role,
    select_candidates,
    single_valued_outcome,
)
from chronomem.ingest.grounding import (
    REFERS_BACK,
    is_named,
    is_named_any,
    junk_reason,
    locate_quote,
    sentence_around,
    sentence_stating,
    stating_sentence,
)
from chronomem.ingest.invalidation import end, invalidate, supersede_within_episode
from chronomem.ingest.places import is_a_place, where_said
from chronomem.ingest.prompts import (
    FACT_RESOLUTION,
    CandidateFact,
    EpisodeText,
    ExtractedFact,
    FactQuestion,
    FactResolutionContext,
)
from chronomem.ingest.session import Session, stage
from chronomem.ingest.set_forms import forms_said
from chronomem.ingest.stages.ended import Ending, kept_going, said_going_on, said_to_go_on
from chronomem.ingest.stages.entities import ResolvedEntities
from chronomem.ingest.voice import FIRST_PERSON
from chronomem.store.base import Scope
from chronomem.text.codes import references_given
from chronomem.text.names import name_key

__all__ = [
    "FactChanges",
    "FactDrafts",
    "apply_invalidation",
    "build_facts",
    "resolve_facts",
]


# -- 5. facts ------------------------------------------------------------------------------------------


@dataclass
class FactDrafts:
    """New facts, and what the extraction call already said about them (by fact id)."""

    facts: list[Fact] = field(default_factory=list)
    hints: dict[str, FactOutcome] = field(default_factory=dict)
    shown: frozenset[str] = frozenset()  # ids of the existing facts the model was shown
    # earlier facts of this episode that a later one makes no longer true (the answer's supersedes)
    supersedes: dict[str, tuple[Fact, ...]] = field(default_factory=dict)
    spellings: dict[str, tuple[str, ...]] = field(default_factory=dict)  # entity id -> the names it goes by


def build_facts(
    session: Session,
    extracted: Iterable[ExtractedFact],
    resolved: ResolvedEntities,
    shown: dict[int, Fact] | None = None,
    *,
    text: EpisodeText | None = None,
) -> FactDrafts:
    """Facts with entity ids, SCREAMING_SNAKE relation types, checked signatures and resolved dates.

    With the episode's ``text`` (a model extracted the facts) each fact is grounded: junk text or a
    quote the episode does not contain rejects it; the quote becomes its evidence span. A text the
    answer repeats on pairs it does not name is dropped there (:func:`_repeats_on_unnamed_pairs`),
    and what the message says in a set form joins the answer (:func:`_stated_in_a_set_form`).
    """
    shown = shown or {}
    spellings = resolved.spellings()
    drafts = FactDrafts(shown=frozenset(f.id for f in shown.values()), spellings=spellings)
    by_number: dict[int, Fact] = {}  # the answer's numbering (1 = its first fact) -> the draft it became
    extracted = list(extracted)
    repeats = _repeats_on_unnamed_pairs(extracted, resolved, text.speaker if text is not None else None)
    for number, extracted_item in enumerate(extracted, start=1):
        if number in repeats:
            session.warn(f"fact dropped, the same text is on a pair it names: {extracted_item.fact!r} "
                         f"({extracted_item.source} / {extracted_item.target})")
            continue
        item, relation = _apart(extracted_item, resolved, spellings)
        if relation is not None and (held := _draft(session, relation, resolved, text)) is not None:
            # a relation has no day of its own: a date in its sentence is the statement's
            held = held.model_copy(update={"valid_at": None, "invalid_at": None})
            if identical_fact(held, drafts.facts) is None:
                drafts.facts.append(held)
        fact = _draft(session, item, resolved, text)
        if fact is None:
            continue
        if (same := identical_fact(fact, drafts.facts)) is not None:
            by_number[number] = same
            continue
        by_number[number] = fact
        drafts.facts.append(fact)
        if earlier := _superseded(session, fact, number, item.supersedes, by_number):
            drafts.supersedes[fact.id] = earlier
        if shown:
            duplicate = shown.get(item.duplicate_of) if item.duplicate_of is not None else None
            contradicts = tuple(shown[n] for n in dict.fromkeys(item.contradicts) if n in shown)
            drafts.hints[fact.id] = FactOutcome(duplicate, contradicts)
    if text is not None:
        for stated, dated in _stated_in_a_set_form(session, resolved, text, spellings):
            fact = _draft(session, stated, resolved, text)
            # an ended role is the state a fact of its ending ("retires as chief operating officer
            # on 31 August") leaves unsaid: it joins the pair beside that one
            ending = fact is not None and fact.relation_type == "HOLDS_ROLE" and fact.invalid_at is not None
            if fact is not None and not any(same_pair(f, fact) and not (ending and states_an_end(f.fact))
                                            for f in drafts.facts):
                # undated, a reference or a location has no day of its own: one in its sentence is
                # the booking's or the job's
                drafts.facts.append(fact if dated else fact.model_copy(update={"valid_at": None, "invalid_at": None}))
    session.facts_extracted = len(drafts.facts)
    return drafts


def _stated_in_a_set_form(
    session: Session, resolved: ResolvedEntities, text: EpisodeText, spellings: dict[str, tuple[str, ...]]
) -> list[tuple[ExtractedFact, bool]]:
    """Facts a message states in a set form, which models of every size fold into the fact they came
    with or leave out, each with whether its sentence dates it: a new home or job
    (:func:`_new_values`), a diagnosis, a medicine or a flight's route (:func:`_forms`), the writer's
    own booking references (:func:`_references_given`) and where a venue is
    (:func:`_where_things_are`). Each is kept only where no fact of the answer joins its
    two entities already."""
    speaker = resolved.find(text.speaker) if text.speaker else None
    # an assistant's "I" books and prescribes for the user: it names no holder
    writer = speaker if session.episode is None or session.episode.role != "assistant" else None
    found = [(item, True) for item in _new_values(session, resolved, text, spellings, writer)]
    found += [(item, item.relation_type in _DATED_FORMS) for item in _forms(session, resolved, text, spellings, writer)]
    found += [(item, False) for item in _references_given(text, resolved, writer)]
    if session.config.place_names:
        found += [(item, False) for item in _where_things_are(resolved, text, spellings, speaker)]
    return found


_THE_WRITER = frozenset({"i", "me", "we", "my"})  # a set form's holder that is the message's writer


def _holder(words: str, writer: Entity | None, resolved: ResolvedEntities,
            spellings: dict[str, tuple[str, ...]]) -> Entity | None:
    """The entity a set form's holder words name: the writer for "I", "me", "we", "my"."""
    return writer if words.lower() in _THE_WRITER else _entity_named(words, resolved, spellings)


def _new_values(
    session: Session, resolved: ResolvedEntities, text: EpisodeText, spellings: dict[str, tuple[str, ...]],
    writer: Entity | None,
) -> list[ExtractedFact]:
    """A move or a new job a message says in a set form (:func:`~chronomem.ingest.endings.
    new_values_said`), a fact of each holder: "Ana and Rui moved from Lisbon to Porto last month for
    Rui's new job at Marés Logistics" is "Ana moved to Porto", "Rui moved to Porto" and "Rui works
    at Marés Logistics". Models of every size write it as one fact of two of its entities; each
    holder's old home or job ends by :func:`_new_state`. A home is a place the gazetteer knows (no
    moves without it: "I moved to the Platform team" is no home); "I" and "we" are the writer."""
    found = []
    for said in new_values_said(text.current, _writers_words(text)):
        value = _entity_named(said.value, resolved, spellings)
        if value is None or (said.state == "home" and not (
                session.config.place_names and any(is_a_place(name) for name in spellings.get(value.id, ())))):
            continue
        for words in said.holders:
            holder = _holder(words, writer, resolved, spellings)
            if holder is None or holder.id == value.id:
                continue
            fact = f"{holder.name} {'moved to' if said.state == 'home' else 'works at'} {value.name}."
            found.append(ExtractedFact(source=holder.name, target=value.name, fact=fact,
                                       relation_type="MOVED_TO" if said.state == "home" else "WORKS_AT",
                                       quote=text.current[said.start:said.end]))
    return found


# each set form (:mod:`chronomem.ingest.set_forms`): its relation and its fact's text
_FORM_FACTS = {
    "condition": ("HAS_CONDITION", "{holder} has {value}."),
    "medicine": ("TAKES", "{holder} takes {value}."),
    "departs": ("DEPARTS_FROM", "{holder} departs from {value}."),
    "arrives": ("FLIES_TO", "{holder} flies to {value}."),
    "role": ("HOLDS_ROLE", "{holder} is {detail} of {value}."),
}
# a route has no day of its own: the flight's is the booking's
_DATED_FORMS = frozenset({"HAS_CONDITION", "TAKES", "HOLDS_ROLE"})


def _forms(
    session: Session, resolved: ResolvedEntities, text: EpisodeText, spellings: dict[str, tuple[str, ...]],
    writer: Entity | None,
) -> list[ExtractedFact]:
    """The diagnoses, medicines, roles and flight routes a message says in a set form
    (:func:`~chronomem.ingest.set_forms.forms_said`), each a fact of its holder and the entity its
    value names: "Dr. Okafor diagnosed me with type 2 diabetes" is "Rahul Mehta has type 2
    diabetes."; "me" and "I" are the writer. A role begins on the day the clauses naming its holder
    state; one the form ends ("retires as chief operating officer of Pellworth on 31 August") ends
    on that day, else on the day it was said."""
    found = []
    for said in forms_said(text.current, _writers_words(text)):
        holder = _holder(said.holder, writer, resolved, spellings)
        value = _entity_named(said.value, resolved, spellings)
        if holder is None or value is None or holder.id == value.id:
            continue
        relation, fact = _FORM_FACTS[said.kind]
        begins = ends = None
        if said.kind == "role":
            sentence = sentence_around(text.current, said.start, said.end)
            day = only_date_in(sentence, session.reference_time, spellings.get(holder.id, (holder.name,)))
            if said.ended:
                ends = (day or session.reference_time).date().isoformat()
            elif day is not None:
                begins = day.date().isoformat()
        found.append(ExtractedFact(source=holder.name, relation_type=relation, target=value.name,
                                   fact=fact.format(holder=holder.name, value=value.name, detail=said.detail),
                                   quote=text.current[said.start:said.end], valid_at=begins, invalid_at=ends))
    return found


def _entity_named(words: str, resolved: ResolvedEntities, spellings: dict[str, tuple[str, ...]]) -> Entity | None:
    """The one entity of the episode ``words`` name ("Then Ana": Ana), else the one whose name names
    them ("UA1742": "United UA1742"), or ``None``."""
    if (found := resolved.find(words)) is not None:
        return found
    named = {eid for eid, names in spellings.items() if is_named_any(names, words)}
    if not named:
        named = {eid for eid, names in spellings.items() if any(is_named_any([words], name) for name in names)}
    return resolved.entities.get(named.pop()) if len(named) == 1 else None


def _writers_words(text: EpisodeText) -> int:
    """Where a message's own words begin: after the "Rhys: " its text opens with."""
    said = f"{text.speaker}: "
    return len(said) if text.speaker and text.current.startswith(said) else 0


def _references_given(text: EpisodeText, resolved: ResolvedEntities, writer: Entity | None) -> list[ExtractedFact]:
    """The codes a message's writer gives as their own references ("I'm booked on BA283 ...,
    booking reference QX7L2P": :func:`~chronomem.text.codes.references_given`), each a fact of the
    writer's: what a user comes back for, and a model lists the code and often says nothing of it.
    Not an assistant's: "I've booked you on BA283, reference QX7L2P" gives the user's reference."""
    if writer is None:
        return []
    words = references_given(text.current, _writers_words(text))
    return [ExtractedFact(source=writer.name, relation_type="HAS_REFERENCE", target=code.name,
                          fact=f"{writer.name}'s {given.label} is {given.code}.",
                          quote=text.current[given.start:given.end])
            for given in words if (code := resolved.find(given.code)) is not None]


def _where_things_are(
    resolved: ResolvedEntities, text: EpisodeText, spellings: dict[str, tuple[str, ...]], speaker: Entity | None
) -> list[ExtractedFact]:
    """Where the message says a venue or an organisation of the episode is, a fact of its own
    ("a pharmacist at CareRx Pharmacy in Austin": CareRx Pharmacy is in Austin). Models of every
    size fold it into the fact it came with ("Lauren Hayes is a pharmacist at CareRx Pharmacy in
    Austin"), and it outlives that fact: when she leaves, the pharmacy is still in Austin. A place
    is an entity the gazetteer knows by one of its names; without the gazetteer there is none."""
    ids = list(dict.fromkeys(eid for _, eid in resolved.mentioned))
    places = [eid for eid in ids if any(is_a_place(name) for name in spellings.get(eid, ()))]
    found = []
    for place in places:
        for thing in ids:
            if thing == place or (speaker is not None and thing == speaker.id):
                continue
            if (span := where_said(text.current, spellings.get(thing, ()), spellings.get(place, ()))) is not None:
                thing_name, place_name = resolved.entities[thing].name, resolved.entities[place].name
                found.append(ExtractedFact(source=thing_name, relation_type="LOCATED_IN", target=place_name,
                                           fact=f"{thing_name} is in {place_name}.",
                                           quote=text.current[span[0]:span[1]]))
    return found


def _repeats_on_unnamed_pairs(
    extracted: Sequence[ExtractedFact], resolved: ResolvedEntities, speaker: str | None
) -> set[int]:
    """The numbers (1 = first) of the answer's facts that repeat the text of another on a pair the text
    does not name, where a copy of it is on a pair it names: the 1.5B wrote "Yusuf Demirci is flying to
    Tallinn on flight BT317." seven times, between Yusuf and Tallinn and between Yusuf and his hotel,
    his booking reference, his manager, the firm he meets; when the meeting moved, all seven ended."""
    writer = resolved.find(speaker) if speaker else None

    def names_both(item: ExtractedFact) -> bool:  # the writer by I/me/my too
        ends = [resolved.find(item.source), resolved.find(item.target)]
        return all(end is not None and (_named_in(item.fact, end) or (
            writer is not None and end.id == writer.id and FIRST_PERSON.search(item.fact) is not None)) for end in ends)

    copies: dict[str, list[int]] = {}
    for number, item in enumerate(extracted, start=1):
        copies.setdefault(" ".join(item.fact.split()), []).append(number)
    repeats: set[int] = set()
    for numbers in copies.values():
        named = [n for n in numbers if names_both(extracted[n - 1])]
        if len(numbers) > 1 and named:
            repeats.update(n for n in numbers if n not in named)
    return repeats


def _draft(session: Session, item: ExtractedFact, resolved: ResolvedEntities, text: EpisodeText | None) -> Fact | None:
    """The fact ``item`` becomes; ``None`` when it is rejected (ungrounded, entities unknown)."""
    evidence = _evidence(session, item, text) if text is not None else ()
    if evidence is None:
        return None
    return _to_fact(session, item, resolved, evidence, text.current if text is not None else None)


def _apart(
    item: ExtractedFact, resolved: ResolvedEntities, spellings: dict[str, tuple[str, ...]]
) -> tuple[ExtractedFact, ExtractedFact | None]:
    """``item`` as a statement and the relation an apposition in it states (:mod:`~chronomem.ingest.
    apposition`): "Daniel Okafor's daughter Amara just started at Lakeside Primary" is "Amara just
    started at Lakeside Primary" and "Amara is Daniel Okafor's daughter". Kept whole (no relation)
    when the statement names no third entity: then the fact is about the two alone."""
    split = apposition(item.fact, spellings)
    if split is None:
        return item, None
    entities = resolved.entities
    others = [eid for eid in dict.fromkeys(eid for _, eid in resolved.mentioned)
              if eid not in (split.owner, split.holder) and _named_in(split.statement, entities[eid])]
    if not others:
        return item, None
    ends = [e.id for name in (item.source, item.target) if (e := resolved.find(name)) is not None]
    target = next((eid for eid in ends if eid in others), others[0])
    statement = item.model_copy(update={"fact": split.statement, "source": entities[split.holder].name,
                                        "target": entities[target].name})
    quote = item.quote or ""
    cut = quote.find(split.holder_name)
    relation = ExtractedFact(
        source=entities[split.holder].name, relation_type=f"{split.role} of", target=entities[split.owner].name,
        fact=split.relation, quote=quote[:cut + len(split.holder_name)] if cut >= 0 else item.quote,
    )
    return statement, relation


def _superseded(
    session: Session, fact: Fact, number: int, named: Sequence[int], by_number: dict[int, Fact]
) -> tuple[Fact, ...]:
    """The earlier facts of the answer that ``fact`` (its ``number``) says it supersedes, within the
    rules for any contradiction: an earlier fact, sharing an entity in the same role. Other numbers
    (later, its own, out of range, a fact about something else) are ignored, with a warning."""
    found: list[Fact] = []
    for n in dict.fromkeys(named):
        earlier = by_number.get(n) if 0 < n < number else None
        if earlier is None or earlier.id == fact.id:
            if not 0 < n < number:
                session.warn(f"{fact.fact!r} supersedes fact {n}, not an earlier fact of the answer: ignored")
            continue
        if not same_role(fact, earlier):
            session.warn(f"{fact.fact!r} supersedes {earlier.fact!r}, which shares no entity in its role: ignored")
            continue
        found.append(earlier)
    return tuple(found)


def _evidence(session: Session, item: ExtractedFact, text: EpisodeText) -> tuple[EvidenceSpan, ...] | None:
    """The span of the episode the fact's quote is (else the sentence that states it in other words),
    or ``None`` (counted, with the reason) to reject it."""
    if (reason := junk_reason(item.fact, [item.source, item.target])) is not None:
        session.reject("fact", f"{item.fact!r} {reason}")
        return None
    span = locate_quote(item.quote, text.current) if item.quote else None
    if span is not None and not _quote_names_an_end(text, span, item):
        # a small model gives several facts one quote, and the date another sentence states with it:
        # the sentence that states the fact is its evidence
        span = stating_sentence(item.fact, [item.source, item.target], text.current, text.speaker) or span
    if span is None:
        span = stating_sentence(item.fact, [item.source, item.target], text.current, text.speaker)
    if span is None:
        problem = f"quotes words the episode does not contain: {item.quote!r}" if item.quote else "has no quote"
        session.reject("fact", f"{item.fact!r} {problem}")
        return None
    if session.episode is None:
        return ()
    return (EvidenceSpan(episode_id=session.episode.id, start=span[0], end=span[1]),)


def _quote_names_an_end(text: EpisodeText, span: tuple[int, int], item: ExtractedFact) -> bool:
    """Does the sentence of the quote name one of the fact's ends, or may it (a pronoun, the writer's
    "I")? "Our head office will relocate from Southampton to Eastleigh on 6 October", given as the
    quote of "Tobias Arkwright retires as chief operating officer of Pellworth Instruments", does not."""
    sentence = sentence_around(text.current, *span)
    return (is_named(item.source, [sentence]) or is_named(item.target, [sentence])
            or bool(REFERS_BACK.search(sentence) or FIRST_PERSON.search(sentence)))


def _to_fact(
    session: Session, item: ExtractedFact, resolved: ResolvedEntities, evidence: tuple[EvidenceSpan, ...] = (),
    episode_text: str | None = None,
) -> Fact | None:
    source, target = resolved.find(item.source), resolved.find(item.target)
    if source is not None and target is not None:
        source, target = _ends_the_text_names(item.fact, source, target, resolved)
        if session.config.place_names:
            source, target = _the_venue_not_its_place(item.fact, source, target, resolved)
    if source is None or target is None or source.id == target.id:
        session.warn(f"fact dropped, its entities are not both known and distinct: {item.fact!r}")
        return None
    others = _participants(session, item, resolved, {source.id, target.id})
    relation = to_relation_type(item.relation_type)
    if not session.ontology.allows(relation, source.labels, target.labels):
        session.warn(f"{relation} may not join {source.name} and {target.name}; kept as RELATES_TO")
        relation = "RELATES_TO"
    reference = session.reference_time
    valid_at = parse_model_datetime(item.valid_at, reference, context=item.quote)
    invalid_at = parse_model_datetime(item.invalid_at, reference, context=item.quote)
    if valid_at is None and item.valid_at is None and evidence:  # undated by the model: its words may date it
        valid_at = date_in_text(item.quote, reference)
    if valid_at is not None and episode_text is not None and evidence:
        names = [name for end in (source, target) for name in (end.name, *end.aliases)]
        said = episode_text[evidence[0].start:evidence[0].end]
        valid_at = own_clause_date(valid_at, said, names, episode_text, reference)
    if invalid_at is None and episode_text is not None and evidence:
        names = [name for end in (source, target) for name in (end.name, *end.aliases)]
        valid_at = _stated_start(valid_at, reference, episode_text, evidence[0], item.fact, names)
    if valid_at and invalid_at and invalid_at < valid_at:
        session.warn(f"invalid_at before valid_at dropped: {item.fact!r}")
        invalid_at = None
    return Fact(
        group_id=session.group_id, source_id=source.id, target_id=target.id, other_entity_ids=others,
        relation_type=relation,
        fact=" ".join(item.fact.split()), episode_ids=session.provenance, evidence=evidence,
        attributes=session.ontology.edge_attributes(relation, item.attributes),
        valid_at=valid_at, invalid_at=invalid_at, created_at=session.now,
    )


def _stated_start(
    valid_at: datetime | None, reference: datetime, episode_text: str, span: EvidenceSpan, fact: str,
    names: Sequence[str],
) -> datetime | None:
    """A start the model left at the episode's own day (or out) when the sentence that states the
    fact names one other day: "I started at Globex last Monday" began last Monday, not when it was
    said. A model that gave a day of its own keeps it; so does a sentence with several dates,
    unless the clauses naming the fact's entities (``names``) name one of them. Of a quote over
    several sentences, the one that reads most like the fact states it."""
    if valid_at is not None and valid_at.date() != reference.date():
        return valid_at
    stated = only_date_in(sentence_stating(episode_text, span.start, span.end, fact), reference, names)
    if stated is None or stated.date() == reference.date():
        return valid_at
    return stated


def _ends_the_text_names(
    fact: str, source: Entity, target: Entity, resolved: ResolvedEntities
) -> tuple[Entity, Entity]:
    """The fact's ends as its own sentence names them. A small model sometimes hangs a fact on the
    wrong pair ("Maya adopted a dog named Bolt" between Maya and her sister Ana): when the text
    names one end but not the other, and names exactly one other entity of the episode, that
    entity is the other end; ends that are the sentence's joint subjects go by :func:`_joint_subject`.
    Otherwise the ends stay as the model gave them."""
    if (joint := _joint_subject(fact, source, target, resolved)) is not None:
        return joint
    if _named_in(fact, source) == _named_in(fact, target):
        return source, target
    kept = source if _named_in(fact, source) else target
    others = {e.id: e for _, eid in resolved.mentioned
              if (e := resolved.entities[eid]).id != kept.id and _named_in(fact, e)}
    if len(others) != 1:
        return source, target
    (other,) = others.values()
    return (kept, other) if kept is source else (other, kept)


def _the_venue_not_its_place(
    fact: str, source: Entity, target: Entity, resolved: ResolvedEntities
) -> tuple[Entity, Entity]:
    """"Lucía Ferrándiz has taught chemistry at Westcombe Academy in Exeter since 2018", hung on
    Lucía and Exeter: when one end is a place and the text puts exactly one other entity of the
    episode in it as a venue ("at Westcombe Academy in Exeter", :func:`~chronomem.ingest.places.
    where_said`), the fact is of that venue; where the venue is, is a fact of its own
    (:func:`_where_things_are`)."""
    for place, kept in ((target, source), (source, target)):
        place_names = (place.name, *place.aliases)
        if not any(is_a_place(name) for name in place_names):
            continue
        venues = {e.id: e for _, eid in resolved.mentioned
                  if (e := resolved.entities[eid]).id not in (source.id, target.id)
                  and where_said(fact, (e.name, *e.aliases), place_names) is not None}
        if len(venues) == 1:
            (venue,) = venues.values()
            return (kept, venue) if kept is source else (venue, kept)
    return source, target


_JOINT_SUBJECT = re.compile(r"^(?P<first>[^,;.!?]+?)\s+(?:and|&)\s+(?P<second>[^,;.!?]+?)\s+(?P<predicate>[a-z].*)$",
                            re.DOTALL)


def _joint_subject(
    fact: str, source: Entity, target: Entity, resolved: ResolvedEntities
) -> tuple[Entity, Entity] | None:
    """"Imran and Sofia moved to Bristol": the model's two ends are the sentence's two subjects, who
    do the same thing, not a relation between them. The fact is of the first subject and the one
    entity the predicate names, or of several the one it goes "to" (the second subject joins it as
    a participant); ``None`` when the fact does not open with its two ends joined by "and", or its
    predicate names no single entity."""
    match = _JOINT_SUBJECT.match(fact.strip())
    if match is None or re.search(r"['’]s$", match["second"]):  # "Ana and Rui's daughter": one owner's role
        return None
    first, second = match["first"], match["second"]
    if _named_in(first, source) and _named_in(second, target):
        subject = source
    elif _named_in(first, target) and _named_in(second, source):
        subject = target
    else:
        return None
    predicate = match["predicate"]
    others = {e.id: e for _, eid in resolved.mentioned
              if (e := resolved.entities[eid]).id not in (source.id, target.id) and _named_in(predicate, e)}
    if len(others) > 1:  # "moved from Lisbon to Porto": where they went, if "to" names one
        others = {i: e for i, e in others.items() if _named_in(_destination(predicate), e)}
    if len(others) != 1:
        return None
    (other,) = others.values()
    return subject, other


def _destination(predicate: str) -> str:
    """The words after a predicate's first "to", up to a comma or a "for": "Porto last month" of
    "moved from Lisbon to Porto last month for Rui's new job"; empty without a "to"."""
    after = re.split(r"\bto\b", predicate, maxsplit=1)
    return re.split(r",|\bfor\b", after[1], maxsplit=1)[0] if len(after) == 2 else ""


def _named_in(text: str, entity: Entity) -> bool:
    return is_named_any((entity.name, *entity.aliases), text)


def _participants(session: Session, item: ExtractedFact, resolved: ResolvedEntities, ends: set[str]) -> tuple[str, ...]:
    """The further participants of a hyperedge, resolved: the ones the model lists (an unknown name
    is dropped with a warning), and every other entity of the episode that the fact's own text
    names. "Dr. Morales put Grace Liu on lisinopril" joins all three whichever two the model made its
    ends: a fact of three entities is one hyperedge, not a binary edge that forgets the third."""
    found: list[str] = []
    for name in item.others:
        entity = resolved.find(name)
        if entity is None:
            session.warn(f"participant {name!r} of {item.fact!r} is not a known entity: left out")
        elif entity.id not in ends and entity.id not in found:
            found.append(entity.id)
    for _, entity_id in resolved.mentioned:
        if entity_id not in ends and entity_id not in found and _named_in(item.fact, resolved.entities[entity_id]):
            found.append(entity_id)
    return tuple(found)


# -- 6. fact resolution --------------------------------------------------------------------------------


async def _existing_facts(session: Session, facts: Sequence[Fact]) -> tuple[dict[str, Fact], list[dict[str, float]]]:
    """Current facts near each new fact by fact embedding, with their cosines (one search per fact).

    Same-pair duplicates are found here too: a restatement is near in meaning, and the vector index
    scales where listing every fact of a busy pair (two speakers) does not.
    """
    if not await session.has_vectors(Scope.FACTS):
        return {}, [{} for _ in facts]
    config = session.config
    floor = min(config.duplicate_similarity, config.contradiction_similarity, config.same_relation_similarity)
    nearest = await asyncio.gather(*(
        session.store.vector_search(session.group_id, Scope.FACTS, session.vectors[f.fact],
                                    limit=config.fact_candidates * 4, min_score=floor)
        for f in facts
    ))
    scores = [{hit.id: hit.score for hit in hits} for hits in nearest]
    ids = list(dict.fromkeys(i for per_fact in scores for i in per_fact))
    existing = {f.id: f for f in await session.store.get_facts(session.group_id, ids)} if ids else {}
    return existing, scores


@stage("resolve_facts")
async def resolve_facts(session: Session, drafts: FactDrafts) -> list[FactOutcome]:
    """Duplicates and contradictions of each new fact (docs/design.md §2, step 6).

    No model for identical text, single-valued relations or facts without candidates; the
    extraction call's verdict when the model was shown every candidate (vetted against the rules);
    one batched call for the rest.
    """
    facts = drafts.facts
    if not facts:
        return []
    await session.vectors.embed(f.fact for f in facts)
    existing, scores = await _existing_facts(session, facts)
    outcomes: list[FactOutcome] = [FactOutcome() for _ in facts]
    questions: list[tuple[int, FactCandidates]] = []
    for index, fact in enumerate(facts):
        if session.ontology.is_single_valued(fact.relation_type):
            outcomes[index] = await _single_valued(session, fact)
        elif (same := identical_fact(fact, list(existing.values()))) is not None:
            outcomes[index] = FactOutcome(duplicate_of=same)
        else:
            candidates = select_candidates(
                fact, [existing[i] for i in scores[index] if i in existing], scores[index],
                duplicate_similarity=session.config.duplicate_similarity,
                contradiction_similarity=session.config.contradiction_similarity,
                same_relation_similarity=session.config.same_relation_similarity,
                limit=session.config.fact_candidates,
            )
            hint = drafts.hints.get(fact.id)
            if hint is not None and all(c.id in drafts.shown for c in (*candidates.duplicates,
                                                                         *candidates.contradictions)):
                outcomes[index] = vet(fact, hint, candidates)
            elif candidates:
                questions.append((index, candidates))
    _within_episode_single_valued(session, facts, outcomes)
    if questions and not session.deterministic:  # the call is made anyway: the episode's own facts ride along
        decided = {index for index, _ in questions}
        questions = _with_earlier_statements(session, facts, questions)
        for index, outcome in (await _ask_about_facts(session, facts, questions)).items():
            if index in decided:
                outcomes[index] = outcome
            elif outcomes[index].duplicate_of is None:  # asked only about the episode's earlier facts
                outcomes[index] = FactOutcome(contradicts=_unique((*outcomes[index].contradicts, *outcome.contradicts)))
    _of_the_same_thing(session, facts, outcomes)
    await _stated_changes(session, facts, outcomes, drafts.spellings)
    _kept_going(session, facts, outcomes, drafts.spellings)
    _superseded_within_episode(drafts, outcomes)  # last: a verdict of the batched call replaces an outcome
    return outcomes


async def _stated_changes(
    session: Session, facts: Sequence[Fact], outcomes: list[FactOutcome], spellings: dict[str, tuple[str, ...]]
) -> None:
    """A fact whose sentence says a new value of a state (see :func:`_new_state`), a couple's next
    stage (:func:`_next_stage`), or that a state ended (:mod:`chronomem.ingest.endings`: "quit",
    "no longer"; "sold Rågkorn" of the thing sold), closes what held. An end closes what held
    between the same two entities: the current stored facts of the pair and this episode's earlier
    ones. A fact that states the end itself ("Maya worked at Globex until May 31") restates the
    stored one with that end (see :func:`_dates_learnt`); an event ("Maya quit Globex") closes them
    when it happened, whatever the model judged."""
    if session.episode is None:
        return
    text = session.episode.text
    for index, fact in enumerate(facts):
        if not fact.evidence:
            continue
        sentence = sentence_around(text, fact.evidence[0].start, fact.evidence[0].end)
        for state in changed_states(sentence, fact.fact, spellings.get(fact.target_id, ())):
            await _new_state(session, fact, index, state, outcomes)
        await _next_stage(session, facts, index, outcomes)
        if not (states_an_end(sentence) or any(ends_the_thing(sentence, spellings.get(end, ()))
                                               for end in (fact.source_id, fact.target_id))):
            continue
        stored = await session.store.facts_between(session.group_id, fact.source_id, fact.target_id)
        held = [f for f in stored if f.expired_at is None and f.invalid_at is None and f.id != fact.id]
        held += [f for f in facts[:index] if same_pair(f, fact) and f.invalid_at is None]
        earlier = outcomes[index]
        if not held:
            continue
        if fact.invalid_at is not None:
            stored_held = [f for f in held if f.id in {s.id for s in stored}]
            if earlier.duplicate_of is None and stored_held:
                outcomes[index] = FactOutcome(duplicate_of=stored_held[0])
            continue
        restated = (earlier.duplicate_of,) if earlier.duplicate_of is not None else ()
        outcomes[index] = FactOutcome(contradicts=_unique((*earlier.contradicts, *restated, *held)))


def _of_the_same_thing(session: Session, facts: Sequence[Fact], outcomes: list[FactOutcome]) -> None:
    """A model's verdict that a new fact ends a stored fact of another pair stands only for a new
    value of the same thing: the same relation, or the same job or home ("Maya moved to Porto" ends
    "Maya lives in Lisbon"). The packaged 1.5B ended a CFO appointment with the company's new office
    in Rotterdam. An end that reads like nothing it ends ("My new lead is Aisha Bello") is stage
    6b's to find, with a quote."""
    _refuse_ends(session, facts, outcomes, "another pair, another relation",
                 lambda new, old: not (same_pair(old, new) or same_relation(old, new)
                                       or same_state(old.fact, new.fact)))


def _kept_going(
    session: Session, facts: Sequence[Fact], outcomes: list[FactOutcome], spellings: dict[str, tuple[str, ...]]
) -> None:
    """A stored fact whose two entities a new fact joins in a sentence that says it goes on is
    contradicted by no new fact, that one included: in "I start at Kingsbridge Clinic next month.
    Still teaching at the Red Cross though" the new job does not end the classes, and "Still a member
    of the Riverside Tennis Club" does not replace the membership that began in 2018 (the 1.5B
    called it a contradiction), whatever the model judged; and so is one a sentence of the message
    says goes on with no new fact of it ("The tutoring at Brookfield carries on": :func:`kept_going`)."""
    if session.episode is None:
        return
    text, speaker = session.episode.text, session.episode.speaker
    speaker_id = next((eid for eid, names in spellings.items()
                       if speaker and any(name_key(n) == name_key(speaker) for n in names)), None)
    going_on, said_on = said_to_go_on(facts, text), said_going_on(text, spellings, speaker_id)
    _refuse_ends(session, facts, outcomes, "the message says it goes on",
                 lambda _new, old: any(same_pair(g, old) for g in going_on)
                 or kept_going(said_on, speaker_id, frozenset(old.entity_ids)))


def _refuse_ends(
    session: Session, facts: Sequence[Fact], outcomes: list[FactOutcome], why: str,
    refused: Callable[[Fact, Fact], bool],
) -> None:
    """Each outcome without the contradictions ``refused(new, old)`` rejects, with a warning saying ``why``."""
    for index, outcome in enumerate(outcomes):
        new = facts[index]
        dropped = {c.id: c for c in outcome.contradicts if refused(new, c)}
        if dropped:
            session.warn(f"{new.fact!r} does not end {[c.fact for c in dropped.values()]}: {why}")
            outcomes[index] = dataclasses.replace(
                outcome, contradicts=tuple(c for c in outcome.contradicts if c.id not in dropped))


def _within_episode_single_valued(session: Session, facts: Sequence[Fact], outcomes: list[FactOutcome]) -> None:
    """A single-valued relation stated twice in one episode with two targets: the later statement wins."""
    for index, fact in enumerate(facts):
        if not session.ontology.is_single_valued(fact.relation_type) or outcomes[index].duplicate_of is not None:
            continue
        earlier = single_valued_outcome(fact, facts[:index]).contradicts
        if earlier:
            outcomes[index] = FactOutcome(contradicts=_unique((*outcomes[index].contradicts, *earlier)))


async def _new_state(session: Session, fact: Fact, index: int, state: str, outcomes: list[FactOutcome]) -> None:
    """A new value of a state one holds one of at a time ("I start at Initech on June 10": a job;
    "we moved to Porto": a home) closes the current facts that give its source another value of it."""

    def other_value(other: Fact) -> bool:
        return (other.id != fact.id and other.source_id == fact.source_id and other.target_id != fact.target_id
                and other.invalid_at is None and other.expired_at is None and holds_state(other.fact, state))

    # stored facts only: two values one episode states ("moved to Lisbon with Bob") are not a change
    stored = await session.store.facts_of_entities(session.group_id, [fact.source_id])
    held = [f for f in stored if other_value(f)]
    if held and outcomes[index].duplicate_of is None:
        outcomes[index] = FactOutcome(contradicts=_unique((*outcomes[index].contradicts, *held)))


async def _next_stage(session: Session, facts: Sequence[Fact], index: int, outcomes: list[FactOutcome]) -> None:
    """A later stage of a couple (:func:`~chronomem.ingest.endings.couple_stage`) closes the earlier
    stages held between the same two people: "Nils married Maja" ends "Nils is engaged to Maja"."""
    fact = facts[index]
    stage = couple_stage(fact.fact)
    if stage is None or outcomes[index].duplicate_of is not None:
        return
    stored = await session.store.facts_between(session.group_id, fact.source_id, fact.target_id)
    held = [f for f in (*stored, *facts[:index])
            if f.id != fact.id and same_pair(f, fact) and f.invalid_at is None and f.expired_at is None
            and (earlier := couple_stage(f.fact)) is not None and earlier < stage]
    if held:
        outcomes[index] = FactOutcome(contradicts=_unique((*outcomes[index].contradicts, *held)))


def _superseded_within_episode(drafts: FactDrafts, outcomes: list[FactOutcome]) -> None:
    """What the extraction call said of the episode's own facts (``supersedes``): the later statement
    closes the earlier one, in the same call, so no resolution call is needed for them."""
    for index, fact in enumerate(drafts.facts):
        earlier = drafts.supersedes.get(fact.id)
        if earlier and outcomes[index].duplicate_of is None:
            outcomes[index] = FactOutcome(contradicts=_unique((*outcomes[index].contradicts, *earlier)))


def _unique(facts: Iterable[Fact]) -> tuple[Fact, ...]:
    return tuple({fact.id: fact for fact in facts}.values())


def _with_earlier_statements(
    session: Session, facts: Sequence[Fact], questions: Sequence[tuple[int, FactCandidates]]
) -> list[tuple[int, FactCandidates]]:
    """The questions, each new fact also offered the episode's earlier facts it may contradict (same
    rules as for stored facts: an endpoint in the same role, close in meaning); a fact with only such
    candidates joins the call."""
    asked = dict(questions)
    config = session.config
    for index, fact in enumerate(facts):
        if index == 0 or session.ontology.is_single_valued(fact.relation_type):
            continue
        vector = session.vectors[fact.fact]
        earlier = facts[:index]
        cosines = {f.id: float(vector @ session.vectors[f.fact]) for f in earlier}
        found = select_candidates(fact, earlier, cosines, duplicate_similarity=2.0,  # no duplicates: both are new
                                  contradiction_similarity=config.contradiction_similarity,
                                  same_relation_similarity=config.same_relation_similarity,
                                  limit=config.fact_candidates).contradictions
        if found:
            known = asked.get(index, FactCandidates())
            asked[index] = FactCandidates(known.duplicates, (*known.contradictions, *found))
    return sorted(asked.items())


def vet(fact: Fact, hint: FactOutcome, candidates: FactCandidates) -> FactOutcome:
    """The extraction call's verdict, within the rules: a duplicate only between the same pair, a
    contradiction only of a candidate (shares an endpoint, close in meaning)."""
    duplicate = hint.duplicate_of if hint.duplicate_of is not None and same_pair(hint.duplicate_of, fact) else None
    if duplicate is not None:
        return FactOutcome(duplicate_of=duplicate)
    allowed = {f.id for f in (*candidates.duplicates, *candidates.contradictions)}
    return FactOutcome(contradicts=tuple(f for f in hint.contradicts if f.id in allowed))


async def _single_valued(session: Session, fact: Fact) -> FactOutcome:
    of_source = await session.store.facts_of_entities(session.group_id, [fact.source_id])
    return single_valued_outcome(fact, of_source)


async def _ask_about_facts(
    session: Session, facts: Sequence[Fact], questions: Sequence[tuple[int, FactCandidates]]
) -> dict[int, FactOutcome]:
    numbering: dict[int, Fact] = {}
    rendered = []
    for index, candidates in questions:
        listed = []
        for fact in (*candidates.duplicates, *candidates.contradictions):
            number = len(numbering) + 1
            numbering[number] = fact
            listed.append(CandidateFact(number, fact.fact, fact.relation_type, same_pair(fact, facts[index]),
                                        fact.valid_at, fact.invalid_at))
        new = facts[index]
        rendered.append(FactQuestion(index, new.fact, new.relation_type, tuple(listed), new.valid_at))
    answer = await session.ask(FACT_RESOLUTION, FactResolutionContext(tuple(rendered)))
    allowed = {q.index: {c.index for c in q.candidates} for q in rendered}
    outcomes: dict[int, FactOutcome] = {}
    for verdict in answer.verdicts:
        if verdict.index not in allowed:
            continue
        offered = allowed[verdict.index]
        duplicate = numbering.get(verdict.duplicate_of) if verdict.duplicate_of in offered else None
        if duplicate is not None and not same_pair(duplicate, facts[verdict.index]):
            duplicate = None  # duplicates only between the same pair, whatever the model says
        contradicts = tuple(numbering[n] for n in dict.fromkeys(verdict.contradicts) if n in offered)
        if len(contradicts) < len(verdict.contradicts):
            session.warn(f"model named facts it was not offered: {verdict.contradicts}")
        outcomes[verdict.index] = FactOutcome(duplicate_of=duplicate, contradicts=() if duplicate else contradicts)
    return outcomes


# -- 7. invalidation -----------------------------------------------------------------------------------


@dataclass
class FactChanges:
    created: list[Fact] = field(default_factory=list)  # new facts (some born closed)
    restated: dict[str, Fact] = field(default_factory=dict)  # existing facts that gained provenance
    invalidated: dict[str, Fact] = field(default_factory=dict)  # existing facts closed by a new one

    def all_updates(self) -> list[Fact]:
        merged = {**self.restated, **self.invalidated}
        return [*self.created, *merged.values()]


def apply_invalidation(
    session: Session, facts: Sequence[Fact], outcomes: Sequence[FactOutcome], ended: Sequence[Ending] = ()
) -> FactChanges:
    """Restatements gain provenance; contradictions close facts on both timelines (pure rules).

    A contradicted fact may be an earlier statement of the same episode: the later one wins
    (:func:`~chronomem.ingest.invalidation.supersede_within_episode`); if that earlier statement
    restated a stored fact, the stored fact is the one closed. Then the stored facts the episode
    said ended (:mod:`chronomem.ingest.stages.ended`) close, unless the episode changed them already.
    """
    session.current_stage = "invalidation"
    changes = FactChanges()
    restating: dict[str, Fact] = {}  # a fact of this episode that restated a stored one -> the stored one
    position: dict[str, int] = {}  # a fact created by this episode -> its index in changes.created
    for fact, outcome in zip(facts, outcomes, strict=True):
        if outcome.duplicate_of is not None:
            old = _latest(changes, outcome.duplicate_of)
            provenance = tuple(dict.fromkeys((*old.episode_ids, *fact.episode_ids)))
            evidence = tuple(dict.fromkeys((*old.evidence, *fact.evidence)))
            update: dict[str, object] = {"episode_ids": provenance, "evidence": evidence, **_dates_learnt(old, fact)}
            if "invalid_at" in update or "valid_at" in update:
                update["recorded_at"] = session.now  # what we know of it changed: a new version
            changes.restated[old.id] = old.model_copy(update=update)
            restating[fact.id] = old
            continue
        stored = [_latest(changes, restating.get(f.id, f))
                  for f in outcome.contradicts if f.id not in position]
        result = invalidate(fact, stored, now=session.now, reference_time=session.reference_time)
        new_fact = result.new_fact
        for earlier in (f for f in outcome.contradicts if f.id in position):
            index = position[earlier.id]
            changes.created[index], new_fact = supersede_within_episode(
                changes.created[index], new_fact, now=session.now, reference_time=session.reference_time
            )
        position[new_fact.id] = len(changes.created)
        changes.created.append(new_fact)
        for closed in result.expired:
            changes.invalidated[closed.id] = closed
            changes.restated.pop(closed.id, None)
    episode_id = session.episode.id if session.episode is not None else None
    for ending in ended:
        if episode_id is None or ending.fact.id in changes.invalidated or ending.fact.id in changes.restated:
            continue
        replaced_by = ending.replaced_by.id if ending.replaced_by is not None else None
        changes.invalidated[ending.fact.id] = end(ending.fact, at=ending.at, said_at=session.reference_time,
                                                  now=session.now, episode_id=episode_id, replaced_by=replaced_by)
    return changes


def _dates_learnt(old: Fact, restatement: Fact) -> dict[str, object]:
    """What a restatement tells of the stored fact's time that it did not say: when it started, and
    above all when it ends ("my last day at Globex is May 31" restates "works at Globex" and closes
    it). Dates the stored fact already has are kept: a restatement does not move them."""
    learnt: dict[str, object] = {}
    if old.valid_at is None and restatement.valid_at is not None and (
        old.invalid_at is None or restatement.valid_at <= old.invalid_at
    ):
        learnt["valid_at"] = restatement.valid_at
    start = learnt.get("valid_at", old.valid_at)
    if old.invalid_at is None and restatement.invalid_at is not None and (
        not isinstance(start, datetime) or restatement.invalid_at >= start
    ):
        learnt["invalid_at"] = restatement.invalid_at
    return learnt


def _latest(changes: FactChanges, fact: Fact) -> Fact:
    """The fact as this episode has changed it so far."""
    return changes.invalidated.get(fact.id) or changes.restated.get(fact.id, fact)
