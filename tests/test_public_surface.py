"""The package root's public names are pinned: adding or removing one is a deliberate change."""

from __future__ import annotations

import subprocess
import sys

import chronomem

EXPECTED = {
    "Chronomem", "NewMessage", "Settings",
    "Community", "Entity", "Episode", "EpisodeKind", "EpisodeStatus", "Fact", "FactSource", "FactVersion", "Mention",
    "is_current", "known_at", "true_at",
    "SearchFilters", "TimeRange", "SearchConfig", "SearchResults", "Searcher", "RECIPES",
    "Ingestor", "IngestConfig", "IngestResult", "Ontology", "JsonMapping",
    "CommunityBuilder", "CommunityConfig",
    "Store", "GraphWrite", "Scope", "open_store",
    "LLMSettings", "LanguageModel", "Prompt", "build_language_model",
    "Embedder", "build_embedder", "CrossEncoder",
    "ChronomemError", "ConfigurationError", "InvalidInputError", "MissingExtraError", "ModelError",
    "NotFoundError", "StoreError",
    "__version__",
}  # fmt: skip


def test_exported_names_are_pinned():
    assert set(chronomem.__all__) == EXPECTED


def test_every_exported_name_resolves():
    for name in chronomem.__all__:
        assert getattr(chronomem, name) is not None, name


def test_importing_the_package_loads_no_heavy_library():
    code = (
        "import sys, chronomem; from chronomem import Chronomem, Searcher, Ingestor;"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'fastapi', 'openai', 'anthropic', 'falkordb', 'mcp')"
        " if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
