"""The library facade: one object that wires a store, an embedder, a language model, ingestion,
retrieval and communities from :class:`~chronomem.config.settings.Settings`, and offers what users do.

    async with await Chronomem.open() as memory:
        await memory.add_episode("alice", "Alice: I moved to Lisbon last May.")
        print(await memory.context(["alice"], "Where does Alice live?"))

Ingestion comes in two speeds. :meth:`Chronomem.add_episode` extracts at once and returns the
result. :meth:`Chronomem.enqueue` only stores episodes durably as ``pending`` (what the HTTP
service does before it answers); a worker pool (``chronomem.app.workers``) then calls
:meth:`Chronomem.process` on each, in order per group.

The facade builds its ingestion pipeline itself, from the ingestion config, ontology and JSON
mappings it is given (else the settings'), and always plugs community extension into it: every way
of making a memory extends communities as entities arrive. Export and import of a whole group are
:mod:`chronomem.archive`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from types import EllipsisType
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, Unpack

from chronomem.archive import GroupExport, export_group, import_group
from chronomem.communities import CommunityBuilder, CommunityConfig
from chronomem.config.settings import Settings
from chronomem.domain import (
    Community,
    Entity,
    Episode,
    EpisodeKind,
    EpisodeStatus,
    Fact,
    FactSource,
    FactVersion,
    to_relation_type,
)
from chronomem.errors import ConfigurationError, ConflictError, InvalidInputError, NotFoundError
from chronomem.filters import SearchFilters
from chronomem.ingest import IngestConfig, Ingestor, IngestResult, JsonMapping, Ontology, RemovalResult
from chronomem.search import Searcher, SearchResults
from chronomem.search.config import recipe
from chronomem.store.base import GraphWrite, GroupStats, Store

if TYPE_CHECKING:
    from chronomem.crossencoder.base import CrossEncoder
    from chronomem.embed.base import Embedder
    from chronomem.filters import SearchFilters
    from chronomem.ingest.profiles import GroupProfiles
    from chronomem.llm.base import LanguageModel
    from chronomem.search.config import SearchConfig

__all__ = ["Chronomem", "EpisodeFields", "NewMessage"]

_Found = TypeVar("_Found", Episode, Entity, Fact)


class EpisodeFields(TypedDict, total=False):
    """What an episode may carry besides its group and content (all optional)."""

    kind: EpisodeKind | str  # "message" (default), "text" or "json"
    speaker: str | None  # message episodes: who said it
    role: str | None  # message episodes: "user", "assistant", …
    reference_time: datetime | None  # when it was said or happened (aware); default now
    source_description: str
    metadata: dict[str, Any] | None
    episode_id: str | None  # give one to make adding idempotent


@dataclass(frozen=True, slots=True)
class NewMessage:
    """One chat message to remember: ``role`` ("user", "assistant", …), the speaker's ``name``."""

    content: str
    role: str = "user"
    name: str | None = None
    reference_time: datetime | None = None  # aware; None = now
    metadata: dict[str, Any] | None = None
    id: str | None = None  # give one to make the add idempotent


