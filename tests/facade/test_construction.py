"""Every way of making a memory wires the same pipeline: community extension is never skipped, and
the ingestion config, ontology, JSON mappings and community config reach what they configure,
whether passed to the constructor, to ``open`` or through ``Settings``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from chronomem import Chronomem, Settings
from chronomem.communities import CommunityConfig
from chronomem.domain import EpisodeKind, EpisodeStatus
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import ConfigurationError
from chronomem.filters import SearchFilters
from chronomem.ingest import EntitySpec, FactSpec, IngestConfig, JsonMapping, Ontology
from chronomem.store.factory import open_store

FRIENDS = JsonMapping(
    name="friends",
    source_description="address book",
    entities=(EntitySpec(key="person", name="person"), EntitySpec(key="friend", name="friend")),
    facts=(FactSpec(source="person", relation_type="KNOWS", target="friend", fact="{person} knows {friend}"),),
)
ONTOLOGY = Ontology(single_valued=["LIVES_IN"])
INGEST = IngestConfig(summary_max_chars=100, summary_target_chars=50)
COMMUNITIES = CommunityConfig(min_size=3, summarize_on_extend=False)

Way = Callable[[Path], AbstractAsyncContextManager[Chronomem]]


@asynccontextmanager
async def constructed(tmp_path: Path, **configs: object) -> AsyncIterator[Chronomem]:
    store = await open_store(f"sqlite:///{tmp_path / 'memory.db'}")
    async with Chronomem(store=store, embedder=HashingEmbedder(), **configs) as memory:  # type: ignore[arg-type]
        yield memory


@asynccontextmanager
async def opened(tmp_path: Path, settings: Settings | None = None, **configs: object) -> AsyncIterator[Chronomem]:
    settings = settings or Settings(data_dir=tmp_path)
    async with await Chronomem.open(settings, embedder=HashingEmbedder(), **configs) as memory:  # type: ignore[arg-type]
        yield memory


CONFIGURED: dict[str, Way] = {
    "constructor": lambda p: constructed(p, ingest=INGEST, ontology=ONTOLOGY, json_mappings=[FRIENDS],
                                         communities=COMMUNITIES),
    "constructor, mappings in the ingest config": lambda p: constructed(
        p, ingest=INGEST.model_copy(update={"json_mappings": (FRIENDS,)}), ontology=ONTOLOGY, communities=COMMUNITIES),
    "open": lambda p: opened(p, ingest=INGEST, ontology=ONTOLOGY, json_mappings=[FRIENDS], communities=COMMUNITIES),
    "settings": lambda p: opened(p, Settings(data_dir=p, ingest=INGEST, ontology=ONTOLOGY, json_mappings=(FRIENDS,),
                                             communities=COMMUNITIES)),
    "settings and constructor": lambda p: constructed(
        p, settings=Settings(ingest=INGEST, json_mappings=(FRIENDS,)), ontology=ONTOLOGY, communities=COMMUNITIES),
}
BARE: dict[str, Way] = {"constructor": constructed, "open": opened}


async def community_of(memory: Chronomem, name: str) -> set[str]:
    """The names of the members of the community ``name`` belongs to (empty: none)."""
    names = {e.id: e.name for e in await memory.list_entities("g")}
    for community in await memory.store.list_communities("g"):
        members = {names[i] for i in community.member_ids}
        if name in members:
            return members
    return set()


async def a_triangle_with_communities(memory: Chronomem) -> None:
    for source, target in (("Ann", "Bob"), ("Bob", "Cid"), ("Cid", "Ann"), ("Xia", "Yun")):
        await memory.add_fact("g", source, "KNOWS", target, f"{source} knows {target}")
    await memory.build_communities("g")


@pytest.mark.parametrize("way", [*BARE.values(), *CONFIGURED.values()], ids=[*BARE, *CONFIGURED])
async def test_a_new_entity_joins_its_neighbours_community_whichever_way_the_memory_was_made(
    tmp_path: Path, way: Way
) -> None:
    async with way(tmp_path) as memory:
        await a_triangle_with_communities(memory)
        assert await community_of(memory, "Ann") == {"Ann", "Bob", "Cid"}
        await memory.add_fact("g", "Cid", "KNOWS", "Dee", "Cid knows Dee")
        assert await community_of(memory, "Dee") == {"Ann", "Bob", "Cid", "Dee"}


@pytest.mark.parametrize("way", CONFIGURED.values(), ids=CONFIGURED)
async def test_the_configs_reach_ingestion_and_communities_whichever_way_they_are_given(
    tmp_path: Path, way: Way
) -> None:
    async with way(tmp_path) as memory:
        await a_triangle_with_communities(memory)
        assert await community_of(memory, "Xia") == set()  # a pair is below the configured min_size of 3
        # the JSON mapping extracts without a model, and its new entity joins the triangle's community
        mapped = await memory.add_episode("g", json.dumps({"person": "Ann", "friend": "Eve"}), kind=EpisodeKind.JSON,
                                          source_description="address book")
        assert mapped.episode.status is EpisodeStatus.DONE
        assert [f.fact for f in mapped.facts_created] == ["Ann knows Eve"]
        assert "Eve" in await community_of(memory, "Ann")
        # the ontology's single-valued relation closes the previous value
        await memory.add_fact("g", "Ann", "LIVES_IN", "Lisbon", "Ann lives in Lisbon, by the river Tagus")
        await memory.add_fact("g", "Ann", "LIVES_IN", "Porto", "Ann lives in Porto, near the Douro river mouth")
        current = await memory.store.list_facts("g", filters=SearchFilters(relation_types=("LIVES_IN",)))
        assert [f.fact for f in current] == ["Ann lives in Porto, near the Douro river mouth"]
        # the ingestion config bounds summaries
        ann = next(e for e in await memory.list_entities("g") if e.name == "Ann")
        assert 0 < len(ann.summary) <= INGEST.summary_max_chars


async def test_two_different_mappings_under_one_name_are_refused(tmp_path: Path) -> None:
    other = FRIENDS.model_copy(update={"source_description": "crm"})
    with pytest.raises(ConfigurationError, match="friends"):
        async with constructed(tmp_path, ingest=IngestConfig(json_mappings=(FRIENDS,)), json_mappings=[other]):
            pass
    async with constructed(tmp_path, ingest=IngestConfig(json_mappings=(FRIENDS,)), json_mappings=[FRIENDS]):
        pass  # the same mapping given twice is one mapping
