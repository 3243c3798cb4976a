"""Retrieval (paper §3): f(α) = χ(ρ(φ(α))) — search methods, rerankers, the context block.

Entry point: :class:`Searcher` (``search`` and ``context``), configured by :class:`SearchConfig`
or one of the named :data:`RECIPES`.
"""

from chronomem.search.config import RECIPES, Method, Reranker, ScopeConfig, SearchConfig, TimeMode, recipe
from chronomem.search.context import DEFAULT_TOKEN_BUDGET, build_context
from chronomem.search.searcher import Searcher, SearchResults
from chronomem.text.timeparse import ParsedTime, TimeWindow, parse_time

__all__ = [
    "DEFAULT_TOKEN_BUDGET",
    "RECIPES",
    "Method",
    "ParsedTime",
    "Reranker",
    "ScopeConfig",
    "SearchConfig",
    "SearchResults",
    "Searcher",
    "TimeMode",
    "TimeWindow",
    "build_context",
    "parse_time",
    "recipe",
]
