"""Searcher against a real SQLite store holding a scripted graph (see conftest.py)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from search_graph import NOW, G, build_graph, t

from chronomem.errors import InvalidInputError
from chronomem.filters import SearchFilters, TimeRange
from chronomem.search.config import Method, Reranker, ScopeConfig, SearchConfig, TimeMode, recipe
from chronomem.search.searcher import Searcher


def _facts(config_scope: ScopeConfig, **others) -> SearchConfig:
    return SearchConfig(facts=config_scope, entities=None, communities=None, **others)


def _ids(rows) -> list[str]:
    return [obj.id for obj, _ in rows]


async def test_cosine_alone_finds_the_current_fact_and_not_the_superseded_one(graph):
    searcher = Searcher(graph.store, graph.embedder)
    config = _facts(ScopeConfig(methods=(Method.COSINE,)))
    found = _ids((await searcher.search(G, "where does Alice work", config=config, now=NOW)).facts)
    assert found[0] == "f_globex"
    assert "f_acme" not in found


async def test_bm25_alone_matches_words(graph):
    searcher = Searcher(graph.store, graph.embedder)
    results = await searcher.search(G, "green tea", config=_facts(ScopeConfig(methods=(Method.BM25,))), now=NOW)
    assert _ids(results.facts)[0] == "f_tea"
    assert all(score > 0 for _, score in results.facts)


async def test_bfs_from_given_seed_reaches_neighbours_by_hops(graph):
    searcher = Searcher(graph.store, graph.embedder)
    config = SearchConfig(
        facts=ScopeConfig(methods=(Method.BFS,), bfs_max_hops=1),
        entities=ScopeConfig(methods=(Method.BFS,), bfs_max_hops=1),
        communities=None,
    )
    results = await searcher.search(G, "", config=config, now=NOW, seed_entity_ids=["dave"])
    assert _ids(results.facts) == ["f_chain"]
    assert set(_ids(results.entities)) == {"dave", "carol"}
    assert _ids(results.entities)[0] == "dave"  # the seed itself is at hop 0


async def test_bfs_seeds_from_hits_then_from_recent_episodes(graph):
    searcher = Searcher(graph.store, graph.embedder)
    config = _facts(ScopeConfig(methods=(Method.BM25, Method.BFS), bfs_max_hops=1, limit=10))
    from_hits = _ids((await searcher.search(G, "chess club", config=config, now=NOW)).facts)
    assert from_hits[0] == "f_chain"
    assert "f_tea" in from_hits  # Carol, an endpoint of the hit, also drinks tea with Bob
    only_bfs = _facts(ScopeConfig(methods=(Method.BFS,), bfs_max_hops=1), recent_episodes_for_bfs=1)
    recent = _ids((await searcher.search(G, "zzz", config=only_bfs, now=NOW)).facts)
    assert "f_globex" in recent  # e3 (the latest episode) mentions Alice and Globex
    assert "f_chain" not in recent


async def test_episode_and_community_scopes_with_bfs(graph):
    searcher = Searcher(graph.store, graph.embedder)
    config = SearchConfig(
        facts=None, entities=None,
        episodes=ScopeConfig(methods=(Method.BFS,), bfs_max_hops=1),
        communities=ScopeConfig(methods=(Method.BFS,), bfs_max_hops=1),
    )
    results = await searcher.search(G, "", config=config, now=NOW, seed_entity_ids=["paris"])
    assert _ids(results.episodes)[0] == "e2"
    assert _ids(results.communities)[0] == "c_travel"


async def test_point_in_time_filters(graph):
    searcher = Searcher(graph.store, graph.embedder)
    config = _facts(ScopeConfig(limit=10))
    query = "Alice works at"
    now_ids = _ids((await searcher.search(G, query, config=config, now=NOW)).facts)
    assert "f_globex" in now_ids and "f_acme" not in now_ids
    as_of = _ids((await searcher.search(G, query, config=config, filters=SearchFilters(as_of=t(2021)))).facts)
    assert "f_acme" in as_of and "f_globex" not in as_of
    known_before = SearchFilters(known_at=t(2022, 12, 31))
    known = _ids((await searcher.search(G, query, config=config, filters=known_before)).facts)
    assert "f_acme" in known and "f_globex" not in known
    known_after = _ids(
        (await searcher.search(G, query, config=config, filters=SearchFilters(known_at=t(2023, 2)))).facts
    )
    assert "f_globex" in known_after and "f_acme" not in known_after
    everything = SearchFilters(include_superseded=True)
    with_history = await searcher.search(G, query, config=config, filters=everything)
    assert {"f_acme", "f_globex"} <= set(_ids(with_history.facts))


async def test_type_label_and_timestamp_filters(graph):
    searcher = Searcher(graph.store, graph.embedder)
    config = SearchConfig(facts=ScopeConfig(limit=10), entities=ScopeConfig(limit=10), communities=None)
    drinks = SearchFilters(relation_types=("DRINKS_WITH",))
    by_type = await searcher.search(G, "Bob", config=config, filters=drinks, now=NOW)
    assert _ids(by_type.facts) == ["f_tea"]
    by_label = await searcher.search(G, "Paris Bob", config=config, filters=SearchFilters(labels=("Place",)), now=NOW)
    assert _ids(by_label.entities) == ["paris"]
    assert set(_ids(by_label.facts)) == {"f_paris"}  # the only fact with a Place at one end
    in_2022 = SearchFilters(valid_at=TimeRange(start=t(2022), end=t(2023)))
    assert _ids((await searcher.search(G, "Bob Paris Alice", config=config, filters=in_2022, now=NOW)).facts) == [
        "f_paris"
    ]


async def test_node_distance_orders_by_true_hops_from_the_centre(graph):
    searcher = Searcher(graph.store, graph.embedder)
    config = SearchConfig(
        facts=None, communities=None,
        entities=ScopeConfig(methods=(Method.BM25,), reranker=Reranker.NODE_DISTANCE, limit=10),
    )
    results = await searcher.search(G, "Alice Bob Carol Dave", config=config, now=NOW, center_entity_id="dave")
    assert _ids(results.entities) == ["dave", "carol", "bob", "alice"]
    assert [s for _, s in results.entities] == pytest.approx([1.0, 0.5, 1 / 3, 0.25])
    with pytest.raises(InvalidInputError):
        await searcher.search(G, "Alice", config=config, now=NOW)


async def test_episode_mentions_ranks_the_most_cited_first(graph):
    searcher = Searcher(graph.store, graph.embedder)
    config = SearchConfig(
        facts=ScopeConfig(methods=(Method.BM25,), reranker=Reranker.EPISODE_MENTIONS, limit=10),
        entities=ScopeConfig(methods=(Method.BM25,), reranker=Reranker.EPISODE_MENTIONS, limit=10),
        communities=None,
    )
    results = await searcher.search(G, "Alice Bob Paris", config=config, now=NOW)
    assert _ids(results.facts)[0] == "f_friends"  # cited by three episodes
    assert results.facts[0][1] == 3.0
    assert set(_ids(results.entities)[:2]) == {"alice", "bob"}  # each mentioned twice, Paris once


async def test_mmr_keeps_the_limit_and_min_score_cuts(graph):
    searcher = Searcher(graph.store, graph.embedder)
    mmr = _facts(ScopeConfig(reranker=Reranker.MMR, mmr_lambda=0.7, limit=2))
    results = await searcher.search(G, "Alice works", config=mmr, now=NOW)
    assert len(results.facts) == 2
    strict = _facts(ScopeConfig(min_score=0.99))
    assert (await searcher.search(G, "Alice works", config=strict, now=NOW)).facts == []


class _ByLength:
    """A cross-encoder double: shorter passages are 'more relevant'."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def score(self, query: str, passages: Sequence[str]) -> list[float]:
        self.seen.extend(passages)
        return [1.0 / len(p) for p in passages]


