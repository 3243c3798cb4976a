"""Summary plan and map-reduce: a known, bounded number of model calls (scripted model)."""

from __future__ import annotations

from typing import Any

from chronomem.communities import CommunityConfig, plan_summaries
from chronomem.communities.prompts import (
    CommunityAbout,
    CommunityDescription,
    CommunityDescriptions,
    MemberText,
    PartialSummary,
    topics_to_name,
)
from chronomem.communities.summaries import summarize
from chronomem.llm.testing import FunctionModel

CONFIG = CommunityConfig(members_per_call=10, communities_per_call=3, max_map_calls=2)


def members(count: int, topic: str) -> list[MemberText]:
    return [MemberText(f"{topic}-{i}", f"{topic}-{i} is about {topic}.") for i in range(count)]


def scripted(prompt: Any, context: Any) -> Any:
    """Answers every community prompt from the member names it was given."""
    if prompt.name == "community_summarize":
        return CommunityDescriptions(
            communities=[
                CommunityDescription(
                    key=c.key, summary=f"{len(c.members)} members", topics=[c.members[0].name.split("-")[0]]
                )
                for c in context.communities
            ]
        )
    if prompt.name == "community_map":
        return PartialSummary(summary=f"part {context.part}: {context.members[0].name.split('-')[0]}")
    if prompt.name == "community_reduce":
        return CommunityAbout(summary=" / ".join(context.summaries), topics=[context.central_names[0].split("-")[0]])
    raise AssertionError(f"unexpected prompt {prompt.name}")


def test_plan_shares_calls_between_small_communities_and_bounds_large_ones() -> None:
    plan = plan_summaries([45, 12, 6, 4, 3, 2, 2, 1], CONFIG)
    assert plan.chunked == ((0, 2), (1, 2))  # 45 members → capped at 2 map calls; 12 → 2
    assert plan.shared == ((2, 3), (4, 5, 6), (7,))  # ≤ 10 member lines and ≤ 3 communities a call
    assert plan.calls == 3 + 3 + 3


def test_plan_of_nothing_makes_no_call() -> None:
    assert plan_summaries([], CONFIG).calls == 0


async def test_summaries_take_exactly_the_planned_calls() -> None:
    model = FunctionModel(scripted)
    groups = [members(45, "chess"), members(6, "sailing"), members(3, "jazz"), members(2, "tea")]
    run = await summarize(model, groups, CONFIG)
    assert run.calls == len(model.calls) == plan_summaries([45, 6, 3, 2], CONFIG).calls == 5
    assert sorted(model.prompt_names) == ["community_map"] * 2 + ["community_reduce"] + ["community_summarize"] * 2
    names = [topics_to_name(r.topics) for r in run.results if r is not None]
    assert names == ["chess", "sailing", "jazz", "tea"]
    assert run.results[0] is not None and run.results[0].summary == "part 1: chess / part 2: chess"


async def test_map_calls_read_the_most_central_members_only() -> None:
    model = FunctionModel(scripted)
    await summarize(model, [members(45, "chess")], CONFIG)
    read = [m.name for name, ctx in model.calls if name == "community_map" for m in ctx.members]
    assert read == [f"chess-{i}" for i in range(20)]


async def test_a_failing_model_leaves_results_empty_and_counts_the_failure() -> None:
    def broken(prompt: Any, context: Any) -> Any:
        return {"not": "what was asked"}

    model = FunctionModel(broken)
    run = await summarize(model, [members(3, "jazz"), members(2, "tea")], CONFIG)
    assert run.results == [None, None]
    assert run.calls == 1 and run.failed_calls == 1


async def test_an_answer_missing_a_community_leaves_only_that_one_empty() -> None:
    def forgetful(prompt: Any, context: Any) -> Any:
        first = context.communities[0]
        return CommunityDescriptions(communities=[CommunityDescription(key=first.key, summary="s", topics=["x"])])

    run = await summarize(FunctionModel(forgetful), [members(3, "jazz"), members(2, "tea")], CONFIG)
    assert run.results[0] is not None and run.results[1] is None


async def test_an_answer_that_names_other_keys_describes_no_community(caplog):
    """A weak model numbering communities its own way (a real llama.cpp answer named '3', '5', '7'
    where 'c1'... were asked) must not be taken for any community's description."""

    def own_numbering(prompt: Any, context: Any) -> Any:
        return CommunityDescriptions(communities=[
            CommunityDescription(key=str(2 * i + 3), summary="made up", topics=["x"])
            for i in range(len(context.communities))
        ])

    run = await summarize(FunctionModel(own_numbering), [members(2, "a"), members(2, "b")], CONFIG)
    assert run.results == [None, None] and run.calls == 1 and run.failed_calls == 0
    assert run.unanswered == 2
    assert "left out ['c1', 'c2']" in caplog.text
