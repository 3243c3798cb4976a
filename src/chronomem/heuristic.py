"""A heuristic stand-in for a language model — NOT an LLM — that answers every ingestion prompt from
the text itself, deterministically, for benchmarks and demos without a model.

Plug it into :class:`~chronomem.llm.testing.FunctionModel` (``heuristic_model()`` does)::

    model = FunctionModel(heuristic_answer, model_name="heuristic", latency_s=0.5)

What it does, realistically enough to exercise every stage of the pipeline:

- entities: the speaker, capitalized phrases (minus sentence starters and pronouns) and noun phrases
  after a determiner or possessive ("my kids", "a support group"); no dates;
- facts: the speaker (or first entity) to each other entity, from the sentence that names it, with a
  relation type from the verb ("went" → ``WENT_TO``) and a date when the sentence has a relative
  one ("yesterday", "two weeks ago", resolved against the reference time); entities named in one
  sentence are related too;
- entity resolution: a candidate whose words contain the new name's (nicknames included) or that is
  spelled alike is a duplicate;
- fact resolution: a same-pair candidate that says most of what the shorter one says, names aside,
  is a duplicate; a state relation
  (``WORKS_AT``, ``LIVES_IN``, ``PLANS``…) of the same source towards another target is contradicted;
- entity summaries: the sentences of the message that name the entity (what the pipeline itself
  would use without a model; the summaries it writes are labelled as the graph's, not a model's);
- summary rewrites keep the most recent sentences within the target length, and user and thread
  summaries append what is new to the previous text, keeping the most recent part.

Its quality is far below a real model's; its *shape* (how many entities, facts, candidates and
contradictions per episode) is what the benchmark needs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from rapidfuzz import fuzz

from chronomem.domain import EpisodeKind
from chronomem.ingest.dates import resolve_relative
from chronomem.ingest.prompts import (
    EndedFacts,
    EntityMatches,
    EntityRef,
    EpisodeText,
    ExtractedEntities,
    ExtractedEntity,
    ExtractedFact,
    ExtractedFacts,
    ExtractedGraph,
    FactVerdicts,
    MissedEntities,
    RewrittenSummaries,
)
from chronomem.ingest.resolution import name_tokens
from chronomem.ingest.summaries import mention_note
from chronomem.llm.testing import FunctionModel
from chronomem.text.words import WORD

__all__ = ["HEURISTIC", "HEURISTIC_LABEL", "STAND_INS", "describe_model", "heuristic_answer", "heuristic_model"]

HEURISTIC = "heuristic"  # the model name (CHRONOMEM_LLM_MODEL=heuristic, --model heuristic)
HEURISTIC_LABEL = "heuristic (a rule-based stand-in, not an LLM)"



def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STARTERS = _wordset(
    "i i'm i've i'd i'll im hey hi hello thanks thank wow yes yeah no oh ah so and but or the that this these those "
    "it it's its what how why when where who which you your you're we we're our they their he she his her my me "
    "a an if well sure great awesome cool nice love glad sounds definitely absolutely totally really just also "
    "congrats congratulations haha lol omg okay ok good bye see take gonna let let's any anything some there "
    "here do did does can could would should will is are was were been be have has had not don't didn't "
    "you've you'll you'd that's it's it'll what's there's gonna wanna for of to in on with at about from by"
)
_SKIP_NOUNS = _wordset(
    "lot bit few way time thing things while one kind sort lots day days week weeks month months year years moment "
    "same other best most more much own first last next new old great good big little whole few couple"
)
_CAPITALIZED = re.compile(r"\b[A-Z][\w'&-]*(?:\s+(?:of\s+)?[A-Z][\w'&-]*)*")
_NOUN_PHRASE = re.compile(
    r"\b(?:my|the|a|an|our|your|his|her|their|some|this|that)\s+((?:[A-Z][\w-]+\s+)?[a-z][a-z-]+(?:\s+[a-z][a-z-]+)?)"
)
_SENTENCE = re.compile(r"[^.!?]+[.!?]?")
_VERBS = (
    ("work", "WORKS_AT"), ("live", "LIVES_IN"), ("moved", "MOVED_TO"), ("love", "LOVES"), ("like", "LIKES"),
    ("went", "WENT_TO"), ("go ", "GOES_TO"), ("visit", "VISITED"), ("paint", "PAINTS"), ("read", "READ"),
    ("play", "PLAYS"), ("join", "JOINED"), ("start", "STARTED"), ("plan", "PLANS"), ("want", "PLANS"),
    ("study", "STUDIES"), ("studied", "STUDIES"), ("date", "IS_DATING"), ("made", "MADE"), ("got", "HAS"),
    ("have", "HAS"), ("has", "HAS"), ("bought", "BOUGHT"), ("feel", "FEELS_ABOUT"), ("help", "HELPS"),
)
_STATE_RELATIONS = frozenset({"WORKS_AT", "LIVES_IN", "MOVED_TO", "PLANS", "IS_DATING", "STUDIES", "FEELS_ABOUT"})
_MAX_ENTITIES = 6
_MAX_FACTS = 5


def _speaker_and_body(text: EpisodeText) -> tuple[str | None, str]:
    if text.kind is EpisodeKind.MESSAGE and ":" in text.current:
        speaker, body = text.current.split(":", 1)
        if 0 < len(speaker) <= 40:
            return speaker.strip(), body.strip()
    return None, text.current


def _clean(phrase: str) -> str:
    phrase = re.sub(r"'s$", "", phrase.strip(" -'&"))
    words = phrase.split()
    while words and words[0].lower() in _STARTERS:
        words = words[1:]
    return " ".join(words)


def _sentence_start(body: str, position: int) -> bool:
    return not body[:position].strip() or body[:position].rstrip()[-1] in ".!?-"


def _capitalized(body: str) -> list[str]:
    found = []
    for match in _CAPITALIZED.finditer(body):
        name = _clean(match.group(0))
        if not name or name.lower() in _STARTERS or len(name) < 2:
            continue
        if " " not in name and _sentence_start(body, match.start()) and name.endswith(("ing", "ed", "s", "'ll")):
            continue  # "Loving the …", "Excited for …": a capitalized verb, not a name
        found.append(name)
    return found


def _noun_phrases(body: str) -> list[str]:
    found = []
    for match in _NOUN_PHRASE.finditer(body):
        words = [w for w in match.group(1).split() if w.lower() not in _STARTERS]
        if words and words[0] not in _SKIP_NOUNS:
            if len(words) == 2 and (words[1] in _SKIP_NOUNS or words[1].endswith(("ly", "ed"))):
                words = words[:1]
            found.append(" ".join(words))
    return found


def _entities(text: EpisodeText) -> list[ExtractedEntity]:
    speaker, body = _speaker_and_body(text)
    names = ([speaker] if speaker else []) + _capitalized(body) + _noun_phrases(body)
    seen: dict[str, str] = {}
    for name in names:
        seen.setdefault(name.casefold(), name)
    for key in list(seen):  # "LGBTQ" inside "LGBTQ support group": keep the longer name
        if seen[key] != speaker and any(key != other and key in other.split(" ") for other in seen):
            del seen[key]
    kind = "Person"
    result = [ExtractedEntity(name=name, type=kind if name == speaker else "Entity",
                              summary=mention_note(text.current, name, speaker=speaker))
              for name in seen.values()]
    return result[:_MAX_ENTITIES]


def _relation(sentence: str) -> str:
    lowered = sentence.lower()
    for stem, relation in _VERBS:
        if re.search(rf"\b{re.escape(stem.strip())}", lowered):
            return relation
    return "TALKED_ABOUT"


def _first_person(sentence: str, subject: str) -> str:
    sentence = re.sub(r"\bI'm\b", f"{subject} is", sentence)
    sentence = re.sub(r"\bI've\b", f"{subject} has", sentence)
    sentence = re.sub(r"\b(?:I|me)\b", subject, sentence)
    sentence = re.sub(r"\b(?:my|My)\b", f"{subject}'s", sentence)
    return " ".join(sentence.split())[:200]


def _fact(subject: str, target: str, sentence: str, text: EpisodeText) -> ExtractedFact:
    when = resolve_relative(sentence, text.reference_time)
    relation = _relation(sentence)
    # a state ("works at", "plans") is stated concisely, as a model would: such facts can contradict
    fact = (f"{subject} {relation.lower().replace('_', ' ')} {target}" if relation in _STATE_RELATIONS
            else _first_person(sentence.strip(), subject))
    return ExtractedFact(source=subject, relation_type=relation, target=target, fact=fact,
                         quote=sentence.strip(), valid_at=when.isoformat() if when else None)


def _facts(text: EpisodeText, entities: list[EntityRef]) -> list[ExtractedFact]:
    if len(entities) < 2:
        return []
    speaker, body = _speaker_and_body(text)
    subject = speaker or entities[0].name
    sentences = [s.strip() for s in _SENTENCE.findall(body) if s.strip()]
    facts: list[ExtractedFact] = []
    for sentence in sentences:
        named = [e.name for e in entities if e.name != subject and e.name.lower() in sentence.lower()]
        facts.extend(_fact(subject, name, sentence, text) for name in named[:2])
        if len(named) >= 2:  # two things named in one sentence are related
            facts.append(ExtractedFact(source=named[0], relation_type="RELATED_TO", target=named[1],
                                       fact=_first_person(sentence, subject), quote=sentence.strip()))
    return facts[:_MAX_FACTS]


def _is_same_entity(name: str, candidate: str) -> bool:
    mine, theirs = name_tokens(name), name_tokens(candidate)
    return bool(mine) and (mine <= theirs or theirs <= mine or fuzz.ratio(name.lower(), candidate.lower()) >= 80)


def _same_as(questions: Any) -> list[dict[str, Any]]:
    matches = []
    for question in questions:
        match = next((c for c in question.candidates if _is_same_entity(question.name, c.name)), None)
        full = max((question.name, match.name), key=len) if match else None
        matches.append({"index": question.index, "duplicate_of": match.index if match else None, "name": full})
    return matches


def _resolve_entities(ctx: Any) -> EntityMatches:
    return EntityMatches.model_validate({"matches": _same_as(ctx.questions)})


def _said(text: str) -> set[str]:
    """What a fact says besides whose it is: its words in lower case (names are capitalized), function
    words aside. "Lena Berg moved to Bergen" says "moved"; "Lena Berg works at the Bergen aquarium"
    says "works" and "aquarium", nothing of the move, though most of its words are the same names."""
    return {w.lower() for w in re.findall(r"\b[a-z][a-z']*", text) if w not in _STARTERS}


def _overlap(a: str, b: str) -> float:
    """The share of the shorter fact's statement the other makes too: a restatement with more detail
    ("works at Globex" and "works at Globex as an analyst") says all of the shorter one."""
    wa, wb = _said(a), _said(b)
    if not wa or not wb:
        return float(a.strip().lower() == b.strip().lower())
    return len(wa & wb) / min(len(wa), len(wb))


def _verdict(fact: str, relation: str, candidates: Any, same_pair: Any) -> tuple[int | None, list[int]]:
    duplicate = next((c.index for c in candidates if same_pair(c) and _overlap(fact, c.fact) >= 0.5), None)
    if duplicate is not None:
        return duplicate, []
    contradicts = [
        c.index for c in candidates
        if c.relation_type == relation in _STATE_RELATIONS and not same_pair(c) and fact.split()[0] == c.fact.split()[0]
    ]
    return None, contradicts


def _resolve_facts(ctx: Any) -> FactVerdicts:
    verdicts = []
    for question in ctx.questions:
        duplicate, contradicts = _verdict(question.fact, question.relation_type, question.candidates,
                                          lambda c: c.same_pair)
        verdicts.append({"index": question.index, "duplicate_of": duplicate, "contradicts": contradicts})
    return FactVerdicts.model_validate({"verdicts": verdicts})


def _judged(facts: list[ExtractedFact], existing: Any) -> list[ExtractedFact]:
    """Facts with the folded verdicts against the EXISTING FACTS shown (same pair: both names in its text)."""
    judged = []
    for fact in facts:
        def same_pair(candidate: Any, fact: ExtractedFact = fact) -> bool:
            text = candidate.fact.lower()
            return fact.source.lower() in text and fact.target.lower() in text

        duplicate, contradicts = _verdict(fact.fact, fact.relation_type, existing, same_pair)
        judged.append(fact.model_copy(update={"duplicate_of": duplicate, "contradicts": contradicts}))
    return judged


def _rewrite(ctx: Any) -> RewrittenSummaries:
    items = []
    for item in ctx.items:
        sentences = [s.strip() for s in _SENTENCE.findall(item.summary) if s.strip()]
        kept: list[str] = []
        for sentence in reversed(sentences):
            if sum(len(s) + 1 for s in kept) + len(sentence) > ctx.target_chars:
                break
            kept.insert(0, sentence)
        items.append({"index": item.index, "summary": " ".join(kept) or item.summary[: ctx.target_chars]})
    return RewrittenSummaries.model_validate({"summaries": items})


def _running_summary(prompt: Any, ctx: Any) -> BaseModel:
    """A user or thread summary: the previous one and the new lines, the most recent kept."""
    lines = [ctx.previous, *(" ".join(line.removeprefix("- ").split()) for line in ctx.new_lines)]
    text = " ".join(line for line in lines if line)
    return prompt.answer.model_validate({"summary": text[-ctx.max_chars :]})  # type: ignore[no-any-return]


def heuristic_answer(prompt: Any, context: Any) -> Any:
    """The FunctionModel callback: one deterministic answer per ingestion prompt (by ``prompt.name``)."""
    name = prompt.name
    if name == "extract_entities":
        return ExtractedEntities(entities=_entities(context.episode))
    if name == "entity_reflexion":
        return MissedEntities()
    if name == "extract_facts":
        facts = _judged(_facts(context.episode, list(context.entities)), context.existing)
        return ExtractedFacts.model_validate({"facts": facts, "same_as": _same_as(context.ambiguous)})
    if name == "extract_graph":
        entities = _entities(context.episode)
        refs = [EntityRef(e.name, e.type) for e in entities]
        return ExtractedGraph(entities=entities, facts=_facts(context.episode, refs))
    if name == "resolve_entities":
        return _resolve_entities(context)
    if name == "resolve_facts":
        return _resolve_facts(context)
    if name == "review_endings":  # the rules of chronomem.ingest.endings already closed what they can
        return EndedFacts()
    if name == "rewrite_summaries":
        return _rewrite(context)
    if name in ("user_summary", "thread_summary"):
        return _running_summary(prompt, context)
    if name.startswith("community_"):
        return _community_answer(prompt, context)
    if name == "rerank_passages":
        return _grades(prompt, context)
    raise ValueError(f"the heuristic model does not know the prompt {name!r}")


def _grades(prompt: Any, context: Any) -> BaseModel:
    """Cross-encoder grades: the share of the query's words in each passage, on the 0-10 scale."""
    query = set(WORD.findall(context.query.casefold()))
    grades = [round(10 * len(query & set(WORD.findall(p.casefold()))) / len(query)) if query else 0
              for p in context.passages]
    return prompt.answer.model_validate({"scores": grades})  # type: ignore[no-any-return]


