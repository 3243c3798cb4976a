"""chronomem: a memory layer for LLM agents built on a bi-temporal knowledge graph.

Importing the package reads no environment, loads no model and starts nothing; the names below
resolve lazily so that ``import chronomem`` stays cheap (no torch, no SDK, no FastAPI).

    >>> from chronomem import Chronomem, Settings
    >>> async with await Chronomem.open(Settings(store_url="sqlite:///memory.db")) as memory:
    ...     await memory.add_episode("alice", "Alice: I just joined Acme as a designer.")
    ...     print(await memory.context("alice", "Where does Alice work?"))
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Chronomem": "chronomem.memory",
    "NewMessage": "chronomem.memory",
    "Settings": "chronomem.config.settings",
    "Community": "chronomem.domain",
    "Entity": "chronomem.domain",
    "Episode": "chronomem.domain",
    "EpisodeKind": "chronomem.domain",
    "EpisodeStatus": "chronomem.domain",
    "Fact": "chronomem.domain",
    "FactSource": "chronomem.domain",
    "FactVersion": "chronomem.domain",
    "Mention": "chronomem.domain",
    "is_current": "chronomem.domain",
    "known_at": "chronomem.domain",
    "true_at": "chronomem.domain",
    "SearchFilters": "chronomem.filters",
    "TimeRange": "chronomem.filters",
    "SearchConfig": "chronomem.search",
    "SearchResults": "chronomem.search",
    "Searcher": "chronomem.search",
    "RECIPES": "chronomem.search",
    "Ingestor": "chronomem.ingest",
    "IngestConfig": "chronomem.ingest",
    "IngestResult": "chronomem.ingest",
    "Ontology": "chronomem.ingest",
    "JsonMapping": "chronomem.ingest",
    "CommunityBuilder": "chronomem.communities",
    "CommunityConfig": "chronomem.communities",
    "Store": "chronomem.store",
    "GraphWrite": "chronomem.store",
    "Scope": "chronomem.store",
    "open_store": "chronomem.store",
    "LLMSettings": "chronomem.llm",
    "LanguageModel": "chronomem.llm",
    "Prompt": "chronomem.llm",
    "build_language_model": "chronomem.llm",
    "Embedder": "chronomem.embed",
    "build_embedder": "chronomem.embed",
    "CrossEncoder": "chronomem.crossencoder",
    "ChronomemError": "chronomem.errors",
    "ConfigurationError": "chronomem.errors",
    "InvalidInputError": "chronomem.errors",
    "MissingExtraError": "chronomem.errors",
    "ModelError": "chronomem.errors",
    "NotFoundError": "chronomem.errors",
    "StoreError": "chronomem.errors",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'chronomem' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # resolve once
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # static analysers see the real names
    from chronomem.communities import CommunityBuilder, CommunityConfig
    from chronomem.config.settings import Settings
    from chronomem.crossencoder import CrossEncoder
    from chronomem.domain import (
        Community,
        Entity,
        Episode,
        EpisodeKind,
        EpisodeStatus,
        Fact,
        FactSource,
        FactVersion,
        Mention,
        is_current,
        known_at,
        true_at,
    )
    from chronomem.embed import Embedder, build_embedder
    from chronomem.errors import (
        ChronomemError,
        ConfigurationError,
        InvalidInputError,
        MissingExtraError,
        ModelError,
        NotFoundError,
        StoreError,
    )
    from chronomem.filters import SearchFilters, TimeRange
    from chronomem.ingest import IngestConfig, Ingestor, IngestResult, JsonMapping, Ontology
    from chronomem.llm import LanguageModel, LLMSettings, Prompt, build_language_model
    from chronomem.memory import Chronomem, NewMessage
    from chronomem.search import RECIPES, SearchConfig, Searcher, SearchResults
    from chronomem.store import GraphWrite, Scope, Store, open_store