class Chronomem:
    """A memory: a store plus the models and pipelines that fill and query it."""

    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        llm: LanguageModel | None = None,
        cross_encoder: CrossEncoder | None = None,
        settings: Settings | None = None,
        ingest: IngestConfig | None = None,
        ontology: Ontology | None = None,
        json_mappings: Sequence[JsonMapping] | None = None,
        communities: CommunityConfig | None = None,
        owns_store: bool = True,
        owned_models: Sequence[object] = (),
    ) -> None:
        """A memory over ready-made parts. ``ingest``, ``ontology``, ``json_mappings`` and
        ``communities`` default to the ``settings``' own; the mappings join those of the ingestion
        config. ``owns_store``: :meth:`close` closes the store; ``owned_models`` are closed with it."""
        self.settings = settings = settings or Settings()
        self.store = store
        self.embedder = embedder
        self.llm = llm
        self.communities = CommunityBuilder(store, embedder, llm, config=communities or settings.communities)
        self.ingestor = Ingestor(
            store, embedder, llm,
            config=_with_mappings(ingest or settings.ingest, settings.json_mappings if json_mappings is None
                                  else tuple(json_mappings)),
            ontology=ontology or settings.ontology,
            on_entities_added=self._place_entities,  # always: no way of making a memory skips extension
        )
        self.searcher = Searcher(store, embedder, cross_encoder)
        _check_recipes(settings)
        self._owns_store = owns_store
        self._owned_models = list(owned_models)  # built by open(): their connections close with us
        self._closed = False

    def use_group_profiles(self, profiles: GroupProfiles | None) -> None:
        """Let ``profiles`` say, per group, which ontology and JSON mappings its episodes are
        ingested with (the service passes each project's; see :mod:`chronomem.ingest.profiles`)."""
        self.ingestor.profiles = profiles

    @property
    def model_description(self) -> str:
        """The language model as outputs show it; the heuristic stand-in says it is not an LLM."""
        from chronomem.heuristic import describe_model

        if self.llm is None:
            return describe_model(None)
        if self.settings.llm is not None:
            return describe_model(self.settings.llm.model)
        return str(getattr(self.llm, "model_name", type(self.llm).__name__))

    @property
    def ontology(self) -> Ontology:
        """The ontology episodes of groups without a profile of their own are ingested with."""
        return self.ingestor.ontology

    @property
    def json_mappings(self) -> tuple[JsonMapping, ...]:
        return self.ingestor.config.json_mappings

    async def _place_entities(self, group_id: str, entity_ids: list[str]) -> None:
        """New entities join communities (the ingestion pipeline calls this after each write); past the
        drift threshold the group's communities are rebuilt."""
        await self.communities.extend(group_id, entity_ids)
        await self.communities.maybe_refresh(group_id)

    @classmethod
    async def open(
        cls,
        settings: Settings | None = None,
        *,
        store: Store | None = None,
        embedder: Embedder | None = None,
        llm: LanguageModel | None = None,
        cross_encoder: CrossEncoder | None = None,
        ingest: IngestConfig | None = None,
        ontology: Ontology | None = None,
        json_mappings: Sequence[JsonMapping] | None = None,
        communities: CommunityConfig | None = None,
    ) -> Chronomem:
        """Open the memory ``settings`` describe (default: ``Settings()``, an embedded store under
        ``.chronomem/``, the local embedder, no model, the default ingestion and communities).
        Ready-made parts and configs passed in win over the settings; a passed-in store or model is
        not closed by :meth:`close`."""
        settings = settings or Settings()
        owns_store = store is None
        owned: list[object] = []
        if store is None:
            from chronomem.store.factory import open_store

            if settings.store_url is None:
                settings.data_dir.mkdir(parents=True, exist_ok=True)
            store = await open_store(settings.resolved_store_url, settings.store)
        if embedder is None:
            from chronomem.embed import build_embedder

            embedder = build_embedder(
                settings.embedder, settings=settings.llm, local_runtime=settings.embedder_runtime,
                onnx_cache_dir=settings.onnx_cache_dir,
            )
            owned.append(embedder)
        if llm is None and settings.llm is not None:
            from chronomem.heuristic import STAND_INS
            from chronomem.llm.settings import build_language_model

            llm = build_language_model(settings.llm, named=STAND_INS)
            owned.append(llm)
        if cross_encoder is None:
            from chronomem.crossencoder.factory import build_cross_encoder

            cross_encoder = build_cross_encoder(settings.cross_encoder, llm)
        return cls(
            store=store, embedder=embedder, llm=llm, cross_encoder=cross_encoder, settings=settings, ingest=ingest,
            ontology=ontology, json_mappings=json_mappings, communities=communities, owns_store=owns_store,
            owned_models=owned,
        )

    async def close(self) -> None:
        """Close what this memory opened itself (the store, the models' connections). Idempotent."""
        if self._closed:
            return
        self._closed = True
        from chronomem.llm.closing import aclose_model

        for model in self._owned_models:
            await aclose_model(model)
        if self._owns_store:
            await self.store.close()

    async def __aenter__(self) -> Chronomem:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- writes ------------------------------------------------------------------------------------

    async def add_episode(self, group_id: str, content: str, **fields: Unpack[EpisodeFields]) -> IngestResult:
        """Store an episode and extract it into the graph now (fields: see :class:`EpisodeFields`)."""
        return await self.ingest(self.new_episode(group_id, content, **fields))

    async def ingest(self, episode: Episode) -> IngestResult:
        """Store a built episode and extract it now (re-adding an id is a no-op)."""
        return await self.ingestor.add_episode(episode)

    @staticmethod
    def new_episode(group_id: str, content: str, **fields: Unpack[EpisodeFields]) -> Episode:
        """Build (not store) an episode; unset ids and times get fresh values."""
        values: dict[str, Any] = {
            "group_id": group_id, "content": content, "speaker": fields.get("speaker"), "role": fields.get("role"),
            "source_description": fields.get("source_description", ""), "metadata": fields.get("metadata") or {},
        }
        if fields.get("reference_time") is not None:
            values["reference_time"] = fields["reference_time"]
        if fields.get("episode_id") is not None:
            values["id"] = fields["episode_id"]
        try:
            return Episode(kind=EpisodeKind(fields.get("kind", EpisodeKind.MESSAGE)), **values)
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from exc

    @classmethod
    def message_episodes(cls, group_id: str, messages: Sequence[NewMessage], *, source: str = "") -> list[Episode]:
        """Chat messages as message episodes (speaker = the name, else the role)."""
        return [
            cls.new_episode(
                group_id, m.content, kind=EpisodeKind.MESSAGE, speaker=m.name or m.role, role=m.role,
                reference_time=m.reference_time, metadata=m.metadata, episode_id=m.id, source_description=source,
            )
            for m in messages
        ]

    async def enqueue(self, episodes: Sequence[Episode]) -> list[Episode]:
        """Store episodes durably as ``pending`` for the workers; re-sending an id is a no-op that
        returns the stored episode. An id already used for other content is a ``ConflictError``
        raised before anything is stored. Nothing is extracted here."""
        await self.refuse_reused_ids(episodes)
        return [await self.ingestor.enqueue(episode) for episode in episodes]

    async def refuse_reused_ids(self, episodes: Sequence[Episode]) -> None:
        """``ConflictError`` if one of these ids is already stored with other content (what
        :meth:`enqueue` would refuse), for a caller that records the ids elsewhere first."""
        by_group: dict[str, list[Episode]] = {}
        for episode in episodes:
            by_group.setdefault(episode.group_id, []).append(episode)
        for group_id, batch in by_group.items():
            stored = {e.id: e for e in await self.store.get_episodes(group_id, [e.id for e in batch])}
            for episode in batch:
                old = stored.get(episode.id)
                if old is not None and (old.content, old.kind) != (episode.content, episode.kind):
                    raise ConflictError(f"episode id {episode.id!r} is already used for other content")

    async def add_messages(self, group_id: str, messages: Sequence[NewMessage], *, source: str = "") -> list[Episode]:
        """Queue chat messages (see :meth:`enqueue`)."""
        return await self.enqueue(self.message_episodes(group_id, messages, source=source))

    async def process(self, group_id: str, episode_id: str) -> IngestResult:
        """Extract one stored episode (``pending`` or ``failed``) into the graph."""
        return await self.ingestor.process(group_id, episode_id)

    async def retry(self, group_id: str, episode_ids: Sequence[str]) -> list[Episode]:
        """Queue the ``failed`` ones among these episodes again; returns them."""
        episodes = await self.store.get_episodes(group_id, list(episode_ids))
        return [
            await self.store.set_episode_status(group_id, e.id, EpisodeStatus.PENDING)
            for e in episodes
            if e.status is EpisodeStatus.FAILED
        ]

    async def add_episodes(self, episodes: Sequence[Episode], *, progress: bool = False) -> list[IngestResult]:
        """Store and extract many episodes now: each group's in the order given, groups in
        parallel; a failed episode is recorded in its result, not raised."""
        return await self.ingestor.add_episodes(episodes, progress=progress)

    async def add_fact(
        self,
        group_id: str,
        source: str,
        relation_type: str,
        target: str,
        fact: str,
        *,
        valid_at: datetime | None = None,
        invalid_at: datetime | None = None,
        participants: Sequence[str] = (),
        provenance: str | FactSource | None = None,
    ) -> Fact:
        """Add a fact triple with its timestamps, resolved without a model (see ``Ingestor.add_fact``).

        ``participants`` names further entities of a fact over three or more (a hyperedge);
        ``provenance`` is its source: an episode id, or a :class:`FactSource` such as
        ``FactSource(name="crm", reference="account/4711")``. Restating a fact adds its source."""
        return await self.ingestor.add_fact(
            group_id, source, to_relation_type(relation_type), target, fact, valid_at=valid_at, invalid_at=invalid_at,
            participants=participants, provenance=provenance,
        )

    async def update_fact(
        self,
        group_id: str,
        fact_id: str,
        *,
        fact: str | None = None,
        valid_at: datetime | EllipsisType | None = ...,
        invalid_at: datetime | EllipsisType | None = ...,
        source: str | FactSource | None = None,
    ) -> Fact:
        """Correct a fact's text or time range: a new version recorded now, citing ``source`` (an
        episode id or a :class:`FactSource`); the version it replaces stays in
        :meth:`fact_history`. ``...`` keeps a field, ``None`` clears a date."""
        return await self.ingestor.update_fact(
            group_id, fact_id, fact=fact, valid_at=valid_at, invalid_at=invalid_at, provenance=source
        )

    async def reprocess(self, group_id: str) -> int:
        """Extract the group's unextracted and failed episodes (e.g. after configuring a model);
        returns how many."""
        return await self.ingestor.reprocess(group_id)

    async def build_communities(self, group_id: str) -> list[Community]:
        """Recompute the group's communities from scratch (label propagation + summaries)."""
        return await self.communities.build(group_id)

    # -- reads -------------------------------------------------------------------------------------

    async def search(
        self,
        group_ids: str | Sequence[str],
        query: str,
        *,
        config: SearchConfig | None = None,
        filters: SearchFilters | None = None,
        now: datetime | None = None,
        center_entity_id: str | None = None,
        seed_entity_ids: Sequence[str] = (),
        seed_episode_ids: Sequence[str] = (),
    ) -> SearchResults:
        """Search facts, entities, episodes and communities of one group or several (default config:
        ``settings.search.recipe``, ``hybrid_rrf`` unless configured). ``now`` is when the question
        is asked (relative dates in ``query`` resolve against it, "current" is judged at it;
        default: the clock); ``filters`` narrows by type, labels, the four timestamps, ``as_of`` and
        ``known_at``; ``center_entity_id`` is what the node-distance reranker measures from; seeds
        steer breadth-first search."""
        return await self.searcher.search(
            _groups(group_ids), query, config=config or recipe(self.settings.search.recipe), filters=filters, now=now,
            center_entity_id=center_entity_id,
            seed_entity_ids=seed_entity_ids, seed_episode_ids=seed_episode_ids,
        )

    async def context(
        self,
        group_ids: str | Sequence[str],
        query: str,
        *,
        config: SearchConfig | None = None,
        filters: SearchFilters | None = None,
        now: datetime | None = None,
        center_entity_id: str | None = None,
        seed_entity_ids: Sequence[str] = (),
        seed_episode_ids: Sequence[str] = (),
        token_budget: int | None = None,
        include_superseded: bool = False,
        include_episodes: bool = False,
        include_evidence: bool = False,
    ) -> str:
        """The paper's context block for ``query`` over one group or several (default config: the
        ``settings.search.context_recipe``), within ``token_budget`` (default: the settings'). Current facts only unless
        ``include_superseded`` (marked with when they stopped being true); raw episodes only with
        ``include_episodes``; each fact's quote from its episode with ``include_evidence``. The
        other parameters are :meth:`search`'s."""
        return await self.searcher.context(
            _groups(group_ids), query, config=config or recipe(self.settings.search.context_recipe),
            filters=filters, now=now, center_entity_id=center_entity_id,
            seed_entity_ids=seed_entity_ids, seed_episode_ids=seed_episode_ids,
            token_budget=self.settings.search.token_budget if token_budget is None else token_budget,
            include_superseded=include_superseded, include_episodes=include_episodes,
            include_evidence=include_evidence,
        )

    async def get_episode(self, group_id: str, episode_id: str) -> Episode:
        return _only(await self.store.get_episodes(group_id, [episode_id]), "episode", episode_id)

    async def get_entity(self, group_id: str, entity_id: str) -> Entity:
        return _only(await self.store.get_entities(group_id, [entity_id]), "entity", entity_id)

    async def get_fact(self, group_id: str, fact_id: str) -> Fact:
        return _only(await self.store.get_facts(group_id, [fact_id]), "fact", fact_id)

    async def get_episodes(self, group_id: str, episode_ids: Sequence[str]) -> list[Episode]:
        """The episodes among these ids that exist, in the order given."""
        return await self.store.get_episodes(group_id, list(episode_ids))

    async def list_episodes(
        self, group_id: str, *, limit: int | None = None, statuses: Sequence[EpisodeStatus] | None = None
    ) -> list[Episode]:
        """The group's episodes, newest first."""
        return await self.store.list_episodes(group_id, limit=limit, statuses=statuses)

    async def list_entities(self, group_id: str, *, limit: int | None = None, offset: int = 0) -> list[Entity]:
        return await self.store.list_entities(group_id, limit=limit, offset=offset)

    async def list_facts(
        self, group_id: str, *, filters: SearchFilters | None = None, limit: int | None = None, offset: int = 0
    ) -> list[Fact]:
        """The group's facts matching ``filters`` (labels, relation types, ranges on the four
        timestamps, ``as_of``, ``known_at``: see :class:`SearchFilters`), oldest first; without
        filters every fact, superseded ones included. With ``known_at``, each fact as we knew it then."""
        return await self.store.list_facts(group_id, filters=filters, limit=limit, offset=offset)

    async def fact_history(self, group_id: str, fact_id: str) -> list[FactVersion]:
        """Every version of a fact, oldest first, each with when our records held it
        (``recorded_from``, ``recorded_to``); raises ``NotFoundError`` for an unknown fact."""
        history = await self.store.fact_history(group_id, fact_id)
        if not history:
            raise NotFoundError(f"no fact {fact_id!r} in group {group_id!r}")
        return history

    async def list_groups(self) -> list[str]:
        return await self.store.list_groups()

    async def stats(self, group_id: str) -> GroupStats:
        return await self.store.stats(group_id)

    # -- edits -------------------------------------------------------------------------------------

    async def update_entity(
        self,
        group_id: str,
        entity_id: str,
        *,
        name: str | None = None,
        summary: str | None = None,
        labels: Sequence[str] | None = None,
        attributes: dict[str, Any] | None = None,
        source: str = "api",
    ) -> Entity:
        """Change an entity's name, summary, labels or attributes (replaced whole) by hand. The
        change is recorded as an edit episode that mentions the entity (see :mod:`chronomem.edits`);
        a new name is embedded again. Nothing changes when every value is the one stored."""
        from chronomem.edits import changed_fields, edit_episode, edit_mention

        entity = await self.get_entity(group_id, entity_id)
        wanted: dict[str, Any] = {"name": name, "summary": summary, "attributes": attributes,
                                  "labels": tuple(labels) if labels is not None else None}
        wanted = {k: v for k, v in wanted.items() if v is not None}
        if "name" in wanted and not str(wanted["name"]).strip():
            raise InvalidInputError("an entity's name cannot be empty")
        changes = changed_fields(entity.model_dump(include=set(wanted)), wanted)
        if not changes:
            return entity
        if "summary" in changes:
            wanted["summary_source"] = "edit"  # written by hand: neither the model's nor the graph's
        try:
            updated = entity.model_copy(update=wanted)
            Entity.model_validate(updated.model_dump())
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from exc
        episode = edit_episode(entity, changes, source=source)
        batch = GraphWrite(group_id, episodes=[episode], entities=[updated], mentions=[edit_mention(updated, episode)])
        if "name" in changes:
            batch.entity_vectors = {entity_id: (await self.embedder.embed([updated.name]))[0]}
        batch.episode_vectors = {episode.id: (await self.embedder.embed([episode.text]))[0]}
        await self.store.write(batch)
        return updated

    # -- deletes -----------------------------------------------------------------------------------

    async def remove_episode(self, group_id: str, episode_id: str) -> RemovalResult:
        """Delete an episode and what only it supported (see ``Ingestor.remove_episode``)."""
        await self.get_episode(group_id, episode_id)
        return await self.ingestor.remove_episode(group_id, episode_id)

    async def delete_entity(self, group_id: str, entity_id: str) -> Entity:
        """Delete an entity and every fact it takes part in (its mentions and vector go with it)."""
        entity = await self.get_entity(group_id, entity_id)
        facts = await self.store.facts_of_entities(group_id, [entity_id], include_superseded=True)
        await self.store.write(
            GraphWrite(group_id, delete_entity_ids=[entity_id], delete_fact_ids=[f.id for f in facts])
        )
        return entity

    async def delete_fact(self, group_id: str, fact_id: str) -> Fact:
        fact = await self.get_fact(group_id, fact_id)
        await self.store.write(GraphWrite(group_id, delete_fact_ids=[fact_id]))
        return fact

    async def delete_group(self, group_id: str) -> None:
        """Delete a group and everything in it."""
        await self.store.delete_group(group_id)
        self.communities.forget(group_id)

    # -- export / import (chronomem.archive) -------------------------------------------------------

    async def export_group(self, group_id: str) -> GroupExport:
        """Every object of the group and its vectors (see :mod:`chronomem.archive`)."""
        return await export_group(self.store, self.embedder, group_id)

    async def import_group(
        self, export: GroupExport, *, group_id: str | None = None, reembed: bool = False
    ) -> GroupStats:
        """Write an export into ``group_id`` (default: the exported group's id), which must be empty,
        in one atomic write; ``reembed`` embeds its texts again with this memory's embedder. Returns
        the group's counts afterwards (see :mod:`chronomem.archive`)."""
        return await import_group(self.store, self.embedder, export, group_id=group_id, reembed=reembed)


