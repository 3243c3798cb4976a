"""The library facade: one object that wires a store, an embedder, a language model, ingestion,
retrieval and communities from :class:`~chronomem.settings.Settings`, and offers what users do.

    async with await Chronomem.open() as memory:
        await memory.add_episode("alice", "Alice: I moved to Lisbon last May.")
        print(await memory.context(["alice"], "Where does Alice live?"))

Ingestion comes in two speeds. :meth:`Chronomem.add_episode` extracts at once and returns the
result. :meth:`Chronomem.enqueue` only stores episodes durably as ``pending`` (what the HTTP
service does before it answers); a worker pool (``chronomem.service.workers``) then calls
:meth:`Chronomem.process` on each, in order per group.

Export and import (:meth:`Chronomem.export_group`, :meth:`Chronomem.import_group`) carry *every*
object of a group and its stored vectors (float32, base64), so a round trip needs no model and gives
back every object exactly, vectors bit for bit (a store keeps a unit vector as it was given). The export names the embedder that made the vectors; importing into a memory with another
embedder is refused unless ``reembed=True``, which embeds the same texts ingestion embeds (entity
names, fact texts, community names, episode texts) with the importing embedder, deterministically.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from types import EllipsisType
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack

import numpy as np
from pydantic import BaseModel, ConfigDict

from chronomem.domain import (
    Community,
    Entity,
    Episode,
    EpisodeKind,
    EpisodeStatus,
    Fact,
    FactSource,
    FactVersion,
    Mention,
    to_relation_type,
)
from chronomem.errors import ConflictError, InvalidInputError, NotFoundError
from chronomem.filters import SearchFilters
from chronomem.settings import Settings
from chronomem.store.base import GraphWrite, GroupStats, Scope, Store

if TYPE_CHECKING:
    from chronomem.communities import CommunityBuilder
    from chronomem.crossencoder.base import CrossEncoder
    from chronomem.embed.base import Embedder
    from chronomem.ingest import Ingestor, IngestResult, RemovalResult
    from chronomem.llm.base import LanguageModel
    from chronomem.search.searcher import Searcher, SearchResults

__all__ = ["EXPORT_FORMAT", "Chronomem", "EpisodeFields", "GroupExport", "NewMessage"]

EXPORT_FORMAT = "chronomem.group/1"


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
    reference_time: Any = None  # an aware datetime; None = now
    metadata: dict[str, Any] | None = None
    id: str | None = None  # give one to make the add idempotent


class GroupExport(BaseModel):
    """Everything one group holds, in a form that imports back exactly."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal["chronomem.group/1"] = "chronomem.group/1"
    group_id: str
    embedder: str
    dimension: int
    episodes: tuple[Episode, ...] = ()
    entities: tuple[Entity, ...] = ()
    facts: tuple[Fact, ...] = ()
    mentions: tuple[Mention, ...] = ()
    communities: tuple[Community, ...] = ()
    vectors: dict[Scope, dict[str, str]] = {}  # scope -> id -> base64 of little-endian float32


def _encode(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _decode(text: str, dimension: int) -> np.ndarray:
    vector = np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float32)
    if vector.shape != (dimension,):
        raise InvalidInputError(f"a vector in the export has {vector.shape[0]} values, expected {dimension}")
    return vector


