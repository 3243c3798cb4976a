"""A small seeded memory for the explorer's browser tests, written through the library as a user
would fill it: episodes extracted by the heuristic stand-in model (not an LLM), fact triples with
their dates, a contradiction that a single-valued relation resolves, a hyperedge, communities and
one failed episode.

The contradiction: Alice WORKS_FOR Acme from 2020-01-01, then WORKS_FOR Globex from 2023-06-01,
which closes the Acme fact at 2023-06-01. The hyperedge: Alice, Bob and Carol FOUNDED a book club.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from chronomem.config.settings import Settings
from chronomem.controlplane import open_control_plane
from chronomem.domain import Entity, Episode, EpisodeStatus, Fact, Mention
from chronomem.embed import build_embedder
from chronomem.heuristic import heuristic_model
from chronomem.ingest.ontology import Ontology
from chronomem.memory import Chronomem
from chronomem.store.base import GraphWrite
from chronomem.store.factory import open_store

PROJECT = "explorer-test"
USER = "alice"
EMBEDDER = "hashing"  # the server is started with the same embedder, so search finds the seeded vectors


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@dataclass(frozen=True)
class Seeded:
    key: str
    group_id: str
    alice_id: str
    acme_fact_id: str
    globex_fact_id: str
    failed_episode_id: str
    lisbon_episode_id: str


async def seed(data_dir: Path) -> Seeded:
    settings = Settings(data_dir=data_dir, embedder=EMBEDDER)
    control = open_control_plane(settings)
    info, key = control.create_key(PROJECT)
    group_id = control.create_user(info.project_id, USER).group_id
    control.close()

    store = await open_store(settings.resolved_store_url)
    embedder = build_embedder(EMBEDDER)
    model = heuristic_model()
    ontology = Ontology(single_valued=["WORKS_FOR"])
    async with Chronomem(store=store, embedder=embedder, llm=model, settings=settings, ontology=ontology) as memory:
        lisbon = await memory.add_episode(group_id, "I moved to Lisbon with Bob.", speaker="Alice",
                                          reference_time=day("2021-03-01"))
        await memory.add_episode(group_id, "I adopted a dog named Rex.", speaker="Bob",
                                 reference_time=day("2022-02-01"))
        acme = await memory.add_fact(group_id, "Alice", "WORKS_FOR", "Acme", "Alice works for Acme",
                                     valid_at=day("2020-01-01"))
        globex = await memory.add_fact(group_id, "Alice", "WORKS_FOR", "Globex", "Alice works for Globex",
                                       valid_at=day("2023-06-01"))
        await _book_club(memory, group_id)
        failed = await _failed_episode(memory, group_id)
        await memory.build_communities(group_id)
        [alice] = await store.find_entities_by_names(group_id, ["Alice"])
    return Seeded(key=key, group_id=group_id, alice_id=alice.id, acme_fact_id=acme.id, globex_fact_id=globex.id,
                  failed_episode_id=failed.id, lisbon_episode_id=lisbon.episode.id)


async def _book_club(memory: Chronomem, group_id: str) -> None:
    """A fact with three participants (a hyperedge), from its own episode."""
    store = memory.store
    named = {e.name: e for e in await store.find_entities_by_names(group_id, ["Alice", "Bob"])}
    alice, bob = named["Alice"], named["Bob"]
    episode = Episode(group_id=group_id, content="Alice, Bob and I founded a book club.", speaker="Carol",
                      reference_time=day("2022-05-01"), status=EpisodeStatus.DONE)
    carol = Entity(group_id=group_id, name="Carol", summary="Carol founded a book club with Alice and Bob.")
    fact = Fact(group_id=group_id, source_id=alice.id, target_id=bob.id, other_entity_ids=(carol.id,),
                relation_type="FOUNDED_WITH", fact="Alice, Bob and Carol founded a book club",
                episode_ids=(episode.id,), valid_at=day("2022-05-01"))
    vectors = await memory.embedder.embed([carol.name, fact.fact, episode.text])
    await store.write(GraphWrite(
        group_id, episodes=[episode], entities=[carol], facts=[fact],
        mentions=[Mention(group_id=group_id, episode_id=episode.id, entity_id=e) for e in fact.entity_ids],
        entity_vectors={carol.id: vectors[0]}, fact_vectors={fact.id: vectors[1]},
        episode_vectors={episode.id: vectors[2]},
    ))


async def _failed_episode(memory: Chronomem, group_id: str) -> Episode:
    """An episode whose extraction failed, as a worker leaves it after its last attempt."""
    [queued] = await memory.enqueue([Chronomem.new_episode(group_id, "I start at Initech next month.",
                                                           speaker="Alice", reference_time=day("2023-05-01"))])
    await memory.store.set_episode_status(group_id, queued.id, EpisodeStatus.PROCESSING)
    return await memory.store.set_episode_status(group_id, queued.id, EpisodeStatus.FAILED,
                                                 error="provider unreachable (scripted)")


def main() -> None:
    """``python tests/ui/explorer_seed.py DATA_DIR``: seed there and print what was seeded as JSON
    (the fixtures seed in a process of its own, away from the test runner's event loop)."""
    import asyncio
    import dataclasses
    import json
    import sys

    seeded = asyncio.run(seed(Path(sys.argv[1])))
    print(json.dumps(dataclasses.asdict(seeded)))


if __name__ == "__main__":
    main()