def _with_mappings(config: IngestConfig, mappings: tuple[JsonMapping, ...]) -> IngestConfig:
    """The ingestion config with ``mappings`` added to its own; one name naming two different
    mappings is a ``ConfigurationError`` (which one applies would depend on the order)."""
    combined: dict[str, JsonMapping] = {}
    for mapping in (*config.json_mappings, *mappings):
        known = combined.setdefault(mapping.name, mapping)
        if known != mapping:
            raise ConfigurationError(f"two different JSON mappings are named {mapping.name!r}")
    if len(combined) == len(config.json_mappings):
        return config
    return config.model_copy(update={"json_mappings": tuple(combined.values())})


def _check_recipes(settings: Settings) -> None:
    """A misspelt default recipe fails when the memory opens, not at the first search."""
    for name in (settings.search.recipe, settings.search.context_recipe):
        try:
            recipe(name)
        except InvalidInputError as exc:
            raise ConfigurationError(f"search recipe setting (CHRONOMEM_SEARCH_RECIPE / _CONTEXT_RECIPE): {exc}"
                                     ) from None


def _groups(group_ids: str | Sequence[str]) -> list[str]:
    return [group_ids] if isinstance(group_ids, str) else list(group_ids)


def _only(found: Sequence[_Found], kind: str, object_id: str) -> _Found:
    if not found:
        raise NotFoundError(f"{kind} {object_id!r} not found")
    return found[0]
