"""FalkorDB-specific behaviour on a real server: hostile text and group ids, filters against the
reference semantics, vector search under filters, BFS, atomic writes."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from chronomem.domain import Community, Entity, Episode, Fact
from chronomem.errors import InvalidInputError
from chronomem.filters import SearchFilters, TimeRange, fact_matches
from chronomem.store.base import GraphWrite, Scope

pytestmark = pytest.mark.integration

T0 = datetime(2024, 1, 1, tzinfo=UTC)
HOSTILE_TEXT = 'say "hi" \\ it\'s {x} $param */ // MATCH (n) DETACH DELETE n\n\ttab ünï 日本 🎉'


def unit(seed: int, dim: int = 16) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


async def test_hostile_text_round_trips_through_every_field(falkordb_store) -> None:
    group = "g"
    episode = Episode(group_id=group, content=HOSTILE_TEXT, speaker=HOSTILE_TEXT, metadata={"k": HOSTILE_TEXT})
    entity = Entity(group_id=group, name=HOSTILE_TEXT, summary=HOSTILE_TEXT, aliases=(HOSTILE_TEXT,),
                    attributes={HOSTILE_TEXT: [HOSTILE_TEXT]})
    fact = Fact(group_id=group, source_id=entity.id, target_id=entity.id, fact=HOSTILE_TEXT, episode_ids=(episode.id,))
    await falkordb_store.insert_episode(episode)
    await falkordb_store.write(GraphWrite(group_id=group, entities=[entity], facts=[fact]))
    assert await falkordb_store.get_episodes(group, [episode.id]) == [episode]
    assert await falkordb_store.get_entities(group, [entity.id]) == [entity]
    assert await falkordb_store.get_facts(group, [fact.id]) == [fact]
    assert await falkordb_store.find_entities_by_names(group, [HOSTILE_TEXT.upper()]) == [entity]


async def test_text_with_nul_is_refused_and_nothing_is_written(falkordb_store) -> None:
    entity = Entity(group_id="g", name="bad\x00name")
    with pytest.raises(InvalidInputError):
        await falkordb_store.write(GraphWrite(group_id="g", entities=[entity]))
    assert await falkordb_store.list_groups() == []


@pytest.mark.parametrize("group_id", ["3f2b9c1e-8d4a-4c2b-9e1f-0a1b2c3d4e5f", "it's", 'a"b', "{tag}", "日本-🎉"])
async def test_any_group_id_is_a_separate_searchable_graph(falkordb_store, group_id: str) -> None:
    mine = Entity(group_id=group_id, name="Alice Smith", summary="likes hiking")
    theirs = Entity(group_id="other", name="Alice Jones", summary="likes hiking")
    await falkordb_store.write(GraphWrite(group_id=group_id, entities=[mine], entity_vectors={mine.id: unit(1)}))
    await falkordb_store.write(GraphWrite(group_id="other", entities=[theirs], entity_vectors={theirs.id: unit(1)}))
    assert sorted(await falkordb_store.list_groups()) == sorted([group_id, "other"])
    hits = await falkordb_store.fulltext_search(group_id, Scope.ENTITIES, "alice hiking")
    assert [h.id for h in hits] == [mine.id]  # a dashed or quoted group id does not empty full-text search
    assert [h.id for h in await falkordb_store.vector_search(group_id, Scope.ENTITIES, unit(1))] == [mine.id]
    await falkordb_store.delete_group(group_id)
    assert await falkordb_store.list_groups() == ["other"]


@pytest.mark.parametrize("query", ['"', "-", "*", "@name:x", "(a|b)", "~%", "\\", "AND OR NOT", "{}[]", "'; DROP"])
async def test_any_query_text_is_safe(falkordb_store, query: str) -> None:
    entity = Entity(group_id="g", name="Alice", summary="and or not drop a b x name")
    await falkordb_store.write(GraphWrite(group_id="g", entities=[entity]))
    hits = await falkordb_store.fulltext_search("g", Scope.ENTITIES, query)
    assert all(h.id == entity.id and h.score > 0 for h in hits)


async def test_reads_of_an_unknown_group_are_empty_and_create_nothing(falkordb_store) -> None:
    assert await falkordb_store.fulltext_search("nobody", Scope.FACTS, "x") == []
    assert await falkordb_store.vector_search("nobody", Scope.FACTS, unit(0)) == []
    assert (await falkordb_store.bfs("nobody", ["e"])).facts == {}
    await falkordb_store.write(GraphWrite(group_id="nobody", delete_fact_ids=["f"]))
    assert await falkordb_store.list_groups() == []


def random_facts(group: str, count: int, rng: random.Random) -> list[Fact]:
    def maybe(start: int) -> datetime | None:
        return None if rng.random() < 0.3 else T0 + timedelta(days=start + rng.randint(0, 20))

    facts = []
    for i in range(count):
        valid, created = maybe(0), T0 + timedelta(days=rng.randint(0, 20))
        invalid = None if rng.random() < 0.5 else (valid or T0) + timedelta(days=rng.randint(1, 10))
        expired = None if rng.random() < 0.5 else created + timedelta(days=rng.randint(1, 10))
        facts.append(Fact(group_id=group, source_id=f"e{i % 7}", target_id=f"e{(i * 3) % 11}",
                          relation_type=rng.choice(["KNOWS", "LIKES"]), fact=f"fact number {i}",
                          valid_at=valid, invalid_at=invalid, created_at=created, expired_at=expired))
    return facts


FILTERS = [
    SearchFilters(as_of=T0 + timedelta(days=8)),
    SearchFilters(known_at=T0 + timedelta(days=12)),
    SearchFilters(as_of=T0 + timedelta(days=5), known_at=T0 + timedelta(days=15)),
    SearchFilters(valid_at=TimeRange(start=T0 + timedelta(days=3), end=T0 + timedelta(days=9))),
    SearchFilters(invalid_at=TimeRange(end=T0 + timedelta(days=10), include_null=True), include_superseded=True),
    SearchFilters(expired_at=TimeRange(start=T0), relation_types=("LIKES",), include_superseded=True),
    SearchFilters(now=T0 + timedelta(days=14)),
    SearchFilters(include_superseded=True, labels=("Person",)),
]


@pytest.mark.parametrize("filters", FILTERS)
async def test_fact_filters_match_the_reference_semantics(falkordb_store, filters: SearchFilters) -> None:
    facts = random_facts("g", 80, random.Random(7))
    people = [Entity(group_id="g", id=f"e{i}", name=f"p{i}", labels=("Person",) if i % 2 else ("Place",))
              for i in range(11)]
    await falkordb_store.write(GraphWrite(group_id="g", entities=people, facts=facts))
    labels = {p.id: set(p.labels) for p in people}
    expected = [f.id for f in sorted(facts, key=lambda f: (f.created_at, f.id))
                if fact_matches(f, filters, endpoint_labels=labels[f.source_id] | labels[f.target_id])]
    assert expected, "the scenario must keep some facts"
    assert [f.id for f in await falkordb_store.list_facts("g", filters=filters)] == expected


async def test_vector_search_widens_until_filtered_hits_are_found(falkordb_store) -> None:
    query = unit(0)
    close_but_superseded = [
        Fact(group_id="g", source_id="a", target_id="b", fact=f"old {i}", expired_at=T0) for i in range(60)
    ]
    current = Fact(group_id="g", source_id="a", target_id="b", fact="current")
    vectors = {f.id: query + 0.01 * unit(i + 1) for i, f in enumerate(close_but_superseded)}
    vectors[current.id] = unit(999)
    await falkordb_store.write(GraphWrite(group_id="g", facts=[*close_but_superseded, current], fact_vectors=vectors))
    hits = await falkordb_store.vector_search("g", Scope.FACTS, query, limit=1)
    assert [h.id for h in hits] == [current.id]
    everything = await falkordb_store.vector_search(
        "g", Scope.FACTS, query, limit=5, filters=SearchFilters(include_superseded=True), min_score=0.9
    )
    assert len(everything) == 5 and all(0.9 <= h.score <= 1.0 for h in everything)


async def test_bfs_counts_hops_and_skips_superseded_edges(falkordb_store) -> None:
    chain = [Fact(group_id="g", source_id=f"n{i}", target_id=f"n{i + 1}", fact=f"link {i}") for i in range(4)]
    retired = Fact(group_id="g", source_id="n0", target_id="x", fact="retired", expired_at=T0)
    nodes = [Entity(group_id="g", id=i, name=i) for i in ("n0", "n1", "n2", "n3", "n4", "x")]
    await falkordb_store.write(GraphWrite(group_id="g", entities=nodes, facts=[*chain, retired]))
    result = await falkordb_store.bfs("g", ["n0"], max_hops=2)
    assert result.entities == {"n0": 0, "n1": 1, "n2": 2}
    assert result.facts == {chain[0].id: 1, chain[1].id: 2}


async def test_a_batch_with_a_foreign_object_writes_nothing(falkordb_store) -> None:
    ok = Entity(group_id="g", name="ok")
    stranger = Entity(group_id="h", name="stranger")
    with pytest.raises(InvalidInputError):
        await falkordb_store.write(GraphWrite(group_id="g", entities=[ok, stranger]))
    assert await falkordb_store.list_groups() == []


async def test_reinserting_an_episode_keeps_one_copy(falkordb_store) -> None:
    episode = Episode(group_id="g", content="hello")
    assert (await falkordb_store.insert_episode(episode))[1] is True
    again, inserted = await falkordb_store.insert_episode(episode.model_copy(update={"content": "changed"}))
    assert (again, inserted) == (episode, False)
    assert (await falkordb_store.stats("g")).episodes == 1


async def test_fulltext_ranks_documents_with_every_word_first(falkordb_store) -> None:
    """TF-IDF alone would put "zebra" (one rare word) above the document holding both words."""
    texts = ["zebra", "zebra common common common", *(f"common filler {i}" for i in range(8)),
             *(f"other filler {i}" for i in range(8))]
    facts = [Fact(group_id="g", source_id="a", target_id="b", fact=t) for t in texts]
    await falkordb_store.write(GraphWrite(group_id="g", facts=facts))
    hits = await falkordb_store.fulltext_search("g", Scope.FACTS, "zebra common", limit=4)
    assert [h.id for h in hits[:2]] == [facts[1].id, facts[0].id]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(hits) == 4  # the any-word tier fills the rest


async def test_vector_indexes_take_ef_runtime_from_the_url(falkordb_server) -> None:
    from falkordb_server import drop_namespace, open_falkordb_store

    store = await open_falkordb_store(falkordb_server.url, ef_runtime=321)
    try:
        entity = Entity(group_id="g", name="x")
        await store.write(GraphWrite(group_id="g", entities=[entity], entity_vectors={entity.id: unit(1)}))
        rows = await store.connection.query(store.graph_key("g"),
                                            "CALL db.indexes() YIELD label, options RETURN label, options",
                                            read_only=True)
        assert dict(rows)["EntityVec"]["emb"]["efRuntime"] == 321
    finally:
        await drop_namespace(store)


async def test_replacing_communities_with_their_vectors_twice(falkordb_store) -> None:
    member = Entity(group_id="g", name="a")
    first = Community(group_id="g", name="first", member_ids=(member.id,))
    await falkordb_store.write(GraphWrite(group_id="g", entities=[member], communities=[first],
                                          community_vectors={first.id: unit(1)}))
    second = Community(group_id="g", name="second", member_ids=(member.id,))
    for _ in range(2):  # the second time, the kept community and its vector already exist
        await falkordb_store.write(GraphWrite(group_id="g", communities=[second], replace_communities=True,
                                              community_vectors={second.id: unit(2)}))
    assert [c.name for c in await falkordb_store.list_communities("g")] == ["second"]
    assert [h.id for h in await falkordb_store.vector_search("g", Scope.COMMUNITIES, unit(2))] == [second.id]
    assert await falkordb_store.vector_search("g", Scope.COMMUNITIES, unit(1), min_score=0.99) == []


async def test_fulltext_tiers_rank_rare_words_before_common_ones(falkordb_store, monkeypatch) -> None:
    from chronomem.store.falkordb import graph_reads

    monkeypatch.setattr(graph_reads, "CANDIDATE_CAP", 50)  # "common" = found in 50 documents or more
    both = Fact(group_id="g", source_id="a", target_id="b", fact="common rare")
    rare = [Fact(group_id="g", source_id="a", target_id="b", fact=f"rare thing {i}") for i in range(3)]
    common = [Fact(group_id="g", source_id="a", target_id="b", fact=f"common thing {i}") for i in range(80)]
    await falkordb_store.write(GraphWrite(group_id="g", facts=[both, *rare, *common]))
    hits = await falkordb_store.fulltext_search("g", Scope.FACTS, "common rare", limit=10)
    ids = [h.id for h in hits]
    assert ids[0] == both.id and set(ids[1:4]) == {f.id for f in rare}
    assert set(ids[4:]) <= {f.id for f in common} and len(ids) == 10
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


async def test_the_rare_words_share_the_cap_so_the_rare_tier_is_never_cut(falkordb_store, monkeypatch) -> None:
    """Rare = fewer than CANDIDATE_CAP / (number of words) matches. With the cap itself as the
    threshold, both words of the first query were rare, their 42 matches overflowed the rare tier's
    cap of 40, and the cut kept the oldest: two of the three newest facts, which hold the rarest
    word, were lost. The counts read at most the cap in all."""
    from chronomem.store.falkordb import graph_reads

    monkeypatch.setattr(graph_reads, "CANDIDATE_CAP", 40)
    older = [Fact(group_id="g", source_id="a", target_id="b", fact=f"plenty filler {i}") for i in range(39)]
    more = [Fact(group_id="g", source_id="a", target_id="b", fact=f"lots filler {i}") for i in range(15)]
    newest = [Fact(group_id="g", source_id="a", target_id="b", fact=f"scarce filler {i}") for i in range(3)]
    for facts in (older, more, newest):  # written in turn: the index hands matches back oldest first
        await falkordb_store.write(GraphWrite(group_id="g", facts=facts))
    caps: list[int] = []
    read = falkordb_store._read

    async def recording(group_id, text, params=None):
        if "$w0" in text:
            caps.append(params["cap"] * text.count("UNION ALL") + params["cap"])
        return await read(group_id, text, params)

    falkordb_store._read = recording
    hits = await falkordb_store.fulltext_search("g", Scope.FACTS, "scarce plenty", limit=10)  # rare below 20
    assert {h.id for h in hits[:3]} == {f.id for f in newest}
    assert {h.id for h in hits[3:]} <= {f.id for f in older} and len(hits) == 10
    hits = await falkordb_store.fulltext_search("g", Scope.FACTS, "scarce lots plenty", limit=10)  # below 13
    assert {h.id for h in hits[:3]} == {f.id for f in newest}
    assert caps and max(caps) <= 40


async def test_the_any_word_tier_sent_early_gives_the_same_list(falkordb_store, monkeypatch) -> None:
    """Where the last search needed the any-word tier, the next sends it beside the counts (one
    round trip less) and drops the earlier tiers' hits from it: the list is the same."""
    from chronomem.store.falkordb import graph_reads

    monkeypatch.setattr(graph_reads, "CANDIDATE_CAP", 50)
    both = [Fact(group_id="g", source_id="a", target_id="b", fact=f"common thing both {i}") for i in range(4)]
    common = [Fact(group_id="g", source_id="a", target_id="b", fact=f"common filler {i}") for i in range(60)]
    things = [Fact(group_id="g", source_id="a", target_id="b", fact=f"thing filler {i}") for i in range(60)]
    await falkordb_store.write(GraphWrite(group_id="g", facts=[*both, *common, *things]))
    texts = spy_queries(falkordb_store)
    first = await falkordb_store.fulltext_search("g", Scope.FACTS, "common thing", limit=12)
    sent_first = len(texts)
    second = await falkordb_store.fulltext_search("g", Scope.FACTS, "common thing", limit=12)
    assert [(h.id, h.score) for h in second] == [(h.id, h.score) for h in first]
    assert {h.id for h in first[:4]} == {f.id for f in both} and len(first) == 12
    assert len({h.id for h in first}) == 12  # no hit twice
    assert sent_first == len(texts) - sent_first == 3  # all + counts, then any; then all + counts + any at once
    narrow = await falkordb_store.fulltext_search("g", Scope.FACTS, "common thing", limit=4)
    assert [h.id for h in narrow] == [h.id for h in first[:4]]  # the all-words tier alone fills it
    assert ("g", Scope.FACTS) not in falkordb_store._common_words  # so the next one asks afterwards again


