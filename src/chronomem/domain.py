"""The domain: plain, frozen data and pure functions (docs/design.md §1).

Every object belongs to exactly one group. Embeddings are not part of these models: they travel
beside them (see ``chronomem.store.GraphWrite``) so that domain objects stay small, comparable and
cheap to validate.

Bi-temporal model: ``valid_at``/``invalid_at`` live on T (the world's timeline), ``created_at`` /
``expired_at`` on T' (our database's timeline). A fact is *true at t* when
``valid_at <= t < invalid_at`` and *known at t'* when ``created_at <= t' < expired_at`` (``None``
bounds are open).

History is append-only (docs/design.md §1): a fact is a sequence of *versions* under one id. A change to
what a fact says (its text, participants, attributes or any of its four timestamps) is recorded as
a new version with its own transaction time, ``recorded_at``; the version before it stays as it was,
in force on T' from its own ``recorded_at`` until the next one's. Provenance (``episode_ids``,
``sources``) only grows (or loses a deleted episode) and is kept on the latest version.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from chronomem.text.names import name_key, normalize_name, split_legal_form
from chronomem.timeutil import UTCDateTime, ensure_utc, utc_now

__all__ = [
    "Community",
    "Entity",
    "Episode",
    "EpisodeKind",
    "EpisodeStatus",
    "EvidenceSpan",
    "Fact",
    "FactSource",
    "FactVersion",
    "Mention",
    "is_current",
    "known_at",
    "new_id",
    "to_relation_type",
    "true_at",
]

_RELATION_TYPE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")


def new_id() -> str:
    """A fresh object id (UUID4, hex)."""
    return uuid.uuid4().hex


def to_relation_type(text: str) -> str:
    """Coerce a relation name ("works for", "worksFor") to SCREAMING_SNAKE_CASE ("WORKS_FOR")."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    words = re.findall(r"[A-Za-z0-9]+", unicodedata.normalize("NFKD", spaced))
    result = "_".join(w.upper() for w in words)
    if not result or not result[0].isalpha():
        result = "RELATES_TO" if not result else f"R_{result}"
    return result


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EpisodeKind(StrEnum):
    MESSAGE = "message"
    TEXT = "text"
    JSON = "json"


class EpisodeStatus(StrEnum):
    PENDING = "pending"  # stored, waiting for extraction
    PROCESSING = "processing"  # a worker holds it
    DONE = "done"  # extracted into the graph
    FAILED = "failed"  # extraction failed after retries; see last_error; retryable
    UNEXTRACTED = "unextracted"  # stored and searchable, no model configured; `reprocess` extracts it


class Episode(_Frozen):
    """The raw input, never deduplicated: the root of all provenance. What it says never changes;
    its metadata, which is not provenance, can be replaced (``EpisodeQueue.set_episode_metadata``)."""

    id: str = Field(default_factory=new_id, min_length=1)
    group_id: str = Field(min_length=1)
    kind: EpisodeKind = EpisodeKind.MESSAGE
    content: str
    speaker: str | None = None  # message episodes: who said it
    role: str | None = None  # message episodes: "user", "assistant", …
    reference_time: UTCDateTime = Field(default_factory=utc_now)  # when it was said or happened
    created_at: UTCDateTime = Field(default_factory=utc_now)  # when we ingested it
    source_description: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    status: EpisodeStatus = EpisodeStatus.PENDING
    attempts: int = 0
    last_error: str | None = None
    usage: dict[str, Any] = Field(default_factory=dict)  # model calls, tokens, time spent on it

    @property
    def text(self) -> str:
        """The content as the model and the full-text index see it ("speaker: text" for messages)."""
        if self.kind is EpisodeKind.MESSAGE and self.speaker:
            return f"{self.speaker}: {self.content}"
        return self.content


class Entity(_Frozen):
    """A node of the semantic subgraph."""

    id: str = Field(default_factory=new_id, min_length=1)
    group_id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    labels: tuple[str, ...] = ("Entity",)
    summary: str = ""
    # who wrote the summary: "model" (a language model wrote every part), "graph" (some part is the
    # graph's own text: fact and mention sentences, the fallback without a model), "edit" (by hand);
    # "" for none yet (see chronomem.ingest.summaries)
    summary_source: str = ""
    aliases: tuple[str, ...] = ()
    attributes: dict[str, Any] = Field(default_factory=dict)
    created_at: UTCDateTime = Field(default_factory=utc_now)

    @property
    def normalized_names(self) -> set[str]:
        """Lookup forms of the name and aliases, as the stores index them: each name's
        :func:`normalize_name`, and that of its :func:`name_key` with and without a legal form, so an
        entity is found under every name equal to one of its own ("Google" finds "Google LLC";
        resolution then compares the keys themselves)."""
        names = (self.name, *self.aliases)
        keys = {name_key(n) for n in names} | {split_legal_form(n)[0] for n in names}
        return ({normalize_name(n) for n in names} | {normalize_name(k) for k in keys}) - {""}


