"""FalkorDB 4.16.3 hazards measured on this project, each shown on the raw server and shown to be
avoided by the backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from chronomem.domain import Entity, Fact
from chronomem.store.base import GraphWrite, Scope
from chronomem.store.falkordb.params import format_vector
from falkordb_server import own_falkordb_server

pytestmark = pytest.mark.integration


@pytest.fixture
def throwaway_server(tmp_path: Path) -> Iterator[object]:
    """A server of its own: some of these tests crash it on purpose."""
    with own_falkordb_server(tmp_path) as server:
        yield server


def raw_client(server: object):
    import redis

    return redis.Redis(host="127.0.0.1", port=server.port, decode_responses=True)  # type: ignore[attr-defined]


def wait_until_indexed(client, graph: str, timeout: float = 30.0) -> None:
    """Until every index of ``graph`` is OPERATIONAL: FalkorDB builds a new index in the background."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        reply = client.execute_command("GRAPH.RO_QUERY", graph, "CALL db.indexes() YIELD status RETURN status")
        statuses = [row[0] for row in reply[1]]
        if statuses and all(status == "OPERATIONAL" for status in statuses):
            return
        assert time.monotonic() < deadline, f"indexes of {graph} still {statuses} after {timeout}s"
        time.sleep(0.05)


def graph_module_version(client) -> int:
    return next(int(m["ver"]) for m in client.module_list() if m["name"] == "graph")


def test_in_over_a_stopword_segfaults_the_raw_server(throwaway_server) -> None:
    """The shape the backend must never produce: a property with a full-text index (with stop words)
    and a range index, queried with ``IN $names`` where a name is a stop word."""
    import redis

    client = raw_client(throwaway_server)
    if graph_module_version(client) != 41603:
        pytest.skip("measured on FalkorDB 4.16.3")
    for statement in [
        "CALL db.idx.fulltext.createNodeIndex({label:'Entity', stopwords:['the','it']}, 'name')",
        "CREATE INDEX FOR (n:Entity) ON (n.name)",
        "CREATE (:Entity {name:'The'}), (:Entity {name:'Alice'})",
    ]:
        client.execute_command("GRAPH.QUERY", "crash", statement)
    wait_until_indexed(client, "crash")  # the crash needs both indexes built (they build in the background)
    with pytest.raises(redis.ConnectionError):
        client.execute_command("GRAPH.QUERY", "crash",
                               "CYPHER names=['Alice','The'] MATCH (n:Entity) WHERE n.name IN $names RETURN n")
    throwaway_server.process.wait(timeout=10)  # type: ignore[attr-defined]
    assert throwaway_server.process.returncode != 0  # type: ignore[attr-defined]


async def test_backend_finds_stopword_names_and_the_server_lives(falkordb_store) -> None:
    the, it = Entity(group_id="g", name="The"), Entity(group_id="g", name="It", aliases=("The Thing",))
    await falkordb_store.write(GraphWrite(group_id="g", entities=[the, it]))
    found = await falkordb_store.find_entities_by_names("g", ["The", "It", "a", "the thing"])
    assert {e.id for e in found} == {the.id, it.id}
    hits = await falkordb_store.fulltext_search("g", Scope.ENTITIES, "the")  # no stop words in our indexes
    assert [h.id for h in hits] == [the.id]
    assert await falkordb_store.connection.execute("PING")


async def test_no_property_carries_both_a_range_and_a_fulltext_index(falkordb_store) -> None:
    await falkordb_store.write(GraphWrite(group_id="g", entities=[Entity(group_id="g", name="x")]))
    rows = await falkordb_store.connection.query(
        falkordb_store.graph_key("g"), "CALL db.indexes() YIELD label, types RETURN label, types", read_only=True
    )
    for label, types in rows:
        for prop, kinds in types.items():
            assert not {"RANGE", "FULLTEXT"} <= set(kinds), f"{label}.{prop}"


async def test_dashed_group_ids_do_not_empty_fulltext_search(falkordb_store) -> None:
    group = "0b7c6d2e-1f3a-4b5c-8d9e-acme-user-1"
    fact = Fact(group_id=group, source_id="a", target_id="b", fact="Alice moved to Lisbon")
    await falkordb_store.write(GraphWrite(group_id=group, facts=[fact]))
    assert [h.id for h in await falkordb_store.fulltext_search(group, Scope.FACTS, "Lisbon")] == [fact.id]


async def test_fulltext_scoring_is_tf_idf_not_bm25(falkordb_store) -> None:
    """RediSearch's TF-IDF divides a term's count by the document's most frequent term count and uses
    idf = log(N/df): repetition earns nothing (BM25 would rank "apple ×4" higher) and a word found
    in every document scores 0 (the backend adds a small floor so a hit stays positive)."""
    texts = {"one": "apple pie recipe with sugar", "four": "apple apple apple apple pie recipe",
             "x": "banana bread", "y": "carrot cake"}
    facts = {k: Fact(group_id="g", source_id="a", target_id="b", fact=t) for k, t in texts.items()}
    await falkordb_store.write(GraphWrite(group_id="g", facts=list(facts.values())))
    raw = dict(await falkordb_store.connection.query(
        falkordb_store.graph_key("g"),
        "CALL db.idx.fulltext.queryNodes('Fact', 'apple') YIELD node, score RETURN node.id, score",
        read_only=True,
    ))
    assert raw[facts["one"].id] == raw[facts["four"].id] > 0
    await falkordb_store.write(GraphWrite(group_id="g", delete_fact_ids=[facts["x"].id, facts["y"].id]))
    hits = await falkordb_store.fulltext_search("g", Scope.FACTS, "apple")  # now in every document: idf 0
    assert len(hits) == 2 and all(h.score > 0 for h in hits)