def dated_facts(count: int, dim: int = 16) -> tuple[list[Fact], dict[str, np.ndarray]]:
    """Facts valid from T0 + i hours (every 50th open since forever), a third of them ended
    a day later, recorded from T0 + i hours; random vectors."""
    facts = []
    for i in range(count):
        start = T0 + timedelta(hours=i)
        facts.append(Fact(group_id="g", source_id=f"e{i % 5}", target_id=f"e{(i + 1) % 5}",
                          relation_type="KNOWS" if i % 2 else "LIKES", fact=f"fact {i}",
                          valid_at=None if i % 50 == 0 else start,
                          invalid_at=start + timedelta(days=1) if i % 3 == 0 else None,
                          created_at=start, expired_at=start + timedelta(days=2) if i % 4 == 0 else None))
    return facts, {f.id: unit(i + 1000, dim) for i, f in enumerate(facts)}


def brute_force(facts: list[Fact], vectors: dict[str, np.ndarray], query: np.ndarray, filters: SearchFilters,
                limit: int, labels: dict[str, set[str]] | None = None) -> list[tuple[str, float]]:
    scored = [(f.id, float(vectors[f.id] @ query)) for f in facts
              if fact_matches(f, filters, endpoint_labels=None if labels is None
                              else labels[f.source_id] | labels[f.target_id])]
    return sorted(scored, key=lambda s: (-s[1], s[0]))[:limit]