async def test_cross_encoder_reorders_and_is_required(graph):
    config = _facts(ScopeConfig(reranker=Reranker.CROSS_ENCODER, limit=10))
    with pytest.raises(InvalidInputError, match="CHRONOMEM_CROSS_ENCODER"):
        await Searcher(graph.store, graph.embedder).search(G, "Alice Bob", config=config, now=NOW)
    encoder = _ByLength()
    results = await Searcher(graph.store, graph.embedder, encoder).search(G, "Alice Bob", config=config, now=NOW)
    lengths = [len(f.fact) for f, _ in results.facts]
    assert lengths == sorted(lengths) and encoder.seen


async def test_dates_in_the_query_boost_or_filter(graph):
    searcher = Searcher(graph.store, graph.embedder)
    scope = ScopeConfig(limit=10)
    config = SearchConfig(facts=scope, entities=None, communities=None, episodes=scope)
    query = "what did Alice and Bob do in May 2022"
    off = await searcher.search(G, query, config=config.model_copy(update={"time_mode": TimeMode.OFF}), now=NOW)
    boosted = await searcher.search(G, query, config=config, now=NOW)
    assert _ids(boosted.facts)[0] == "f_paris" and _ids(off.facts)[0] != "f_paris"
    assert _ids(boosted.episodes)[0] == "e2"
    assert boosted.time.windows[0].text == "May 2022"
    filtered = await searcher.search(G, query, config=config.model_copy(update={"time_mode": TimeMode.FILTER}), now=NOW)
    assert _ids(filtered.facts) == ["f_paris"] and _ids(filtered.episodes) == ["e2"]


async def test_relative_dates_resolve_against_the_given_now(graph):
    searcher = Searcher(graph.store, graph.embedder)
    config = recipe("episodes_only").model_copy(update={"time_mode": TimeMode.FILTER})
    last_may = await searcher.search(G, "what happened last May", config=config, now=t(2023, 3, 1))
    assert _ids(last_may.episodes) == ["e2"]
    anchored = await searcher.search(G, "what happened two weeks after greetings from Paris", config=config,
                                     now=t(2023, 3, 1))
    assert _ids(anchored.episodes) == []  # nothing was said in late May 2022


