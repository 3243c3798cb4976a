"""The prompts outside ingestion (communities, user and thread summaries, the model reranker) are laid
out for a provider's prompt cache too: the instructions are a system message byte-identical on every
call, and everything a call varies by comes after it (the ingestion prompts: tests/ingest)."""

from __future__ import annotations

from typing import Any

import pytest

from chronomem.app.summaries import THREAD_SUMMARY, USER_SUMMARY, SummaryUpdate
from chronomem.communities.prompts import (
    COMBINE_SUMMARIES,
    SUMMARIZE_COMMUNITIES,
    SUMMARIZE_MEMBERS,
    UPDATE_COMMUNITIES,
    CommunityChange,
    CommunityDraft,
    MemberChunk,
    MemberText,
    PartialSummaries,
    SummarizeCommunities,
    UpdateCommunities,
)
from chronomem.crossencoder.llm import RerankContext, rerank_prompt
from chronomem.llm.base import Prompt

# what two calls may differ by: names, texts, counts, keys, lengths
DATA = (("Maya Patel", "Globex", "Lisbon", 7, "c1", 400), ("Tomás Ruiz", "Initech", "Porto", 12, "c2", 900))


def _members(n: int) -> tuple[MemberText, ...]:
    person, company, city, *_ = DATA[n]
    return (MemberText(str(person), f"works at {company}"), MemberText(str(city), ""))


def _calls(n: int) -> list[tuple[Prompt[Any, Any], Any]]:
    person, company, city, count, key, length = DATA[n]
    assert isinstance(count, int) and isinstance(length, int)
    members = _members(n)
    return [
        (SUMMARIZE_COMMUNITIES, SummarizeCommunities((CommunityDraft(str(key), members),) * (n + 1))),
        (SUMMARIZE_MEMBERS, MemberChunk(members, part=n + 1, parts=n + 2, member_count=count)),
        (COMBINE_SUMMARIES, PartialSummaries((f"{person} and {city}",) * (n + 1), count, (str(person),))),
        (UPDATE_COMMUNITIES, UpdateCommunities((CommunityChange(str(key), str(company), f"About {city}.", members),))),
        (USER_SUMMARY, SummaryUpdate(f"the user {person}", f"{person} lives in {city}.", (f"{company} hired them",),
                                     instructions=(f"keep {company}",) * n, max_chars=length)),
        (THREAD_SUMMARY, SummaryUpdate(f"the thread {key}", "", (f"{person}: hi from {city}",), max_chars=length)),
        (rerank_prompt(2 + n), RerankContext(f"where does {person} live", (f"{person} lives in {city}",) * (2 + n))),
    ]


@pytest.mark.parametrize("index", range(7), ids=lambda i: _calls(0)[i][0].name)
def test_two_calls_share_the_whole_system_message_and_differ_only_after_it(index: int) -> None:
    (prompt, first_context), (_, second_context) = _calls(0)[index], _calls(1)[index]
    first, second = prompt.messages(first_context), rerank_or_same(prompt, index).messages(second_context)
    assert [m.role for m in first] == [m.role for m in second] == ["system", "user"]
    assert first[0].content == second[0].content  # byte-identical: the static prefix
    assert first[1].content != second[1].content
    for n in (0, 1):
        for value in DATA[n]:
            assert str(value) not in first[0].content


def rerank_or_same(prompt: Prompt[Any, Any], index: int) -> Prompt[Any, Any]:
    """The second call's prompt: the same one, except the reranker's, which is made per passage count."""
    return _calls(1)[index][0] if prompt.name == "rerank_passages" else prompt