def spy_queries(store) -> list[str]:
    """Record the text of every read the store sends."""
    texts: list[str] = []
    read = store._read

    async def recording(group_id, text, params=None):
        texts.append(text)
        return await read(group_id, text, params)

    store._read = recording
    return texts


POINTS_IN_TIME = [
    SearchFilters(as_of=T0 + timedelta(hours=30)),
    SearchFilters(as_of=T0 - timedelta(days=1)),  # only the facts open since forever
    SearchFilters(known_at=T0 + timedelta(hours=40)),
    SearchFilters(as_of=T0 + timedelta(hours=60), known_at=T0 + timedelta(hours=50)),
    SearchFilters(as_of=T0 + timedelta(hours=80), relation_types=("KNOWS",), labels=("Person",)),
]


@pytest.mark.parametrize("filters", POINTS_IN_TIME)
async def test_selective_point_in_time_vector_search_is_exact(falkordb_store, filters: SearchFilters) -> None:
    """Few facts true at t: they are all scored (no HNSW query), so the answer is the exact top k,
    facts with a null valid_at included."""
    facts, vectors = dated_facts(400)
    people = [Entity(group_id="g", id=f"e{i}", name=f"p{i}", labels=("Person",) if i % 2 else ("Place",))
              for i in range(5)]
    await falkordb_store.write(GraphWrite(group_id="g", entities=people, facts=facts, fact_vectors=vectors))
    labels = {p.id: set(p.labels) for p in people}
    texts = spy_queries(falkordb_store)
    for seed in range(5):
        query = unit(seed)
        expected = brute_force(facts, vectors, query, filters, 10, labels)
        assert expected, "the scenario must admit some facts"
        hits = await falkordb_store.vector_search("g", Scope.FACTS, query, limit=10, filters=filters)
        assert [h.id for h in hits] == [i for i, _ in expected]
        assert [h.score for h in hits] == pytest.approx([s for _, s in expected], abs=1e-5)
    assert not any("queryNodes" in t for t in texts)


