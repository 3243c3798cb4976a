"""CommunityBuilder against a real store: build, extend, drift and refresh, summaries, search."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from community_planted import Planted, planted_partition, planted_write

from chronomem.communities import CommunityBuilder, CommunityConfig
from chronomem.communities.prompts import CommunityDescription, CommunityDescriptions
from chronomem.domain import Community, Entity, Fact
from chronomem.embed.testing import HashingEmbedder
from chronomem.llm.testing import FunctionModel
from chronomem.store import GraphWrite, Scope, Store

GROUP = "group-ü 'x'"  # dashes, quotes and unicode must not matter
TOPICS = {"n0_": "astronomy", "n1_": "cooking", "n2_": "football"}


async def load(store: Store, planted: Planted, group: str = GROUP) -> None:
    entities, facts = planted_write(group, planted, topics=TOPICS)
    await store.write(GraphWrite(group, entities=entities, facts=facts))


async def add_entity(store: Store, entity_id: str, neighbours: dict[str, int], group: str = GROUP) -> None:
    facts = [
        Fact(group_id=group, source_id=entity_id, target_id=other, fact=f"{entity_id} and {other} #{k}")
        for other, count in neighbours.items()
        for k in range(count)
    ]
    entity = Entity(id=entity_id, group_id=group, name=entity_id, summary=f"{entity_id} arrived late.")
    await store.write(GraphWrite(group, entities=[entity], facts=facts))


def membership(communities: list[Community]) -> set[frozenset[str]]:
    return {frozenset(c.member_ids) for c in communities}


def topic_model(prompt: Any, context: Any) -> Any:
    """Names each community after the topic word its members' summaries share."""
    if prompt.name not in ("community_summarize", "community_update"):
        raise AssertionError(f"unexpected prompt {prompt.name}")
    items = context.communities if prompt.name == "community_summarize" else context.changes
    answers = []
    for item in items:
        people = item.members if prompt.name == "community_summarize" else item.added
        words = [m.summary.split(" is about ")[-1].rstrip(".") for m in people if " is about " in m.summary]
        topic = max(set(words), key=words.count) if words else "newcomers"
        answers.append(CommunityDescription(key=item.key, summary=f"People into {topic}.", topics=[topic, "hobby"]))
    return CommunityDescriptions(communities=answers)


@pytest.fixture
def planted() -> Planted:
    return planted_partition([14, 10, 8], p_in=0.6, links=4, seed=7)