class EvidenceSpan(_Frozen):
    """Where an episode states a fact: ``episode.text[start:end]`` is the quote (character offsets)."""

    episode_id: str = Field(min_length=1)
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class FactSource(_Frozen):
    """A named source outside the episodes that states a fact: a CRM record, a file and line, …

    ``name`` says where (``"crm"``, ``"handbook.md"``), ``reference`` which part of it
    (``"account/4711"``, ``"line 42"``)."""

    name: str = Field(min_length=1)
    reference: str = ""

    @field_validator("name", "reference")
    @classmethod
    def _trimmed(cls, value: str) -> str:
        return value.strip()


class Fact(_Frozen):
    """An entity edge: a natural-language fact between entities, with four timestamps.

    ``version`` and ``recorded_at`` say which version of the fact this is and since when (on T')
    our records hold it; a new fact is version 1, recorded when it was created."""

    id: str = Field(default_factory=new_id, min_length=1)
    group_id: str = Field(min_length=1)
    source_id: str
    target_id: str
    other_entity_ids: tuple[str, ...] = ()  # further participants of a hyperedge
    relation_type: str = "RELATES_TO"
    fact: str = Field(min_length=1)
    episode_ids: tuple[str, ...] = ()  # provenance, oldest first
    sources: tuple[FactSource, ...] = ()  # provenance outside the episodes, oldest first
    evidence: tuple[EvidenceSpan, ...] = ()  # the quotes of its episodes that state it
    attributes: dict[str, Any] = Field(default_factory=dict)
    valid_at: UTCDateTime | None = None
    invalid_at: UTCDateTime | None = None
    created_at: UTCDateTime = Field(default_factory=utc_now)
    expired_at: UTCDateTime | None = None
    version: int = Field(default=1, ge=1)
    recorded_at: UTCDateTime = Field(default_factory=utc_now)  # transaction time of this version

    @model_validator(mode="before")
    @classmethod
    def _first_version_recorded_at_creation(cls, data: Any) -> Any:
        """Unless told otherwise, a fact's version was recorded when the fact was created."""
        if isinstance(data, dict) and data.get("recorded_at") is None:
            created = data.get("created_at") or utc_now()
            data = {**data, "created_at": created, "recorded_at": created}
        return data

    @field_validator("relation_type")
    @classmethod
    def _screaming_snake(cls, value: str) -> str:
        if not _RELATION_TYPE.match(value):
            raise ValueError(f"relation_type must be SCREAMING_SNAKE_CASE, got {value!r}")
        return value

    @property
    def entity_ids(self) -> tuple[str, ...]:
        return (self.source_id, self.target_id, *self.other_entity_ids)

    @property
    def source_count(self) -> int:
        """How many episodes and external sources state the fact."""
        return len(self.episode_ids) + len(self.sources)


class FactVersion(_Frozen):
    """One version of a fact as our records held it from ``fact.recorded_at`` until
    ``recorded_to`` (``None``: the latest version, in force now)."""

    fact: Fact
    recorded_to: UTCDateTime | None = None

    @property
    def recorded_from(self) -> datetime:
        return self.fact.recorded_at


class Mention(_Frozen):
    """Episode ↔ entity: the entity was mentioned in the episode."""

    group_id: str = Field(min_length=1)
    episode_id: str
    entity_id: str


class Community(_Frozen):
    """A cluster of entities with a summary; its name (keywords, topics) is embedded and searchable."""

    id: str = Field(default_factory=new_id, min_length=1)
    group_id: str = Field(min_length=1)
    name: str = ""
    summary: str = ""
    member_ids: tuple[str, ...] = ()
    created_at: UTCDateTime = Field(default_factory=utc_now)


def _before(bound: datetime | None, t: datetime) -> bool:
    """bound <= t, with None as minus infinity."""
    return bound is None or bound <= t


def _after(bound: datetime | None, t: datetime) -> bool:
    """t < bound, with None as plus infinity."""
    return bound is None or t < bound


def true_at(fact: Fact, t: datetime) -> bool:
    """Was the fact true in the world at ``t``? (valid_at <= t < invalid_at)"""
    t = ensure_utc(t)
    return _before(fact.valid_at, t) and _after(fact.invalid_at, t)


def known_at(fact: Fact, t: datetime) -> bool:
    """Did our database hold the fact as current at ``t``? (created_at <= t < expired_at)"""
    t = ensure_utc(t)
    return _before(fact.created_at, t) and _after(fact.expired_at, t)


def is_current(fact: Fact, now: datetime | None = None) -> bool:
    """Neither superseded in our records nor ended in the world as of ``now``."""
    now = utc_now() if now is None else ensure_utc(now)
    return fact.expired_at is None and _after(fact.invalid_at, now)