async def test_exact_vector_search_keeps_min_score_and_limit(falkordb_store) -> None:
    facts, vectors = dated_facts(200)
    await falkordb_store.write(GraphWrite(group_id="g", facts=facts, fact_vectors=vectors))
    filters = SearchFilters(as_of=T0 + timedelta(hours=150))
    query = unit(3)
    everything = brute_force(facts, vectors, query, filters, 1_000)
    floor = (everything[6][1] + everything[7][1]) / 2
    hits = await falkordb_store.vector_search("g", Scope.FACTS, query, limit=50, filters=filters, min_score=floor)
    assert [h.id for h in hits] == [i for i, _ in everything[:7]]


async def test_point_in_time_search_admitting_many_facts_uses_the_vector_index(falkordb_store, monkeypatch) -> None:
    from chronomem.store.falkordb import graph_reads

    monkeypatch.setattr(graph_reads, "EXACT_CAP", 20)
    facts, vectors = dated_facts(100)
    await falkordb_store.write(GraphWrite(group_id="g", facts=facts, fact_vectors=vectors))
    texts = spy_queries(falkordb_store)
    filters = SearchFilters(as_of=T0 + timedelta(hours=80))  # about 60 facts true then
    hits = await falkordb_store.vector_search("g", Scope.FACTS, unit(1), limit=5, filters=filters)
    assert [h.id for h in hits] == [i for i, _ in brute_force(facts, vectors, unit(1), filters, 5)]
    assert any("queryNodes" in t for t in texts)


