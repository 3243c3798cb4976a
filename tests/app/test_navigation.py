"""Graph navigation every shell offers (Zep v4's list_neighbors and get_subgraph): current facts
only, the direction followed, the bounds kept and said."""

from __future__ import annotations

import pytest

from chronomem.app.groups import GroupOperations
from chronomem.config.settings import Settings
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import NotFoundError
from chronomem.memory import Chronomem


@pytest.fixture
async def memory(tmp_path):
    async with await Chronomem.open(Settings(data_dir=tmp_path), embedder=HashingEmbedder()) as opened:
        yield opened


async def chain(memory: Chronomem) -> dict[str, str]:
    """Ada -WORKS_AT-> Acme -LOCATED_IN-> Oslo; Bob -KNOWS-> Ada; Ada's home, deleted."""
    await memory.add_fact("g", "Ada", "WORKS_AT", "Acme", "Ada works at Acme")
    await memory.add_fact("g", "Acme", "LOCATED_IN", "Oslo", "Acme is located in Oslo")
    await memory.add_fact("g", "Bob", "KNOWS", "Ada", "Bob knows Ada")
    home = await memory.add_fact("g", "Ada", "LIVES_IN", "Paris", "Ada lives in Paris")
    await memory.delete_fact("g", home.id)
    return {e.name: e.id for e in await memory.list_entities("g")}


async def test_neighbours_follow_the_direction_asked(memory):
    ids = await chain(memory)
    groups = GroupOperations(memory)
    both = await groups.neighbours("g", ids["Ada"])
    assert [n.entity.name for n in both] == ["Acme", "Bob"]  # in the order they were joined
    assert [f.fact for f in both[0].facts] == ["Ada works at Acme"]
    assert [n.entity.name for n in await groups.neighbours("g", ids["Ada"], direction="out")] == ["Acme"]
    assert [n.entity.name for n in await groups.neighbours("g", ids["Ada"], direction="in")] == ["Bob"]
    with pytest.raises(NotFoundError):
        await groups.neighbours("g", "no-such-entity")


async def test_a_subgraph_grows_by_depth_and_says_when_a_bound_cut_it(memory):
    ids = await chain(memory)
    groups = GroupOperations(memory)
    one = await groups.subgraph("g", [ids["Ada"]], depth=1)
    assert {e.name for e in one.entities} == {"Ada", "Acme", "Bob"} and not one.truncated
    assert {f.fact for f in one.facts} == {"Ada works at Acme", "Bob knows Ada"}
    two = await groups.subgraph("g", [ids["Ada"]], depth=2)
    assert {e.name for e in two.entities} == {"Ada", "Acme", "Bob", "Oslo"}
    assert "Acme is located in Oslo" in {f.fact for f in two.facts}
    cut = await groups.subgraph("g", [ids["Ada"]], depth=2, max_nodes=2)
    assert len(cut.entities) == 2 and cut.truncated and cut.reason == "max_nodes"
    edges = await groups.subgraph("g", [ids["Ada"]], depth=2, max_edges=1)
    assert len(edges.facts) <= 1 and edges.truncated and edges.reason == "max_edges"
    assert (await groups.subgraph("g", [ids["Ada"]], depth=0)).facts == []
