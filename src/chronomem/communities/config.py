"""Settings of the community tier: one typed object, validated once."""

from __future__ import annotations

from dataclasses import dataclass

from chronomem.errors import ConfigurationError

__all__ = ["CommunityConfig"]


@dataclass(frozen=True, slots=True)
class CommunityConfig:
    # Detection
    max_rounds: int = 30  # label-propagation rounds per level before it stops unconverged
    merge_levels: int = 2  # propagations over the contracted graph that merge fragments (0 = plain LP)
    min_size: int = 2  # smaller groups are not stored: their entities stay unassigned

    # Refresh policy
    refresh_threshold: float = 0.2  # maybe_refresh rebuilds once drift reaches this share of entities
    refresh_min_entities: int = 30  # maybe_refresh leaves smaller groups to extension alone
    cached_groups: int = 1024  # groups whose membership index and drift stay in memory

    # Summaries (map-reduce through the model)
    members_per_call: int = 50  # member lines one call reads
    communities_per_call: int = 8  # small communities summarised together in one call
    max_map_calls: int = 4  # chunks per large community; members past them are not read (they stay members)
    member_summary_chars: int = 300  # each member's summary is cut to this in prompts
    max_concurrent_calls: int = 8
    reuse_summaries: bool = True  # a community whose members did not change keeps its summary (no call)

    # Without a model, and for dynamic extension
    name_members: int = 3  # central members whose names make the name
    summary_chars: int = 1200  # budget of summaries written without a model
    summarize_on_extend: bool = True  # one batched model call per extension updates names and summaries
    max_updates_per_call: int = 8  # communities one extension call updates; the rest wait for the next

    def __post_init__(self) -> None:
        positive = {
            "max_rounds": self.max_rounds,
            "min_size": self.min_size,
            "members_per_call": self.members_per_call,
            "communities_per_call": self.communities_per_call,
            "max_map_calls": self.max_map_calls,
            "member_summary_chars": self.member_summary_chars,
            "max_concurrent_calls": self.max_concurrent_calls,
            "name_members": self.name_members,
            "summary_chars": self.summary_chars,
            "max_updates_per_call": self.max_updates_per_call,
            "cached_groups": self.cached_groups,
        }
        bad = [name for name, value in positive.items() if value < 1]
        if bad or self.merge_levels < 0:
            raise ConfigurationError(f"community settings must be positive: {', '.join(bad) or 'merge_levels'}")
        if not 0.0 < self.refresh_threshold <= 1.0:
            raise ConfigurationError(f"refresh_threshold must be in (0, 1], got {self.refresh_threshold}")
