"""Search configuration as data (docs/design.md §4): methods × reranker × limits, per scope.

A :class:`SearchConfig` names, for each of the four scopes, which φ methods run, which ρ reranker
orders their union and how many results survive. A scope left as ``None`` is not searched. The
named recipes in :data:`RECIPES` cover the usual cases; build your own by ``model_copy(update=…)``.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from chronomem.errors import InvalidInputError

__all__ = [
    "RECIPES",
    "Method",
    "Reranker",
    "ScopeConfig",
    "SearchConfig",
    "TimeMode",
    "recipe",
]


class Method(StrEnum):
    COSINE = "cosine"  # semantic similarity through the vector index
    BM25 = "bm25"  # word overlap through the full-text index
    BFS = "bfs"  # graph neighbourhood of seed nodes


class Reranker(StrEnum):
    RRF = "rrf"  # reciprocal rank fusion of the methods' rankings
    MMR = "mmr"  # maximal marginal relevance: relevant but not redundant
    EPISODE_MENTIONS = "episode_mentions"  # cited by more episodes ranks higher
    NODE_DISTANCE = "node_distance"  # closer (in hops) to a centre entity ranks higher
    CROSS_ENCODER = "cross_encoder"  # a cross-encoder scores each (query, candidate) pair


class TimeMode(StrEnum):
    """What dates found in the query ("last May", "in 2022") do to the results."""

    OFF = "off"  # ignore them
    BOOST = "boost"  # candidates dated inside the window rank higher
    FILTER = "filter"  # candidates dated outside the window are dropped


class ScopeConfig(BaseModel):
    """How one scope (facts, entities, episodes or communities) is searched and reranked."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    methods: tuple[Method, ...] = (Method.COSINE, Method.BM25)
    reranker: Reranker = Reranker.RRF
    limit: int = Field(default=10, ge=1)  # results returned for the scope
    candidates: int = Field(default=50, ge=1)  # results each method contributes before reranking
    min_score: float | None = None  # results scoring below this after reranking are cut
    cosine_min_score: float | None = None  # cosine hits below this similarity are not candidates
    rrf_k: float = Field(default=60.0, gt=0)
    method_weights: dict[Method, float] = Field(default_factory=dict)  # RRF weight per method (default 1)
    mmr_lambda: float = Field(default=0.5, ge=0.0, le=1.0)  # 1 = pure relevance, 0 = pure diversity
    bfs_max_hops: int = Field(default=2, ge=1, le=6)
    distance_max_hops: int = Field(default=4, ge=1, le=8)  # node distance: farther counts as unreached
    rerank_pool: int = Field(default=50, ge=1)  # how many fused candidates MMR/cross-encoder look at