def _regroup(objects: Sequence[Any], group_id: str) -> list[Any]:
    return [o if o.group_id == group_id else o.model_copy(update={"group_id": group_id}) for o in objects]


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
        ingestor: Ingestor | None = None,
        owns_store: bool = True,
        owned_models: Sequence[Any] = (),
    ) -> None:
        from chronomem.communities import CommunityBuilder, CommunityConfig
        from chronomem.ingest import Ingestor
        from chronomem.search.searcher import Searcher

        self.settings = settings or Settings()
        self.store = store
        self.embedder = embedder
        self.llm = llm
        # Extension updates names and summaries without a model, so an episode costs no extra call;
        # the drift-triggered refresh (or an explicit build) re-summarises with the model in batches.
        self.communities: CommunityBuilder = CommunityBuilder(
            store, embedder, llm, config=CommunityConfig(summarize_on_extend=False)
        )
        self.ingestor: Ingestor = ingestor or Ingestor(store, embedder, llm, on_entities_added=self._place_entities)
        self.searcher: Searcher = Searcher(store, embedder, cross_encoder)
        self._owns_store = owns_store
        self._owned_models = list(owned_models)  # built by open(): their connections close with us
        self._closed = False

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
    ) -> Chronomem:
        """Open the memory ``settings`` describe (default: ``Settings()``, an embedded store under
        ``.chronomem/``, the local embedder, no model). Ready-made parts passed in win over the
        settings; a passed-in store is not closed by :meth:`close`."""
        settings = settings or Settings()
        owns_store = store is None
        owned: list[Any] = []
        if store is None:
            from chronomem.store.factory import open_store

            if settings.store_url is None:
                settings.data_dir.mkdir(parents=True, exist_ok=True)
            store = await open_store(settings.resolved_store_url)
        if embedder is None:
            from chronomem.embed import build_embedder

            embedder = build_embedder(settings.embedder, settings=settings.llm)
            owned.append(embedder)
        if llm is None and settings.llm is not None:
            from chronomem.llm.settings import build_language_model

            llm = build_language_model(settings.llm)
            owned.append(llm)
        return cls(
            store=store, embedder=embedder, llm=llm, cross_encoder=cross_encoder, settings=settings,
            owns_store=owns_store, owned_models=owned,
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
        await self._refuse_reused_ids(episodes)
        return [await self.ingestor.enqueue(episode) for episode in episodes]

    async def _refuse_reused_ids(self, episodes: Sequence[Episode]) -> None:
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

    async def search(self, group_ids: str | Sequence[str], query: str, **options: Any) -> SearchResults:
        """Search facts, entities, episodes and communities of one group or several (see
        ``Searcher.search``)."""
        return await self.searcher.search(_groups(group_ids), query, **options)

    async def context(self, group_ids: str | Sequence[str], query: str, **options: Any) -> str:
        """The paper's context block for ``query`` over one group or several (see
        ``Searcher.context``)."""
        return await self.searcher.context(_groups(group_ids), query, **options)

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

    # -- export / import ---------------------------------------------------------------------------

    async def export_group(self, group_id: str) -> GroupExport:
        """Every object of the group and its vectors (see the module docstring)."""
        store = self.store
        episodes = await store.list_episodes(group_id, newest_first=False)
        entities = await store.list_entities(group_id)
        facts = await store.list_facts(group_id)
        communities = await store.list_communities(group_id)
        mentioned = await store.entities_of_episodes(group_id, [e.id for e in episodes])
        mentions = [
            Mention(group_id=group_id, episode_id=episode_id, entity_id=entity_id)
            for episode_id in sorted(mentioned)
            for entity_id in sorted(mentioned[episode_id])
        ]
        scoped: dict[Scope, list[str]] = {
            Scope.EPISODES: [e.id for e in episodes], Scope.ENTITIES: [e.id for e in entities],
            Scope.FACTS: [f.id for f in facts], Scope.COMMUNITIES: [c.id for c in communities],
        }
        vectors: dict[Scope, dict[str, str]] = {}
        for scope, ids in scoped.items():
            found = await store.get_vectors(group_id, scope, ids) if ids else {}
            vectors[scope] = {i: _encode(found[i]) for i in sorted(found)}
        return GroupExport(
            group_id=group_id, embedder=self.embedder.model_name, dimension=self.embedder.dimension,
            episodes=tuple(episodes), entities=tuple(entities), facts=tuple(facts), mentions=tuple(mentions),
            communities=tuple(communities), vectors=vectors,
        )

    async def import_group(
        self, export: GroupExport, *, group_id: str | None = None, reembed: bool = False
    ) -> GroupStats:
        """Write an export into ``group_id`` (default: the exported group's id), which must be empty,
        in one atomic write. Returns the group's counts afterwards."""
        target = group_id or export.group_id
        if (await self.store.stats(target)).episodes or await self.store.list_entities(target, limit=1):
            raise ConflictError(f"group {target!r} is not empty; import into a new group id")
        same_model = export.embedder == self.embedder.model_name and export.dimension == self.embedder.dimension
        if not same_model and not reembed:
            raise ConflictError(
                f"the export's vectors come from {export.embedder!r} ({export.dimension}d) but this memory "
                f"embeds with {self.embedder.model_name!r}; pass reembed=True to embed the texts again"
            )
        batch = GraphWrite(
            target, episodes=_regroup(export.episodes, target), entities=_regroup(export.entities, target),
            facts=_regroup(export.facts, target), mentions=_regroup(export.mentions, target),
            communities=_regroup(export.communities, target),
        )
        if same_model:
            self._attach_vectors(batch, export)
        else:
            await self._embed_into(batch)
        await self.store.write(batch)
        return await self.store.stats(target)

    @staticmethod
    def _attach_vectors(batch: GraphWrite, export: GroupExport) -> None:
        def decoded(scope: Scope) -> dict[str, np.ndarray]:
            return {i: _decode(v, export.dimension) for i, v in export.vectors.get(scope, {}).items()}

        batch.episode_vectors = decoded(Scope.EPISODES)
        batch.entity_vectors = decoded(Scope.ENTITIES)
        batch.fact_vectors = decoded(Scope.FACTS)
        batch.community_vectors = decoded(Scope.COMMUNITIES)

    async def _embed_into(self, batch: GraphWrite) -> None:
        async def embed(pairs: list[tuple[str, str]]) -> dict[str, np.ndarray]:
            if not pairs:
                return {}
            matrix = await self.embedder.embed([text for _, text in pairs])
            return {object_id: matrix[row] for row, (object_id, _) in enumerate(pairs)}

        batch.episode_vectors = await embed([(e.id, e.text) for e in batch.episodes])
        batch.entity_vectors = await embed([(e.id, e.name) for e in batch.entities])
        batch.fact_vectors = await embed([(f.id, f.fact) for f in batch.facts])
        batch.community_vectors = await embed([(c.id, c.name) for c in batch.communities if c.name])


def _groups(group_ids: str | Sequence[str]) -> list[str]:
    return [group_ids] if isinstance(group_ids, str) else list(group_ids)


def _only(found: Sequence[Any], kind: str, object_id: str) -> Any:
    if not found:
        raise NotFoundError(f"{kind} {object_id!r} not found")
    return found[0]
