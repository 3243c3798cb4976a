"""Search configuration is data; recipes are named configurations."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chronomem.errors import InvalidInputError
from chronomem.search.config import RECIPES, Method, Reranker, ScopeConfig, SearchConfig, recipe


def test_default_searches_facts_entities_communities_with_hybrid_rrf():
    config = SearchConfig()
    assert set(config.scopes()) == {"facts", "entities", "communities"}
    assert config.facts is not None
    assert config.facts.methods == (Method.COSINE, Method.BM25)
    assert config.facts.reranker is Reranker.RRF
    assert config.facts.rrf_k == 60


def test_recipes_are_looked_up_by_name_and_unknown_names_are_refused():
    assert recipe("episodes_only").scopes().keys() == {"episodes"}
    assert all(isinstance(c, SearchConfig) for c in RECIPES.values())
    with pytest.raises(InvalidInputError, match="hybrid_rrf"):
        recipe("nope")


def test_with_limit_changes_every_scope_and_invalid_values_are_refused():
    limited = recipe("context").with_limit(7)
    assert {s.limit for s in limited.scopes().values()} == {7}
    with pytest.raises(ValidationError):
        ScopeConfig(mmr_lambda=2.0)
    with pytest.raises(ValidationError):
        ScopeConfig(limit=0)
