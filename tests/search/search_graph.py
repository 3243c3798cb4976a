"""A small scripted graph in a real SQLite store, embedded with the deterministic hashing embedder.

Timeline: Alice worked at Acme (2020 → 2023); we learned on 2023-01-05 that she moved to Globex.
Bob went to Paris in May 2022 and likes green tea. A chain Alice – Bob – Carol – Dave gives BFS and
node distance something to measure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from chronomem.domain import Community, Entity, Episode, EpisodeStatus, Fact, Mention
from chronomem.embed.testing import HashingEmbedder
from chronomem.store.base import GraphWrite, Store

G = "group-1"


def t(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


NOW = t(2024, 6, 1)


@dataclass
class Graph:
    store: Store
    embedder: HashingEmbedder


def _entity(key: str, name: str, labels: tuple[str, ...] = ("Person",), summary: str = "") -> Entity:
    return Entity(id=key, group_id=G, name=name, labels=labels, summary=summary, created_at=t(2020))


def _fact(key: str, src: str, dst: str, text: str, rel: str, episodes: tuple[str, ...] = (), **times) -> Fact:
    times.setdefault("created_at", t(2020, 1, 2))
    return Fact(
        id=key, group_id=G, source_id=src, target_id=dst, fact=text, relation_type=rel, episode_ids=episodes, **times
    )


async def build_graph(store: Store, embedder: HashingEmbedder, group_id: str = G) -> None:
    entities = [
        _entity("alice", "Alice", summary="Alice is a software engineer."),
        _entity("bob", "Bob", summary="Bob is Alice's friend who travels."),
        _entity("carol", "Carol"),
        _entity("dave", "Dave"),
        _entity("acme", "Acme Corp", ("Organization",), "A company making anvils."),
        _entity("globex", "Globex", ("Organization",), "A technology company."),
        _entity("paris", "Paris", ("Place",), "The capital of France."),
    ]
    facts = [
        _fact("f_acme", "alice", "acme", "Alice works at Acme Corp", "WORKS_AT", ("e1",),
              valid_at=t(2020), invalid_at=t(2023), expired_at=t(2023, 1, 5)),
        _fact("f_globex", "alice", "globex", "Alice works at Globex", "WORKS_AT", ("e3",),
              valid_at=t(2023), created_at=t(2023, 1, 5)),
        _fact("f_friends", "alice", "bob", "Alice and Bob are close friends", "FRIENDS_WITH", ("e1", "e2", "e3")),
        _fact("f_paris", "bob", "paris", "Bob travelled to Paris for a conference", "TRAVELLED_TO", ("e2",),
              valid_at=t(2022, 5, 10)),
        _fact("f_tea", "bob", "carol", "Bob drinks green tea with Carol every morning", "DRINKS_WITH", ("e2",)),
        _fact("f_chain", "carol", "dave", "Carol mentors Dave at the chess club", "MENTORS"),
    ]
    episodes = [
        Episode(id="e1", group_id=G, content="I just joined Acme Corp, and Bob says hi", speaker="Alice",
                reference_time=t(2020, 1, 2), created_at=t(2020, 1, 2), status=EpisodeStatus.DONE),
        Episode(id="e2", group_id=G, content="Greetings from Paris! Green tea with Carol later", speaker="Bob",
                reference_time=t(2022, 5, 10), created_at=t(2022, 5, 10), status=EpisodeStatus.DONE),
        Episode(id="e3", group_id=G, content="I moved to Globex this week", speaker="Alice",
                reference_time=t(2023, 1, 5), created_at=t(2023, 1, 5), status=EpisodeStatus.DONE),
    ]
    mentions = [("e1", "alice"), ("e1", "acme"), ("e1", "bob"), ("e2", "bob"), ("e2", "paris"), ("e2", "carol"),
                ("e3", "alice"), ("e3", "globex")]
    communities = [
        Community(id="c_work", group_id=G, name="employers companies work", summary="Where Alice worked.",
                  member_ids=("alice", "acme", "globex")),
        Community(id="c_travel", group_id=G, name="travel friends", summary="Bob's trips and friends.",
                  member_ids=("bob", "paris", "carol")),
    ]
    if group_id != G:
        entities = [e.model_copy(update={"group_id": group_id}) for e in entities]
        facts = [f.model_copy(update={"group_id": group_id}) for f in facts]
        episodes = [e.model_copy(update={"group_id": group_id}) for e in episodes]
        communities = [c.model_copy(update={"group_id": group_id}) for c in communities]

    async def vectors(texts: dict[str, str]):
        matrix = await embedder.embed(list(texts.values()))
        return dict(zip(texts, matrix, strict=True))

    await store.write(
        GraphWrite(
            group_id=group_id,
            episodes=episodes,
            entities=entities,
            facts=facts,
            mentions=[Mention(group_id=group_id, episode_id=e, entity_id=n) for e, n in mentions],
            communities=communities,
            entity_vectors=await vectors({e.id: e.name for e in entities}),
            fact_vectors=await vectors({f.id: f.fact for f in facts}),
            episode_vectors=await vectors({e.id: e.text for e in episodes}),
            community_vectors=await vectors({c.id: c.name for c in communities}),
        )
    )