def test_a_capped_count_in_a_subquery_runs_on_into_the_next_word_on_the_raw_server(throwaway_server) -> None:
    """Why ``graph_reads._counts_text`` has a branch per word: in ``UNWIND $words AS w CALL { ...
    queryNodes(w) ... LIMIT $cap ... }`` the word after one that reached the cap is counted on from
    where the first one's matches stopped, and a word found nowhere is "found" in the cap."""
    from chronomem.store.falkordb.graph_reads import _counts_text

    client = raw_client(throwaway_server)
    if graph_module_version(client) != 41603:
        pytest.skip("measured on FalkorDB 4.16.3")
    client.execute_command("GRAPH.QUERY", "counts", "CALL db.idx.fulltext.createNodeIndex('Fact', 'fact')")
    client.execute_command("GRAPH.QUERY", "counts", "UNWIND range(1, 30) AS i CREATE (:Fact {fact: 'plenty'})")
    client.execute_command("GRAPH.QUERY", "counts", "UNWIND range(1, 2) AS i CREATE (:Fact {fact: 'scarce'})")
    wait_until_indexed(client, "counts")
    subquery = ("CYPHER words=['plenty','scarce','nowhere'] cap=10 UNWIND $words AS w CALL { WITH w "
                "CALL db.idx.fulltext.queryNodes('Fact', w) YIELD node WITH node LIMIT $cap "
                "RETURN count(node) AS found } RETURN w, found")
    rows = client.execute_command("GRAPH.RO_QUERY", "counts", subquery)[1]
    assert [found for _, found in rows] == [10, 10, 10]  # right: 10, 2, 0
    branches = "CYPHER w0='plenty' w1='scarce' w2='nowhere' cap=10 " + _counts_text("Fact", 3)
    assert client.execute_command("GRAPH.RO_QUERY", "counts", branches)[1] == [[0, 10], [1, 2]]


def test_optional_match_then_null_filter_creates_duplicates_on_the_raw_server(throwaway_server) -> None:
    """Why ``insert_episode`` uses MERGE: the planner pushes ``WHERE old IS NULL`` into the optional
    match, so "create unless it exists" creates every time."""
    client = raw_client(throwaway_server)
    if graph_module_version(client) != 41603:
        pytest.skip("measured on FalkorDB 4.16.3")
    client.execute_command("GRAPH.QUERY", "dup", "CREATE INDEX FOR (e:Episode) ON (e.id)")
    insert = ("CYPHER id='a' OPTIONAL MATCH (old:Episode {id: $id}) WITH old WHERE old IS NULL "
              "CREATE (:Episode {id: $id})")
    for _ in range(2):
        client.execute_command("GRAPH.QUERY", "dup", insert)
    rows = client.execute_command("GRAPH.QUERY", "dup", "MATCH (e:Episode) RETURN count(e)")[1]
    assert rows == [[2]]


def test_overwriting_an_indexed_vector_leaves_the_raw_index_stale(throwaway_server) -> None:
    """Why embeddings live on holder nodes that are replaced, never updated: after ``SET n.emb = …``
    over an existing vector, the HNSW index no longer finds the node by its new vector."""
    client = raw_client(throwaway_server)
    if graph_module_version(client) != 41603:
        pytest.skip("measured on FalkorDB 4.16.3")
    old, new = np.random.default_rng(1).normal(size=(2, 64)).astype(np.float32)
    client.execute_command("GRAPH.QUERY", "v", "CREATE VECTOR INDEX FOR (n:E) ON (n.emb) "
                           "OPTIONS {dimension:64, similarityFunction:'cosine'}")
    client.execute_command("GRAPH.QUERY", "v", f"CREATE (:E {{emb: vecf32({format_vector(old)})}})")
    client.execute_command("GRAPH.QUERY", "v", f"MATCH (n:E) SET n.emb = vecf32({format_vector(new)})")
    rows = client.execute_command(
        "GRAPH.QUERY", "v",
        f"CALL db.idx.vector.queryNodes('E', 'emb', 1, vecf32({format_vector(new)})) YIELD score RETURN score",
    )[1]
    assert not rows or float(rows[0][0]) > 0.5  # the node is lost, or found by its *old* vector


async def test_backend_finds_a_replaced_vector_many_times_over(falkordb_store) -> None:
    rng = np.random.default_rng(5)
    entities = [Entity(group_id="g", name=f"e{i}") for i in range(30)]
    current: dict[str, np.ndarray] = {}
    for _ in range(5):  # replace every vector repeatedly
        vectors = {e.id: (v := rng.normal(size=32).astype(np.float32)) / np.linalg.norm(v) for e in entities}
        current.update(vectors)
        await falkordb_store.write(GraphWrite(group_id="g", entities=entities, entity_vectors=vectors))
    for entity in entities:
        top = await falkordb_store.vector_search("g", Scope.ENTITIES, current[entity.id], limit=1)
        assert top[0].id == entity.id and top[0].score == pytest.approx(1.0, abs=1e-4)
