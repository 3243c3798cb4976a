"""Stage 6b: the stored facts a message ends (docs/design.md §2, step 6b).

Resolution compares each new fact with the stored facts close to it in meaning. A change seldom
reads like the fact it ends: "My new lead is Aisha Bello" ends "Chen Wei reports to Marcus Hill",
"BA cancelled BA283" ends a booking while stating no new fact at all, and a small model asked to
extract facts and judge old ones in the same call does the first and forgets the second. So one
call asks the model the question directly: here is the message, here are the current facts of the
entities it names; which does it make no longer true, and since when?

The answer is checked like an extracted fact: a number of a fact it was shown, a quote the message
contains (a small model often quotes the fact it ends instead: then the one sentence of the message
that names two of the fact's entities and a change stands for the quote, and none when there are
two). And the quote must end *that* fact:

- its sentence names one of the fact's entities (the speaker by "I", "me" or "my"): "Chidi quit the
  Hawks" ends nothing of his sister's;
- a quote that names two entities of another fact shown, in a sentence that names fewer of this
  one's, ends that other fact: "I left St. Agnes" ends the nurse's job there, not her first-aid
  classes at the Red Cross, unless the episode states a new value of this one ("I left Globex and
  moved to Porto" ends the home in Lisbon too); when that other fact is the only one the quote
  names so, the end is moved to it (a small model gives a wrong number beside the right quote);
- a quote whose sentence says nothing ended or changed ("Nordhavn opened an office in Rotterdam" for
  its CFO appointment) ends nothing, unless the episode gives the fact a new value; one whose
  sentence says a new job or home and no end ends only a job or a home ("Ana and Rui moved from
  Lisbon to Porto" ends no fact of their baby); neither does one that
  says the fact goes on ("still teaching there", "kept me on Ventolin") and says no end;
- no quote ends a fact whose two entities a new fact of the episode joins in a sentence that says
  it goes on (:func:`said_to_go_on`).

The call is made only when the message names an entity that already has current facts.

Facts with the same text are shown once and end together. A sentence naming three entities often
becomes the same text on two pairs ("Tom Becker is booked at the Alderney Inn in Edinburgh", between
Tom and the inn and between Tom and the city); shown both, a model ends one and the other stays
current, a statement the graph holds as over and not over at once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from chronomem.domain import Entity, Fact
from chronomem.ingest.dates import date_in_text, parse_model_datetime
from chronomem.ingest.endings import (
    ended_states_said,
    goes_on,
    holds_state,
    new_states_said,
    same_state,
    says_a_change,
    states_an_end,
    states_held,
)
from chronomem.ingest.fact_resolution import FactOutcome, same_pair, same_relation, shares_endpoint
from chronomem.ingest.grounding import REFERS_BACK, locate_quote, named_entities, sentence_around, sentence_spans
from chronomem.ingest.prompts import END_REVIEW, CandidateFact, EndReviewContext, EpisodeText
from chronomem.ingest.session import Session, stage
from chronomem.ingest.stages.entities import ResolvedEntities
from chronomem.ingest.voice import FIRST_PERSON
from chronomem.store.base import Scope
from chronomem.text.names import normalize_name

__all__ = ["Ending", "GoingOn", "kept_going", "review_endings", "said_going_on", "said_to_go_on"]

# the facts of busy entities ranked by meaning at most: the newest this many (a speaker of a long
# conversation has hundreds; reading all their vectors on every episode would cost more than it finds)
_RANKED_AT_MOST = 200


@dataclass(frozen=True, slots=True)
class Ending:
    """A stored fact the episode says is no longer true."""

    fact: Fact
    at: datetime  # when it stopped being true (world time)
    replaced_by: Fact | None = None  # the episode's new fact that takes its place, if one does


@stage("review_endings")
async def review_endings(
    session: Session, text: EpisodeText, resolved: ResolvedEntities, facts: Sequence[Fact],
    outcomes: Sequence[FactOutcome],
) -> list[Ending]:
    """The current facts of the episode's entities that the episode ends, in one call (none when
    they have no current facts). ``facts``/``outcomes``: the episode's new facts and what resolution
    made of them; facts they already restate or close are not asked about."""
    if session.deterministic or not session.config.end_review or session.episode is None:
        return []
    known = await _current_facts(session, text, resolved, facts, outcomes)
    if not known:
        return []
    numbered = dict(enumerate(known, start=1))  # each number: the facts of one text
    keep = session.config.fact_context_episodes
    recent = dataclasses.replace(text, previous=text.previous[len(text.previous) - keep:] if keep else ())
    shown = tuple(CandidateFact(n, f.fact, f.relation_type, False, f.valid_at, f.invalid_at)
                  for n, (f, *_) in numbered.items())
    answer = await session.ask(END_REVIEW, EndReviewContext(recent, shown))
    await session.vectors.embed([*(f.fact for f in facts),
                                 *(numbered[item.number][0].fact for item in answer.ended if item.number in numbered)])
    named = await _Naming.of(session, text, resolved, known)
    going_on = said_to_go_on(facts, text.current)
    said_on = said_going_on(text.current, named.spellings, named.speaker)
    endings: dict[str, Ending] = {}
    for item in answer.ended:
        same_text = numbered.get(item.number)
        if same_text is None:
            session.warn(f"the model ended fact {item.number}, which it was not shown: ignored")
            continue
        span = locate_quote(item.quote, text.current) if item.quote.strip() else None
        ended_at = item.ended_at
        if span is None and (span := named.sentence_ending(text.current, item.number)) is not None:
            ended_at = None  # the model read its day off the text it quoted (often the fact's start), not the message
            session.warn(f"the end's quote is not in the message: {item.quote!r}; the one sentence that names "
                         f"{same_text[0].fact!r} and a change stands for it")
        if span is None:
            session.warn(f"{same_text[0].fact!r} kept current: the end's quote is not in the message: {item.quote!r}")
            continue
        quote = text.current[span[0]:span[1]]
        number = item.number
        replaced = _given_a_new_value(session, same_text, facts, outcomes)
        sentence = sentence_around(text.current, *span)
        if not replaced and (meant := named.meant_instead(quote, sentence, number)) is not None:
            session.warn(f"the model ended {same_text[0].fact!r}; its quote ends {numbered[meant][0].fact!r}")
            number, same_text = meant, numbered[meant]
            await session.vectors.embed([same_text[0].fact])
            replaced = _given_a_new_value(session, same_text, facts, outcomes)
        if any(same_pair(kept, fact) for kept in going_on for fact in same_text) or kept_going(
                said_on, named.speaker, named.entities[number]):
            session.warn(f"{same_text[0].fact!r} kept current: the message says it goes on")
            continue
        if (why := named.not_ended_by(quote, sentence, number, same_text[0].fact, replaced)) is not None:
            session.warn(f"{same_text[0].fact!r} kept current: {why}: {quote!r}")
            continue
        stated = (parse_model_datetime(ended_at, session.reference_time, context=quote)
                  or date_in_text(quote, session.reference_time))
        for fact in same_text:
            if fact.id in endings:
                continue
            replaced_by = _replacement(session, fact, facts, outcomes)
            at = stated or (replaced_by.valid_at if replaced_by is not None else None) or session.reference_time
            endings[fact.id] = Ending(fact, at, replaced_by)
    return list(endings.values())


async def _current_facts(
    session: Session, text: EpisodeText, resolved: ResolvedEntities, facts: Sequence[Fact],
    outcomes: Sequence[FactOutcome],
) -> list[list[Fact]]:
    """The stored facts the message may end: current facts of the entities it names that existed
    before it, not already restated or closed by this episode, the facts of one text together; the
    closest in meaning to the message or to one of its new facts first, at most ``end_candidates``
    texts. Not only the entities of its new facts: a small model may extract no fact from the very
    message that ends one, and shown a single candidate it tends to end it, right or not."""
    existing = [eid for eid in dict.fromkeys(eid for _, eid in resolved.mentioned) if eid not in resolved.created]
    if not existing:
        return []
    settled = {f.id for o in outcomes for f in (*o.contradicts, *((o.duplicate_of,) if o.duplicate_of else ()))}
    stored = await session.store.facts_of_entities(session.group_id, existing)
    current = [f for f in stored if f.invalid_at is None and f.expired_at is None and f.id not in settled]
    if not current:
        return []
    current.sort(key=lambda f: f.created_at, reverse=True)
    texts: dict[str, list[Fact]] = {}
    for fact in current:
        texts.setdefault(normalize_name(fact.fact), []).append(fact)
    current = [same[0] for same in texts.values()][:_RANKED_AT_MOST]
    if len(current) > session.config.end_candidates:
        current = await _closest(session, text, facts, current)
    return [texts[normalize_name(f.fact)] for f in current]


async def _closest(session: Session, text: EpisodeText, facts: Sequence[Fact], current: list[Fact]) -> list[Fact]:
    """The ``end_candidates`` facts of ``current`` closest to the message or one of its new facts."""
    probes = [text.current, *(f.fact for f in facts)]
    # the stored facts' vectors are read, not computed again; one missing (none is, normally) is embedded
    stored_vectors = await session.store.get_vectors(session.group_id, Scope.FACTS, [f.id for f in current])
    await session.vectors.embed([*probes, *(f.fact for f in current if f.id not in stored_vectors)])
    probe_vectors = np.stack([session.vectors[probe] for probe in probes])

    def closeness(fact: Fact) -> float:
        vector = stored_vectors.get(fact.id)
        return float((probe_vectors @ (vector if vector is not None else session.vectors[fact.fact])).max())

    current.sort(key=closeness, reverse=True)
    return current[: session.config.end_candidates]


@dataclass(frozen=True, slots=True)
class GoingOn:
    """The entities each sentence of a message that says a state goes on names, and each that says
    one ended (:func:`said_going_on`)."""

    going_on: tuple[frozenset[str], ...]
    ended: tuple[frozenset[str], ...]


def said_going_on(message: str, spellings: Mapping[str, Sequence[str]], speaker: str | None) -> GoingOn:
    """The entities each sentence of ``message`` that says a state goes on ("still", "carries on")
    names, and each that says an end ("quit", "called off"): the speaker by I/me/my, and by a
    pronoun what the sentence before named ("Lena Ortiz went back to Cork. She's still at
    Harbourline Ferries")."""
    going_on, ended, previous = [], [], frozenset[str]()
    for start, end in sentence_spans(message):
        sentence = message[start:end]
        named = named_entities(spellings, sentence)
        if speaker is not None and FIRST_PERSON.search(sentence):
            named |= {speaker}
        said = named | previous if REFERS_BACK.search(sentence) else named
        if goes_on(sentence):
            going_on.append(said)
        elif states_an_end(sentence):
            ended.append(said)
        previous = named
    return GoingOn(tuple(going_on), tuple(ended))


def kept_going(said: GoingOn, speaker: str | None, entities: AbstractSet[str]) -> bool:
    """Does a sentence of the message (:func:`said_going_on`) say that a fact of ``entities`` goes on,
    with no new fact of the pair to say so, and no sentence say that it ended? A sentence names one
    of them not the speaker, and the other too or the speaker, who need not be named ("The tutoring
    at Brookfield carries on", said by the tutor). "Declan and I called off the engagement in July.
    He's keeping the Portobello flat" ends the engagement: the flat goes on."""
    with_speaker = {speaker} if speaker is not None else set()

    def of_the_fact(named: AbstractSet[str]) -> bool:
        return bool((entities & named) - with_speaker) and len(entities & (named | with_speaker)) >= 2

    return any(map(of_the_fact, said.going_on)) and not any(map(of_the_fact, said.ended))


def said_to_go_on(facts: Sequence[Fact], text: str) -> list[Fact]:
    """The new ``facts`` whose sentence in the episode ``text`` says they go on ("Still teaching at
    the Red Cross though", "Osei will remain chair"): the message keeps what those two entities
    held, and another statement of it (a new job next month) ends none of it."""
    return [f for f in facts if f.evidence and goes_on(sentence_around(text, f.evidence[0].start, f.evidence[0].end))]


@dataclass(frozen=True, slots=True)
class _Naming:
    """Which entities of the shown facts a piece of the message names, to tell which fact it ends."""

    spellings: dict[str, tuple[str, ...]]  # entity id -> its name, aliases and names in this episode
    speaker: str | None  # the id of the message's speaker, named by "I", "me" and "my"
    entities: dict[int, frozenset[str]]  # number of a shown text -> the entities of its facts

    @classmethod
    async def of(
        cls, session: Session, text: EpisodeText, resolved: ResolvedEntities, known: Sequence[Sequence[Fact]]
    ) -> _Naming:
        entities = {n: frozenset(eid for f in same for eid in (f.source_id, f.target_id, *f.other_entity_ids))
                    for n, same in enumerate(known, start=1)}
        ids = sorted(set().union(*entities.values()))
        found: dict[str, Entity] = {eid: resolved.entities[eid] for eid in ids if eid in resolved.entities}
        missing = [eid for eid in ids if eid not in found]
        if missing:
            found.update((e.id, e) for e in await session.store.get_entities(session.group_id, missing))
        spellings = resolved.spellings(found.values())
        speaker = resolved.find(text.speaker) if text.speaker else None
        return cls(spellings, speaker.id if speaker is not None else None, entities)

    def named_by(self, words: str) -> frozenset[str]:
        named = named_entities(self.spellings, words)
        if self.speaker is not None and FIRST_PERSON.search(words):
            named |= {self.speaker}
        return named

    def meant_instead(self, quote: str, sentence: str, number: int) -> int | None:
        """The one other shown text whose entities ``quote`` names (two of them) when its
        ``sentence`` names fewer of text ``number``'s: a small model gives a wrong number beside the
        right quote ("I resigned from Studio Vanta" for "Studio Vanta was founded by Hugo
        Lindqvist"). A sentence that names two of the fact's own entities is about it, whatever
        else the quote names ("The metformin was upsetting my stomach, so Dr. Okafor switched me to
        Jardiance": a quote of its second half names the doctor and the patient, as the diagnosis
        does, and still ends the metformin)."""
        if self._names_two_of(sentence, number):
            return None
        others = self._fully_named_others(self.named_by(quote), number)
        return others[0] if len(others) == 1 else None

    def sentence_ending(self, message: str, number: int) -> tuple[int, int] | None:
        """The span of the one sentence of ``message`` that names two entities of the shown text
        ``number`` and says a change, to stand for a quote that is not in the message: a small
        model often quotes the fact it ends, or another shown fact, instead of the message's
        words. The sentence is then checked as a quote would be; with two such sentences, or
        none, the end has no evidence and is not taken."""
        found = [(a, b) for a, b in sentence_spans(message)
                 if self._names_two_of(message[a:b], number) and says_a_change(message[a:b])]
        return found[0] if len(found) == 1 else None

    def _names_two_of(self, words: str, number: int) -> bool:
        return len(self.entities[number] & self.named_by(words)) >= 2

    def _fully_named_others(self, named: frozenset[str], number: int) -> list[int]:
        """The shown texts other than ``number`` two of whose entities are among ``named``."""
        return [n for n, ents in self.entities.items() if n != number and len(ents & named) >= 2]

    def not_ended_by(self, quote: str, sentence: str, number: int, fact: str, replaced: bool) -> str | None:
        """Why ``quote`` (in ``sentence``) does not end the shown text ``number`` (``fact``); ``None``
        if it may."""
        own = self.entities[number]
        if not own & self.named_by(sentence):
            return "the sentence that would end it names none of its entities"
        if not replaced and not self._names_two_of(sentence, number) and self._fully_named_others(
                self.named_by(quote), number):
            return "the quote names the entities of another fact, and ends that one"
        if goes_on(quote):
            return "the quote says it goes on"
        if not says_a_change(sentence) and not replaced:  # "The metformin was upsetting me, so ... switched"
            return "the quote's sentence says nothing ended or changed"
        states = new_states_said(sentence)
        if not replaced and states and not any(holds_state(fact, state) for state in states):
            return f"the quote's sentence says a new {' or '.join(sorted(states))}, and this fact is none"
        ended, held = ended_states_said(sentence), states_held(fact)
        if not replaced and ended and held and not ended & held:  # "Lena moved out" ends no job of hers
            return f"the quote's sentence ends a {' or '.join(sorted(ended))}, and this fact is a {min(held)}"
        return None


def _given_a_new_value(
    session: Session, same_text: Sequence[Fact], facts: Sequence[Fact], outcomes: Sequence[FactOutcome]
) -> bool:
    """Does one of the episode's new facts give one of ``same_text`` a new value (:func:`_replaces`)?"""
    return any(_replaces(new, fact) for fact in same_text
               if (new := _replacement(session, fact, facts, outcomes)) is not None)


def _replaces(new: Fact, old: Fact) -> bool:
    """Is ``new`` a new value of what ``old`` held: the same relation, or the same job or home?"""
    return same_relation(new, old) or same_state(new.fact, old.fact)


def _replacement(session: Session, ended: Fact, facts: Sequence[Fact], outcomes: Sequence[FactOutcome]) -> Fact | None:
    """The episode's new fact that takes the ended one's place: one of its own (not a restatement)
    sharing an entity with it, the same relation first, then the closest in meaning."""
    new = [f for f, o in zip(facts, outcomes, strict=True) if o.duplicate_of is None and shares_endpoint(f, ended)]
    if not new:
        return None
    vector = session.vectors[ended.fact]
    return max(new, key=lambda f: (same_relation(f, ended), float(vector @ session.vectors[f.fact])))