class SearchConfig(BaseModel):
    """Which scopes to search and how; ``None`` skips a scope."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    facts: ScopeConfig | None = ScopeConfig()
    entities: ScopeConfig | None = ScopeConfig()
    episodes: ScopeConfig | None = None
    communities: ScopeConfig | None = ScopeConfig(limit=3, candidates=10)  # few, long summaries
    time_mode: TimeMode = TimeMode.BOOST
    time_boost: float = Field(default=1.0, ge=0.0)  # RRF weight of the "dated inside the window" ranking
    # boost mode: candidates dated up to this many window lengths outside it follow, nearest first
    time_margin: float = Field(default=1.0, ge=0.0)
    speaker_boost: float = Field(default=1.0, ge=0.0)  # episodes: RRF weight of "spoken by someone named"
    conversation_boost: float = Field(default=1.0, ge=0.0)  # episodes: RRF weight of "in a strong conversation"
    reply_boost: float = Field(default=1.0, ge=0.0)  # episodes: RRF weight of "replies to a top hit"
    coverage_boost: float = Field(default=0.0, ge=0.0)  # episodes: RRF weight of "best of its conversation"
    # episodes: the same signal's weight for a question asking for a list (chronomem.search.lists)
    list_coverage_boost: float = Field(default=0.0, ge=0.0)
    # ... and for a list question naming a speaker, that signal deals only the speaker's own
    # messages (each session's best turn by the speaker named)
    list_coverage_own_turns: bool = False
    # episodes: RRF weight of the hop from the best messages over the names and keywords they
    # mention to the other messages mentioning them (see chronomem.search.hops); 0 = off
    hop_boost: float = Field(default=0.0, ge=0.0)
    hop_seeds: int = Field(default=3, ge=1, le=20)  # how many of the best messages a hop starts from
    # full text also matches the other forms of the query's words ("research" → "researching");
    # see chronomem.text.wordforms
    word_forms: bool = False
    # episodes: RRF weight of "a user's sentence reports the event asked about" ("I just got back
    # from a camping trip", not "I'm planning a trip"), for questions asking what the user did
    # (see chronomem.search.reports); 0 = off
    report_boost: float = Field(default=0.0, ge=0.0)
    # episodes: messages that only ask ("What was your favourite part?") follow those that tell
    # (see chronomem.search.asking)
    asking_last: bool = False
    # episodes: a message by a speaker the query does not name, when it names one, moves down this
    # many places (see signals.unnamed_speakers_down); 0 = off
    unnamed_speaker_offset: int = Field(default=0, ge=0)
    recent_episodes_for_bfs: int = Field(default=4, ge=0)  # BFS seeds when no other seed exists
    # A query naming several events ("between the day I … and the day I …", "'A' or 'B'") is also
    # searched once per event and the rankings fused, the whole query at this weight.
    event_queries: bool = True
    whole_query_weight: float = Field(default=2.0, ge=0.0)
    # A question that counts, totals or orders ("how many doctor's appointments did I go to in
    # March?") naming no two events is also searched by its focus, the frame stripped ("doctor's
    # appointments I go to"), fused the same way (see decompose.focus_query).
    focus_query: bool = True
    # After that fusion, each sub-query's own best result follows the fused first (see
    # rerank.lead_with_each): every event named gets a place in the top k.
    event_leaders: bool = False
    # A question naming one speaker ("What activities does Melanie partake in?") is also searched
    # in that speaker's voice ("activities I partake in", see chronomem.search.perspective), fused
    # beside the whole query at this weight; 0 = off. The speakers are those of the whole query's
    # episode hits.
    perspective_weight: float = Field(default=0.0, ge=0.0)
    # ... and that sub-query ranks only the named speaker's own messages
    perspective_own_turns: bool = False

    def with_limit(self, limit: int) -> SearchConfig:
        """The same config returning ``limit`` results in every searched scope."""
        update = {
            name: scope.model_copy(update={"limit": limit, "candidates": max(scope.candidates, limit)})
            for name, scope in self.scopes().items()
        }
        return self.model_copy(update=update)

    def scopes(self) -> dict[str, ScopeConfig]:
        """The searched scopes by name (``facts``, ``entities``, ``episodes``, ``communities``)."""
        named = {
            "facts": self.facts,
            "entities": self.entities,
            "episodes": self.episodes,
            "communities": self.communities,
        }
        return {name: scope for name, scope in named.items() if scope is not None}


_HYBRID = (Method.COSINE, Method.BM25)
_ALL = (Method.COSINE, Method.BM25, Method.BFS)

RECIPES: dict[str, SearchConfig] = {
    # The default: hybrid search with RRF on facts, entities and communities.
    "hybrid_rrf": SearchConfig(),
    # Hybrid plus the graph neighbourhood of the hits, as the paper's context block uses (20 + 20).
    "context": SearchConfig(
        facts=ScopeConfig(methods=_ALL, limit=20, candidates=50),
        entities=ScopeConfig(methods=_ALL, limit=20, candidates=50),
        communities=ScopeConfig(limit=3, candidates=10),
    ),
    "hybrid_mmr": SearchConfig(
        facts=ScopeConfig(reranker=Reranker.MMR),
        entities=ScopeConfig(reranker=Reranker.MMR),
        communities=ScopeConfig(reranker=Reranker.MMR, limit=3, candidates=10),
    ),
    "hybrid_cross_encoder": SearchConfig(
        facts=ScopeConfig(methods=_ALL, reranker=Reranker.CROSS_ENCODER),
        entities=ScopeConfig(methods=_ALL, reranker=Reranker.CROSS_ENCODER),
        communities=ScopeConfig(reranker=Reranker.CROSS_ENCODER, limit=3, candidates=10),
    ),
    # Around a centre entity (pass center_entity_id): what is closest to it in the graph first.
    "node_distance": SearchConfig(
        facts=ScopeConfig(methods=_ALL, reranker=Reranker.NODE_DISTANCE),
        entities=ScopeConfig(methods=_ALL, reranker=Reranker.NODE_DISTANCE),
        communities=None,
    ),
    "episode_mentions": SearchConfig(
        facts=ScopeConfig(reranker=Reranker.EPISODE_MENTIONS),
        entities=ScopeConfig(reranker=Reranker.EPISODE_MENTIONS),
        communities=None,
    ),
    "facts_only": SearchConfig(facts=ScopeConfig(), entities=None, communities=None),
    "entities_only": SearchConfig(facts=None, entities=ScopeConfig(), communities=None),
    "communities_only": SearchConfig(facts=None, entities=None, communities=ScopeConfig()),
    # Raw episodes only: what works without an LLM-built graph (the evaluation harness uses it).
    "episodes_only": SearchConfig(
        facts=None, entities=None, communities=None, episodes=ScopeConfig(methods=_HYBRID, limit=10)
    ),
}


def recipe(name: str) -> SearchConfig:
    """The named recipe; ``InvalidInputError`` lists the known names for an unknown one."""
    try:
        return RECIPES[name]
    except KeyError:
        raise InvalidInputError(f"unknown search recipe {name!r}; known: {', '.join(sorted(RECIPES))}") from None