async def test_groups_are_isolated_and_merged(graph):
    searcher = Searcher(graph.store, graph.embedder)
    await build_graph(graph.store, graph.embedder, group_id="group-2")
    one = await searcher.search(G, "green tea", config=recipe("facts_only"), now=NOW)
    assert {f.group_id for f, _ in one.facts} == {G}
    both = await searcher.search([G, "group-2"], "green tea", config=recipe("facts_only"), now=NOW)
    assert {f.group_id for f, _ in both.facts} == {G, "group-2"}
    assert len(both.facts) <= 10
    assert (await searcher.search("nobody", "green tea", now=NOW)).facts == []
    with pytest.raises(InvalidInputError):
        await searcher.search([], "tea")


async def test_context_block_current_by_default_superseded_on_request(graph):
    searcher = Searcher(graph.store, graph.embedder)
    block = await searcher.context(G, "Where does Alice work?", now=NOW)
    assert "<FACTS>" in block and "Alice works at Globex (Date range: 2023-01-01 00:00:00Z - present)" in block
    assert "Acme Corp (Date range" not in block
    assert "- Alice: Alice is a software engineer." in block
    assert "<EPISODES>" not in block
    history = await searcher.context(
        G, "Where does Alice work?", now=NOW, include_superseded=True, include_episodes=True
    )
    assert "Alice works at Acme Corp (Date range: 2020-01-01 00:00:00Z - 2023-01-01 00:00:00Z)" in history
    assert "[superseded: no longer true from 2023-01-01" in history
    assert "<EPISODES>" in history
    tiny = await searcher.context(G, "Where does Alice work?", now=NOW, token_budget=120)
    assert len(tiny) < len(block)


async def test_ranges_on_the_other_three_timestamps(graph):
    searcher = Searcher(graph.store, graph.embedder)
    config = _facts(ScopeConfig(limit=10))
    query = "Alice Bob Carol Dave Paris Acme Globex"
    learned_2023 = SearchFilters(created_at=TimeRange(start=t(2023), end=t(2024)), include_superseded=True)
    assert _ids((await searcher.search(G, query, config=config, filters=learned_2023)).facts) == ["f_globex"]
    ended = SearchFilters(invalid_at=TimeRange(start=t(2022), end=t(2024)), include_superseded=True)
    assert _ids((await searcher.search(G, query, config=config, filters=ended)).facts) == ["f_acme"]
    retracted = SearchFilters(expired_at=TimeRange(start=t(2023), include_null=False), include_superseded=True)
    assert _ids((await searcher.search(G, query, config=config, filters=retracted)).facts) == ["f_acme"]
    never_retracted = SearchFilters(expired_at=TimeRange(start=t(2030), include_null=True), include_superseded=True)
    assert "f_acme" not in _ids((await searcher.search(G, query, config=config, filters=never_retracted)).facts)


async def test_method_weights_shift_the_fusion(graph):
    searcher = Searcher(graph.store, graph.embedder)
    only_bm25 = _facts(ScopeConfig(method_weights={Method.COSINE: 0.0}, limit=10))
    results = await searcher.search(G, "green tea", config=only_bm25, now=NOW)
    bm25 = await searcher.search(G, "green tea", config=_facts(ScopeConfig(methods=(Method.BM25,))), now=NOW)
    matched = len(bm25.facts)
    assert _ids(results.facts)[:matched] == _ids(bm25.facts)  # cosine-only hits trail with score 0


class _CountingReads:
    """The store, counting the calls of each graph read that seeds BFS."""

    def __init__(self, store) -> None:
        self._store = store
        self.calls: list[str] = []

    async def entities_of_facts(self, group_id: str, fact_ids: Sequence[str]):
        self.calls.append("entities_of_facts")
        return await self._store.entities_of_facts(group_id, fact_ids)

    async def entities_of_episodes(self, group_id: str, episode_ids: Sequence[str]):
        self.calls.append("entities_of_episodes")
        return await self._store.entities_of_episodes(group_id, episode_ids)


async def test_bfs_seeds_read_fact_endpoints_and_mentions_only_while_short_of_the_limit(graph):
    from chronomem.search.methods import entities_of_hits
    from chronomem.store.base import Scope

    hits = {Scope.ENTITIES: ["alice", "bob"], Scope.FACTS: ["f_chain"], Scope.EPISODES: ["e2"]}
    reads = _CountingReads(graph.store)
    assert await entities_of_hits(reads, G, hits, limit=2) == ["alice", "bob"]
    assert reads.calls == []  # the entity hits alone were the seeds: nothing else was read
    reads = _CountingReads(graph.store)
    more = await entities_of_hits(reads, G, hits, limit=10)
    assert more[:2] == ["alice", "bob"] and {"carol", "dave", "paris"} <= set(more)  # f_chain's ends, e2's mention
    assert reads.calls == ["entities_of_facts", "entities_of_episodes"]