def _community_answer(prompt: Any, context: Any) -> Any:
    """Community summaries from member names: the most central members are the topics."""
    name, answer = prompt.name, prompt.answer

    def about(names: Sequence[str], lead: str = "") -> dict[str, Any]:
        topics = list(dict.fromkeys(n for n in names if n))[:3] or ["community"]
        return {"summary": (lead + "Members include " + ", ".join(names[:6]) + ".").strip(), "topics": topics}

    if name == "community_summarize":
        return answer.model_validate(
            {"communities": [{"key": c.key, **about([m.name for m in c.members])} for c in context.communities]}
        )
    if name == "community_map":
        return answer.model_validate({"summary": about([m.name for m in context.members])["summary"]})
    if name == "community_reduce":
        return answer.model_validate(about(list(context.central_names)))
    if name == "community_update":
        return answer.model_validate({"communities": [
            {"key": c.key, **about([*c.name.split(", "), *(m.name for m in c.added)], c.summary + " ")}
            for c in context.changes
        ]})
    raise ValueError(f"the heuristic model does not know the prompt {name!r}")


def heuristic_model(latency_s: float = 0.0) -> FunctionModel:
    """The heuristic stand-in as a language model (labelled ``heuristic``; ``latency_s`` simulates a provider)."""
    # what it writes is the messages' own sentences, not a model's prose (see ``writes_prose``)
    return FunctionModel(heuristic_answer, model_name=HEURISTIC_LABEL, latency_s=latency_s, writes_prose=False)


# The models a settings object may name that no provider serves (``build_language_model(named=...)``).
STAND_INS = {HEURISTIC: heuristic_model}


def describe_model(spec: str | None) -> str:
    """How outputs name a configured model: the stand-in says plainly that it is not an LLM."""
    if spec is None:
        return "none (episodes are stored unextracted until a model is configured)"
    return HEURISTIC_LABEL if spec == HEURISTIC else spec
