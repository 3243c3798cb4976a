"""Cost properties: a full build reads the graph in one pass, an extension makes a fixed few store calls."""

from __future__ import annotations

from collections import Counter
from typing import Any, cast

from community_planted import planted_partition, planted_write

import chronomem.communities as communities
from chronomem.communities import CommunityBuilder
from chronomem.domain import Entity, Fact
from chronomem.embed.testing import HashingEmbedder
from chronomem.store import GraphWrite, Store

GROUP = "costs"


class CountingStore:
    """Delegates to a store and counts the calls made through it."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)

        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return await attribute(*args, **kwargs)

        return counted


async def test_a_full_build_reads_the_graph_once_whatever_its_size(store: Store, embedder: HashingEmbedder) -> None:
    planted = planted_partition([30, 25, 20, 15], p_in=0.4, links=5, seed=4)
    entities, facts = planted_write(GROUP, planted)
    await store.write(GraphWrite(GROUP, entities=entities, facts=facts))
    counting = CountingStore(store)
    await CommunityBuilder(cast(Store, counting), embedder).build(GROUP)
    assert counting.calls == Counter(entity_edges=1, list_communities=1, get_entities=1, write=1)


async def test_an_extension_makes_four_store_calls_and_no_listing(store: Store, embedder: HashingEmbedder) -> None:
    planted = planted_partition([12, 12], seed=5)
    entities, facts = planted_write(GROUP, planted)
    await store.write(GraphWrite(GROUP, entities=entities, facts=facts))
    counting = CountingStore(store)
    builder = CommunityBuilder(cast(Store, counting), embedder)
    await builder.build(GROUP)
    newcomer = Entity(id="new", group_id=GROUP, name="new")
    link = Fact(group_id=GROUP, source_id="new", target_id=sorted(planted.clusters[0])[0], fact="new knows it")
    await store.write(GraphWrite(GROUP, entities=[newcomer], facts=[link]))
    counting.calls.clear()
    await builder.extend(GROUP, ["new"])
    assert counting.calls == Counter(facts_of_entities=1, get_communities=1, get_entities=1, write=1)


def test_public_surface_is_pinned() -> None:
    assert sorted(communities.__all__) == [
        "BuildReport",
        "CommunityBuilder",
        "CommunityConfig",
        "DriftCounter",
        "Extension",
        "Propagation",
        "SummaryPlan",
        "WeightedGraph",
        "assign_batch",
        "choose_community",
        "detect_communities",
        "partition_disagreement",
        "plan_summaries",
        "propagate",
    ]