async def test_full_build_recovers_the_planted_clusters_and_stores_them(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    builder = CommunityBuilder(store, embedder)
    built = await builder.build(GROUP)
    assert membership(built) == set(planted.clusters)
    assert membership(await store.list_communities(GROUP)) == set(planted.clusters)
    vectors = await store.get_vectors(GROUP, Scope.COMMUNITIES, [c.id for c in built])
    assert set(vectors) == {c.id for c in built}
    report = builder.last_build
    assert report is not None and report.converged and report.communities == 3 and report.model_calls == 0


async def test_without_a_model_communities_are_named_from_their_most_central_members(
    store: Store, embedder: HashingEmbedder
) -> None:
    hub_edges = {f"leaf{i}": 1 for i in range(5)}
    await add_entity(store, "hub", {})
    for leaf in hub_edges:
        await add_entity(store, leaf, {"hub": 1})
    await add_entity(store, "leaf0", {"leaf1": 1})
    [community] = await CommunityBuilder(store, embedder).build(GROUP)
    assert community.member_ids[0] == "hub"
    assert community.name.split(", ")[0] == "hub"
    assert "hub: hub arrived late." in community.summary


async def test_a_rebuild_replaces_the_group_communities_and_leaves_other_groups_alone(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    await load(store, planted, group="other")
    builder = CommunityBuilder(store, embedder)
    other = await builder.build("other")
    await builder.build(GROUP)
    await store.write(GraphWrite(GROUP, delete_entity_ids=sorted(planted.clusters[2])))
    rebuilt = await builder.build(GROUP)
    assert membership(rebuilt) == set(planted.clusters[:2])
    assert membership(await store.list_communities(GROUP)) == set(planted.clusters[:2])
    assert {c.id for c in await store.list_communities("other")} == {c.id for c in other}


async def test_summaries_cost_the_planned_calls_and_unchanged_communities_cost_none_on_refresh(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    model = FunctionModel(topic_model)
    config = CommunityConfig(members_per_call=20, communities_per_call=8)
    builder = CommunityBuilder(store, embedder, model, config=config)
    built = await builder.build(GROUP)
    assert len(model.calls) == 2  # 14 members alone; 10 + 8 share a call
    assert {c.name for c in built} == {"astronomy, hobby", "cooking, hobby", "football, hobby"}
    again = await builder.build(GROUP)
    assert len(model.calls) == 2 and builder.last_build is not None and builder.last_build.reused == 3
    assert {c.id for c in again} == {c.id for c in built}
    await builder.build(GROUP, resummarize=True)
    assert len(model.calls) == 4


async def test_community_search_finds_a_community_by_a_topic_word(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    built = await CommunityBuilder(store, embedder, FunctionModel(topic_model)).build(GROUP)
    cooking = next(c.id for c in built if "cooking" in c.name)
    [bm25, *_] = await store.fulltext_search(GROUP, Scope.COMMUNITIES, "cooking")
    [cosine, *_] = await store.vector_search(GROUP, Scope.COMMUNITIES, embedder.embed_one("cooking"))
    assert bm25.id == cooking and cosine.id == cooking


async def test_extension_puts_a_new_entity_where_its_neighbours_are(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    builder = CommunityBuilder(store, embedder)
    await builder.build(GROUP)
    target = sorted(planted.clusters[1])
    await add_entity(store, "newcomer", {target[0]: 1, target[1]: 1, sorted(planted.clusters[0])[0]: 1})
    await add_entity(store, "hermit", {})
    result = await builder.extend(GROUP, ["newcomer", "hermit"])
    stored = {c.id: c for c in await store.list_communities(GROUP)}
    home = stored[result.assigned["newcomer"]]
    assert set(home.member_ids) == planted.clusters[1] | {"newcomer"}
    assert result.unassigned == ("hermit",)
    assert "newcomer: newcomer arrived late." in home.summary  # appended without a model
    assert not any("hermit" in c.member_ids for c in stored.values())


async def test_extension_of_newcomers_linked_only_to_each_other_waits_for_the_next_build(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    builder = CommunityBuilder(store, embedder)
    await builder.build(GROUP)
    await add_entity(store, "p", {})
    await add_entity(store, "q", {"p": 2})
    result = await builder.extend(GROUP, ["p", "q"])
    assert result.assigned == {} and result.updated == ()
    await builder.build(GROUP)
    assert frozenset({"p", "q"}) in membership(await store.list_communities(GROUP))


async def test_extension_with_a_model_updates_name_and_summary_in_one_call(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    model = FunctionModel(topic_model)
    builder = CommunityBuilder(store, embedder, model)
    await builder.build(GROUP)
    before = len(model.calls)
    target = sorted(planted.clusters[2])
    await add_entity(store, "x1", {target[0]: 2})
    await add_entity(store, "x2", {target[1]: 1, "x1": 1})
    result = await builder.extend(GROUP, ["x1", "x2"])
    assert len(model.calls) == before + 1 and result.model_calls == 1
    [community] = await store.get_communities(GROUP, [result.assigned["x1"]])
    assert community.name == "newcomers, hobby"  # the scripted model saw only the newcomers
    [hit, *_] = await store.vector_search(GROUP, Scope.COMMUNITIES, embedder.embed_one("newcomers, hobby"))
    assert hit.id == community.id


async def test_drift_rises_as_entities_are_added_and_a_refresh_brings_it_back_to_zero(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    builder = CommunityBuilder(store, embedder, config=CommunityConfig(refresh_threshold=0.1))
    await builder.build(GROUP)
    assert await builder.drift(GROUP) == 0.0
    assert await builder.measure_drift(GROUP) == 0.0
    members = sorted(planted.clusters[0])
    seen = []
    for i in range(3):
        await add_entity(store, f"late{i}", {members[i]: 1, members[i + 1]: 1})
        await builder.extend(GROUP, [f"late{i}"])
        seen.append(await builder.drift(GROUP))
        assert await builder.maybe_refresh(GROUP) is False
    assert 0.0 < seen[0] < seen[1] < seen[2] < 0.1
    await add_entity(store, "late3", {members[5]: 1})
    await builder.extend(GROUP, ["late3"])
    assert await builder.drift(GROUP) >= 0.1
    assert await builder.maybe_refresh(GROUP) is True
    assert await builder.drift(GROUP) == 0.0
    assert await builder.measure_drift(GROUP) == 0.0


async def test_a_process_that_did_not_see_the_build_measures_drift_from_the_store(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    assert await CommunityBuilder(store, embedder).drift(GROUP) == 1.0  # never built: nothing placed
    assert await CommunityBuilder(store, embedder).maybe_refresh(GROUP) is True
    assert await CommunityBuilder(store, embedder).drift(GROUP) == 0.0
    await add_entity(store, "drifter", {sorted(planted.clusters[0])[0]: 1})
    assert await CommunityBuilder(store, embedder).drift(GROUP) == pytest.approx(1 / (len(planted.ids) + 1))


async def test_extension_after_another_process_rebuilt_reloads_its_index(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    mine, theirs = CommunityBuilder(store, embedder), CommunityBuilder(store, embedder)
    await mine.build(GROUP)
    await store.write(GraphWrite(GROUP, facts=[Fact(group_id=GROUP, source_id="n0_0", target_id="n0_1", fact="x")]))
    await theirs.build(GROUP, resummarize=True)  # same members, ids kept; now force new ids:
    await store.write(GraphWrite(GROUP, delete_community_ids=[c.id for c in await store.list_communities(GROUP)]))
    await theirs.build(GROUP)
    await add_entity(store, "late", {"n1_0": 2})
    result = await mine.extend(GROUP, ["late"])
    [community] = await store.get_communities(GROUP, [result.assigned["late"]])
    assert set(community.member_ids) == planted.clusters[1] | {"late"}


async def test_nothing_to_extend_touches_nothing(store: Store, embedder: HashingEmbedder) -> None:
    builder = CommunityBuilder(store, embedder)
    result = await builder.extend(GROUP, [])
    assert result.assigned == {} and result.updated == ()
    assert await builder.build(GROUP) == []


async def test_a_large_community_costs_at_most_the_map_cap_plus_one_reduce(
    store: Store, embedder: HashingEmbedder
) -> None:
    big = planted_partition([40], p_in=0.5, links=0, seed=2)
    await load(store, big)

    def map_reduce(prompt: Any, context: Any) -> Any:
        if prompt.name == "community_map":
            return {"summary": f"part {context.part} of {context.parts}"}
        if prompt.name == "community_reduce":
            return {"summary": " + ".join(context.summaries), "topics": ["astronomy"]}
        raise AssertionError(prompt.name)

    model = FunctionModel(map_reduce)
    config = CommunityConfig(members_per_call=6, max_map_calls=3)
    [community] = await CommunityBuilder(store, embedder, model, config=config).build(GROUP)
    assert model.prompt_names.count("community_map") == 3 and model.prompt_names.count("community_reduce") == 1
    assert community.summary == "part 1 of 3 + part 2 of 3 + part 3 of 3"
    assert len(community.member_ids) == 40  # members the model did not read are still members


async def test_a_model_that_fails_leaves_communities_named_from_members(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)

    def broken(prompt: Any, context: Any) -> Any:
        return "not json at all"

    builder = CommunityBuilder(store, embedder, FunctionModel(broken))
    built = await builder.build(GROUP)
    assert membership(built) == set(planted.clusters)
    assert all(c.name and c.summary for c in built)
    assert builder.last_build is not None and builder.last_build.failed_calls == builder.last_build.model_calls > 0


async def test_a_failed_extension_update_is_retried_by_the_next_extension(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    failing = {"on": False}

    def flaky(prompt: Any, context: Any) -> Any:
        if failing["on"]:
            return "garbage"
        return topic_model(prompt, context)

    builder = CommunityBuilder(store, embedder, FunctionModel(flaky))
    await builder.build(GROUP)
    target = sorted(planted.clusters[0])
    failing["on"] = True
    await add_entity(store, "late1", {target[0]: 1, target[1]: 1})
    first = await builder.extend(GROUP, ["late1"])
    [community] = await store.get_communities(GROUP, [first.assigned["late1"]])
    assert "late1" in community.member_ids and community.name == "astronomy, hobby"  # unchanged, pending
    failing["on"] = False
    await add_entity(store, "late2", {target[2]: 1, target[3]: 1})
    second = await builder.extend(GROUP, ["late2"])
    assert second.model_calls == 1
    [community] = await store.get_communities(GROUP, [first.assigned["late1"]])
    assert community.name == "newcomers, hobby" and {"late1", "late2"} <= set(community.member_ids)


async def test_extension_without_summaries_leaves_them_pending_until_asked(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    model = FunctionModel(topic_model)
    builder = CommunityBuilder(store, embedder, model, config=CommunityConfig(summarize_on_extend=False))
    await builder.build(GROUP)
    calls = len(model.calls)
    await add_entity(store, "late", {sorted(planted.clusters[1])[0]: 2})
    result = await builder.extend(GROUP, ["late"])
    assert len(model.calls) == calls and result.model_calls == 0
    assert await builder.summarize_pending(GROUP) == 1
    assert len(model.calls) == calls + 1
    [community] = await store.get_communities(GROUP, [result.assigned["late"]])
    assert community.name == "newcomers, hobby"
    assert await builder.summarize_pending(GROUP) == 0


async def test_extension_does_not_wait_for_a_build_busy_with_the_model_and_survives_it(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    release, asked = asyncio.Event(), asyncio.Event()
    release.set()

    async def slow(prompt: Any, context: Any) -> Any:
        if prompt.name == "community_summarize":
            asked.set()
            await release.wait()
        return topic_model(prompt, context)

    builder = CommunityBuilder(store, embedder, FunctionModel(slow))
    await builder.build(GROUP)
    release.clear()
    asked.clear()
    rebuilding = asyncio.create_task(builder.build(GROUP, resummarize=True))
    await asked.wait()  # the build has read the graph and waits for the model
    await add_entity(store, "late", {n: 1 for n in sorted(planted.clusters[1])[:3]})
    extended = await asyncio.wait_for(builder.extend(GROUP, ["late"]), timeout=10)
    assert "late" in extended.assigned
    release.set()
    rebuilt = await rebuilding
    home = planted.clusters[1] | {"late"}
    assert home in membership(rebuilt)
    assert home in membership(await store.list_communities(GROUP))
    assert await builder.drift(GROUP) > 0.0


async def test_a_young_group_is_left_to_extension_until_it_has_enough_entities(
    store: Store, embedder: HashingEmbedder, planted: Planted
) -> None:
    await load(store, planted)
    size = len(planted.ids)
    too_big = CommunityBuilder(store, embedder, config=CommunityConfig(refresh_min_entities=size + 1))
    assert await too_big.drift(GROUP) == 1.0  # never built, fully drifted
    assert await too_big.maybe_refresh(GROUP) is False
    assert await store.list_communities(GROUP) == []
    big_enough = CommunityBuilder(store, embedder, config=CommunityConfig(refresh_min_entities=size))
    assert await big_enough.maybe_refresh(GROUP) is True
    assert await store.list_communities(GROUP) != []
