"""Stage 6b: the stored facts a message ends (docs/design.md §2, step 6b).

Resolution compares each new fact with the stored facts close to it in meaning. A change seldom
reads like the fact it ends: "My new lead is Aisha Bello" ends "Chen Wei reports to Marcus Hill",
"BA cancelled BA283" ends a booking while stating no new fact at all, and a small model asked to
extract facts and judge old ones in the same call does the first and forgets the second. So one
call asks the model the question directly: here is the message, here are the current facts of the
entities it names; which does it make no longer true, and since when?

The answer is checked like an extracted fact: a number of a fact it was shown, a quote the message
contains. The call is made only when the message names an entity that already has current facts.

Facts with the same text are shown once and end together. A sentence naming three entities often
becomes the same text on two pairs ("Tom Becker is booked at the Alderney Inn in Edinburgh", between
Tom and the inn and between Tom and the city); shown both, a model ends one and the other stays
current, a statement the graph holds as over and not over at once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from chronomem.domain import Fact
from chronomem.ingest.dates import date_in_text, parse_model_datetime
from chronomem.ingest.fact_resolution import FactOutcome, shares_endpoint
from chronomem.ingest.grounding import locate_quote
from chronomem.ingest.prompts import END_REVIEW, CandidateFact, EndReviewContext, EpisodeText
from chronomem.ingest.session import Session, stage
from chronomem.ingest.stages.entities import ResolvedEntities
from chronomem.store.base import Scope
from chronomem.text.names import normalize_name

__all__ = ["Ending", "review_endings"]

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
    endings: dict[str, Ending] = {}
    for item in answer.ended:
        same_text = numbered.get(item.number)
        if same_text is None:
            session.warn(f"the model ended fact {item.number}, which it was not shown: ignored")
            continue
        span = locate_quote(item.quote, text.current) if item.quote.strip() else None
        if span is None:
            session.warn(f"{same_text[0].fact!r} kept current: the end's quote is not in the message: {item.quote!r}")
            continue
        quote = text.current[span[0]:span[1]]
        stated = (parse_model_datetime(item.ended_at, session.reference_time, context=quote)
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


def _replacement(session: Session, ended: Fact, facts: Sequence[Fact], outcomes: Sequence[FactOutcome]) -> Fact | None:
    """The episode's new fact that takes the ended one's place: one of its own (not a restatement)
    sharing an entity with it, the same relation first, then the closest in meaning."""
    new = [f for f, o in zip(facts, outcomes, strict=True) if o.duplicate_of is None and shares_endpoint(f, ended)]
    if not new:
        return None
    vector = session.vectors[ended.fact]
    return max(new, key=lambda f: (f.relation_type == ended.relation_type, float(vector @ session.vectors[f.fact])))
