"""Cluster mode: three FalkorDB shards on loopback; groups spread by hash slot, and each group's
queries touch its own shard only."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from chronomem.domain import Entity, Episode, Fact
from chronomem.store.base import GraphWrite, Scope
from falkordb_server import own_falkordb_cluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list]:
    with own_falkordb_cluster(Path(tmp_path_factory.mktemp("cluster")), shards=3) as nodes:
        yield nodes


def graph_calls(port: int) -> int:
    import redis

    with redis.Redis(host="127.0.0.1", port=port, decode_responses=True) as client:
        stats = client.info("commandstats")
    return sum(v["calls"] for k, v in stats.items() if k.lower().startswith("cmdstat_graph.") and "list" not in k)


def reset_stats(ports: list[int]) -> None:
    import redis

    for port in ports:
        with redis.Redis(host="127.0.0.1", port=port) as client:
            client.config_resetstat()


async def write_group(store, group_id: str) -> Entity:
    alice = Entity(group_id=group_id, name="Alice", summary="hikes in the Alps")
    bob = Entity(group_id=group_id, name="Bob")
    fact = Fact(group_id=group_id, source_id=alice.id, target_id=bob.id, fact="Alice hikes with Bob")
    vector = np.full(8, 1 / np.sqrt(8), dtype=np.float32)
    await store.write(GraphWrite(group_id=group_id, entities=[alice, bob], facts=[fact],
                                 entity_vectors={alice.id: vector}, fact_vectors={fact.id: vector}))
    return alice


async def test_groups_spread_over_every_shard_and_stay_on_theirs(cluster) -> None:
    from falkordb_server import drop_namespace, open_falkordb_store

    ports = [node.port for node in cluster]
    store = await open_falkordb_store(cluster[0].url)
    try:
        groups = [f"tenant-{i}-{'ü' * (i % 3)}" for i in range(60)]
        for group_id in groups:
            await write_group(store, group_id)
        assert await store.list_groups() == sorted(groups)
        owners = Counter(store.connection.node_of(store.graph_key(g)) for g in groups)
        assert set(owners) == {f"127.0.0.1:{p}" for p in ports} and min(owners.values()) >= 5

        target = "the-target '👤'"  # written only after the counters are reset
        owner = int(store.connection.node_of(store.graph_key(target)).rsplit(":", 1)[1])
        reset_stats(ports)
        alice = await write_group(store, target)
        await store.insert_episode(Episode(group_id=target, content="Alice: hello"))
        assert [h.id for h in await store.fulltext_search(target, Scope.ENTITIES, "alps")] == [alice.id]
        assert len(await store.vector_search(target, Scope.FACTS, np.ones(8, dtype=np.float32))) == 1
        assert (await store.bfs(target, [alice.id])).entities[alice.id] == 0
        calls = {port: graph_calls(port) for port in ports}
        assert calls[owner] >= 5
        assert all(calls[p] == 0 for p in ports if p != owner), calls
    finally:
        await drop_namespace(store)
