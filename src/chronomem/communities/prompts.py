"""Prompts of the community tier: map-reduce summaries of members, and incremental updates.

A community's *summary* says what its members have in common; its *name* is a list of keywords and
topics (the paper's §2.3 and §3: the name is embedded and searched, so it should hold the words a
query would use). The appendix of the paper has no community prompts; these follow the style of its
extraction prompts: a short system role, the data in tagged blocks, the task last.

Batching keeps calls few: small communities are summarised several to a call
(:data:`SUMMARIZE_COMMUNITIES`); a large one is summarised in chunks (:data:`SUMMARIZE_MEMBERS`, the
map) whose partial summaries are combined (:data:`COMBINE_SUMMARIES`, the reduce); communities that
grew by dynamic extension are updated together (:data:`UPDATE_COMMUNITIES`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, Field, field_validator

from chronomem.llm.base import Message, Prompt
from chronomem.llm.budget import text_bound

__all__ = [
    "COMBINE_SUMMARIES",
    "SUMMARIZE_COMMUNITIES",
    "SUMMARIZE_MEMBERS",
    "UPDATE_COMMUNITIES",
    "CommunityAbout",
    "CommunityChange",
    "CommunityDescription",
    "CommunityDescriptions",
    "CommunityDraft",
    "MemberChunk",
    "MemberText",
    "PartialSummaries",
    "PartialSummary",
    "SummarizeCommunities",
    "UpdateCommunities",
    "topics_to_name",
]

_SYSTEM = (
    "You summarise communities of a knowledge graph: groups of entities that are densely connected by "
    "facts. Write plain, factual prose; use only what the data says."
)
_TOPICS_RULE = (
    "topics: 3 to 8 short keywords or topic phrases (1-4 words each) a user might search for to find "
    "this community, most important first."
)


# -- contexts ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemberText:
    name: str
    summary: str


@dataclass(frozen=True, slots=True)
class CommunityDraft:
    key: str  # how the answer refers to this community
    members: tuple[MemberText, ...]  # most central first


@dataclass(frozen=True, slots=True)
class SummarizeCommunities:
    communities: tuple[CommunityDraft, ...]


@dataclass(frozen=True, slots=True)
class MemberChunk:
    members: tuple[MemberText, ...]
    part: int  # 1-based
    parts: int
    member_count: int  # members of the whole community


@dataclass(frozen=True, slots=True)
class PartialSummaries:
    summaries: tuple[str, ...]
    member_count: int
    central_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CommunityChange:
    key: str
    name: str
    summary: str
    added: tuple[MemberText, ...]


@dataclass(frozen=True, slots=True)
class UpdateCommunities:
    changes: tuple[CommunityChange, ...]


# -- answers ----------------------------------------------------------------------------------------
# Bounded in the schema (llm/budget.py): the cap sent is what the longest valid answer needs.

_SUMMARY_CHARS = 2000  # "under 150 words" is about a thousand
_TOPIC_CHARS = 80
_MAX_TOPICS = 8
_KEY_CHARS = 64
_MAX_COMMUNITIES = 32


class CommunityAbout(BaseModel):
    summary: Annotated[str, text_bound(_SUMMARY_CHARS, 1)] = Field(
        min_length=1, description="what the members have in common, under 150 words"
    )
    topics: list[Annotated[str, text_bound(_TOPIC_CHARS)]] = Field(
        min_length=1, description="keywords and topic phrases, most important first",
        json_schema_extra={"maxItems": _MAX_TOPICS},
    )

    @field_validator("topics")
    @classmethod
    def _clean_topics(cls, topics: list[str]) -> list[str]:
        cleaned = list(dict.fromkeys(" ".join(t.split()) for t in topics if t.strip()))
        if not cleaned:
            raise ValueError("topics must hold at least one non-empty keyword")
        return cleaned[:8]


class CommunityDescription(CommunityAbout):
    key: Annotated[str, text_bound(_KEY_CHARS)]


class CommunityDescriptions(BaseModel):
    communities: list[CommunityDescription] = Field(json_schema_extra={"maxItems": _MAX_COMMUNITIES})


class PartialSummary(BaseModel):
    summary: Annotated[str, text_bound(_SUMMARY_CHARS, 1)] = Field(min_length=1)


def topics_to_name(topics: list[str]) -> str:
    """The community name: its keywords and topics, comma-separated."""
    return ", ".join(topics)


# -- message builders -------------------------------------------------------------------------------


def _members_block(members: tuple[MemberText, ...]) -> str:
    return "\n".join(f"- {m.name}: {m.summary}" if m.summary else f"- {m.name}" for m in members)


# Each prompt's instructions are its system message, byte-identical on every call, and the call's
# data (members, counts, names) is all in the user message after it: a provider's prompt cache
# reads the instructions once.

_SUMMARIZE_TASK = (
    "Each community of the message is a list of members. For each, write a summary of what its members "
    f"have in common and how they relate, in under 150 words, and list its topics. {_TOPICS_RULE} "
    "Answer once per community, with its key."
)
_MAP_TASK = (
    "The message lists some of the members of one community (which part, and how many members the "
    "whole community has, come first). Summarise what they have in common and how they relate, in "
    "under 150 words."
)
_REDUCE_TASK = (
    "The message holds summaries of the parts of one community, its size and its most connected members. "
    "Combine them into one summary of the whole community, under 150 words, and list its topics. "
    f"{_TOPICS_RULE}"
)
_UPDATE_TASK = (
    "New members joined each community of the message. Rewrite each summary so that it also covers the "
    "new members, in under 150 words, keeping what still holds, and list its topics (keep the current "
    f"ones unless the new members change what the community is about). {_TOPICS_RULE} "
    "Answer once per community, with its key."
)


def _messages(task: str, data: str) -> list[Message]:
    return [Message("system", f"{_SYSTEM}\n\n{task}"), Message("user", data)]


def _build_summarize(ctx: SummarizeCommunities) -> list[Message]:
    blocks = "\n\n".join(
        f'<COMMUNITY key="{c.key}">\n{_members_block(c.members)}\n</COMMUNITY>' for c in ctx.communities
    )
    return _messages(_SUMMARIZE_TASK, blocks)


def _build_map(ctx: MemberChunk) -> list[Message]:
    heading = (f"Part {ctx.part} of {ctx.parts}: {len(ctx.members)} of the community's "
               f"{ctx.member_count} members.")
    return _messages(_MAP_TASK, f"{heading}\n<MEMBERS>\n{_members_block(ctx.members)}\n</MEMBERS>")


def _build_reduce(ctx: PartialSummaries) -> list[Message]:
    parts = "\n\n".join(f"<PART>\n{s}\n</PART>" for s in ctx.summaries)
    heading = (f"A community of {ctx.member_count} members; its most connected members are "
               f"{', '.join(ctx.central_names)}.")
    return _messages(_REDUCE_TASK, f"{heading}\n\n{parts}")


def _build_update(ctx: UpdateCommunities) -> list[Message]:
    blocks = "\n\n".join(
        f'<COMMUNITY key="{c.key}">\n<NAME>{c.name}</NAME>\n<SUMMARY>\n{c.summary}\n</SUMMARY>\n'
        f"<NEW_MEMBERS>\n{_members_block(c.added)}\n</NEW_MEMBERS>\n</COMMUNITY>"
        for c in ctx.changes
    )
    return _messages(_UPDATE_TASK, blocks)


def _descriptions_limits(keys: list[str]) -> dict[str, int]:
    # one description per community shown, each under the key it was shown with
    return {"CommunityDescriptions.communities": len(keys),
            "CommunityDescription.key": max((len(k) for k in keys), default=_KEY_CHARS)}


SUMMARIZE_COMMUNITIES: Prompt[SummarizeCommunities, CommunityDescriptions] = Prompt(
    name="community_summarize",
    answer=CommunityDescriptions,
    build=_build_summarize,
    max_output_tokens=3000,  # up to 8 communities × (150 words + topics)
    role="summary",
    limits=lambda ctx: _descriptions_limits([c.key for c in ctx.communities]),
)
SUMMARIZE_MEMBERS: Prompt[MemberChunk, PartialSummary] = Prompt(
    name="community_map",
    answer=PartialSummary,
    build=_build_map,
    max_output_tokens=400,
    role="summary",
)
COMBINE_SUMMARIES: Prompt[PartialSummaries, CommunityAbout] = Prompt(
    name="community_reduce",
    answer=CommunityAbout,
    build=_build_reduce,
    max_output_tokens=500,
    role="summary",
)
UPDATE_COMMUNITIES: Prompt[UpdateCommunities, CommunityDescriptions] = Prompt(
    name="community_update",
    answer=CommunityDescriptions,
    build=_build_update,
    max_output_tokens=3000,
    role="summary",
    limits=lambda ctx: _descriptions_limits([c.key for c in ctx.changes]),
)