async def link_counts(store, group: str) -> tuple[int, int]:
    from chronomem.store.falkordb.schema import LINK_COUNTS

    rows = await store.connection.query(store.graph_key(group), LINK_COUNTS, read_only=True)
    return rows[0][0], rows[0][1]


async def test_graph_of_an_older_layout_is_upgraded_on_the_next_write(falkordb_store) -> None:
    """Facts without valid_from (and no index on it), holders without links: reads answer by the
    vector index; the next write gives every fact valid_from, then the index, links every holder,
    and the exact route finds the facts whose valid_at is null."""
    facts, vectors = dated_facts(120)
    await falkordb_store.write(GraphWrite(group_id="g", facts=facts, fact_vectors=vectors))
    key = falkordb_store.graph_key("g")
    for statement in ("DROP INDEX ON :Fact(valid_from)", "MATCH (f:Fact) SET f.valid_from = null",
                      "MATCH ()-[l:HAS_VECTOR]->() DELETE l"):
        await falkordb_store.connection.query(key, statement)
    falkordb_store._schema.forget(key)  # as a process started on the old graph
    filters = SearchFilters(as_of=T0 - timedelta(hours=1))  # only facts with a null valid_at
    expected = [i for i, _ in brute_force(facts, vectors, unit(2), filters, 10)]
    assert len(expected) == 3
    texts = spy_queries(falkordb_store)
    assert [h.id for h in await falkordb_store.vector_search("g", Scope.FACTS, unit(2), filters=filters)] == expected
    assert any("queryNodes" in t for t in texts)

    await falkordb_store.write(GraphWrite(group_id="g", entities=[Entity(group_id="g", name="next write")]))
    rows = await falkordb_store.connection.query(key, "MATCH (f:Fact) WHERE f.valid_from IS NULL RETURN count(f)")
    assert rows == [[0]]
    assert await link_counts(falkordb_store, "g") == (120, 120)
    texts.clear()
    assert [h.id for h in await falkordb_store.vector_search("g", Scope.FACTS, unit(2), filters=filters)] == expected
    assert texts and not any("queryNodes" in t for t in texts)
    assert any("HAS_VECTOR" in t for t in texts)


async def test_a_holder_without_its_link_is_still_found_exactly(falkordb_store) -> None:
    """A holder written by an older version has no link: the counts differ, and the exact route
    joins on the id instead."""
    facts, vectors = dated_facts(200)
    await falkordb_store.write(GraphWrite(group_id="g", facts=facts, fact_vectors=vectors))
    filters = SearchFilters(as_of=T0 + timedelta(hours=40))
    best = brute_force(facts, vectors, unit(5), filters, 10)
    await falkordb_store.connection.query(falkordb_store.graph_key("g"),
                                          "MATCH ()-[l:HAS_VECTOR]->(h {id: $id}) DELETE l", {"id": best[0][0]})
    assert await link_counts(falkordb_store, "g") == (200, 199)
    texts = spy_queries(falkordb_store)
    hits = await falkordb_store.vector_search("g", Scope.FACTS, unit(5), filters=filters)
    assert [h.id for h in hits] == [i for i, _ in best]
    _probe, exact = texts
    assert "queryNodes" not in exact and "HAS_VECTOR" not in exact


async def test_a_holder_without_its_link_is_still_found_through_the_vector_index(falkordb_store) -> None:
    """The approximate route follows links, and falls back to the id for a holder that has none."""
    facts, vectors = dated_facts(50)
    await falkordb_store.write(GraphWrite(group_id="g", facts=facts, fact_vectors=vectors))
    current = [f for f in facts if f.expired_at is None and f.invalid_at is None]
    best = brute_force(current, vectors, unit(7), SearchFilters(), 5)
    await falkordb_store.connection.query(falkordb_store.graph_key("g"),
                                          "MATCH ()-[l:HAS_VECTOR]->(h {id: $id}) DELETE l", {"id": best[0][0]})
    assert await link_counts(falkordb_store, "g") == (50, 49)
    hits = await falkordb_store.vector_search("g", Scope.FACTS, unit(7), limit=5)
    assert [h.id for h in hits] == [i for i, _ in best]
    assert [h.score for h in hits] == pytest.approx([s for _, s in best], abs=1e-5)


async def test_each_fact_holder_keeps_one_link(falkordb_store) -> None:
    facts, vectors = dated_facts(30)
    await falkordb_store.write(GraphWrite(group_id="g", facts=facts, fact_vectors=vectors))
    for seed in range(3):  # replacing a vector replaces its holder and its link
        await falkordb_store.write(GraphWrite(group_id="g", facts=facts[:10],
                                              fact_vectors={f.id: unit(seed, 16) for f in facts[:10]}))
    assert await link_counts(falkordb_store, "g") == (30, 30)
    await falkordb_store.write(GraphWrite(group_id="g", delete_fact_ids=[f.id for f in facts[:5]]))
    assert await link_counts(falkordb_store, "g") == (25, 25)
    latest = {**vectors, **{f.id: unit(2, 16) for f in facts[:10]}}
    filters = SearchFilters(as_of=T0 + timedelta(days=10))
    hits = await falkordb_store.vector_search("g", Scope.FACTS, unit(7), filters=filters, limit=30)
    assert [h.id for h in hits] == [i for i, _ in brute_force(facts[5:], latest, unit(7), filters, 30)]
