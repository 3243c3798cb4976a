"""One configuration surface: a TOML file and CHRONOMEM_* variables set every capability, the
reference table is generated from the catalogue, and settings travel to child processes intact."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from chronomem.config.reference import render_configuration_markdown
from chronomem.config.settings import Settings
from chronomem.config.sources import CATALOG
from chronomem.errors import ConfigurationError
from chronomem.ingest.json_mapping import EntitySpec, FactSpec, JsonMapping
from chronomem.ingest.ontology_spec import OntologySpec
from chronomem.llm.settings import LLMSettings

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"

FULL_TOML = """
embedder = "hashing"
cross_encoder = "llm"

[workers]
concurrency = 7
max_attempts = 5

[api]
max_limit = 40

[search]
recipe = "hybrid_mmr"
token_budget = 900

[ingest]
extraction = "combined"
reflexion = true

[communities]
refresh_threshold = 0.35
min_size = 3

[llm]
model = "llamacpp:gemma-3-270m"
role_models = { rerank = "heuristic" }
base_urls = { llamacpp = "http://127.0.0.1:9000/v1" }
timeout_s = 240

[ontology]
single_valued = ["LIVES_IN"]

[[ontology.entity_types]]
name = "Person"
description = "A human being."
properties = [{ name = "age", type = "Int", description = "years" }]

[[ontology.entity_types]]
name = "Company"

[[ontology.edge_types]]
name = "WORKS_FOR"
description = "Employment."
source_targets = [{ source = "Person", target = "Company" }]
single_valued = true

[[json_mappings]]
name = "crm"
source_description = "crm"
entities = [{ key = "account", name = "company", label = "Company" }]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "chronomem.toml"
    path.write_text(text, encoding="utf-8")
    return path


# -- the table -----------------------------------------------------------------------------------------


def test_the_configuration_page_is_the_generated_one():
    expected = render_configuration_markdown()
    assert DOCS.read_text(encoding="utf-8") == expected, "run: chronomem docs-config -o docs/configuration.md"


def _fields(section_type: type) -> set[str]:
    if dataclasses.is_dataclass(section_type):
        return {f.name for f in dataclasses.fields(section_type)}
    return set(section_type.model_fields)  # type: ignore[attr-defined]


def test_every_field_of_the_settings_model_has_one_row():
    settings = Settings()
    rows = {(e.section, e.field) for e in CATALOG}
    assert len(rows) == len(CATALOG)
    sections = {"workers", "api", "search", "store", "telemetry", "ingest", "communities"}
    top = {f.name for f in dataclasses.fields(Settings)} - sections - {"llm"}
    assert {f for s, f in rows if s == ""} == top
    for section in sections:
        expected = _fields(type(getattr(settings, section))) - {"json_mappings"}  # ingest's: top-level json_mappings
        assert {f for s, f in rows if s == section} == expected, section
    assert {f for s, f in rows if s == "llm"} == set(LLMSettings.model_fields)
    assert all(e.description for e in CATALOG)


def _sample(value: object, field: str) -> str:
    """A valid value other than the default, as a variable would carry it."""
    strings = {"extraction": "combined", "recipe": "hybrid_mmr", "context_recipe": "hybrid_rrf"}
    if isinstance(value, bool):
        return "false" if value else "true"
    if isinstance(value, int):
        return str(value + 1)
    if isinstance(value, float):
        return repr(round(value * 0.9, 4)) if value else "0.5"
    return strings[field]


@pytest.mark.parametrize("entry", [e for e in CATALOG if e.section in {"workers", "api", "search", "ingest",
                                                                      "communities"}], ids=lambda e: e.env)
def test_every_section_variable_is_read(entry):
    default = getattr(getattr(Settings(), entry.section), entry.field)
    settings = Settings.from_env({entry.env: _sample(default, entry.field)})
    assert getattr(getattr(settings, entry.section), entry.field) != default


# -- the file and the environment --------------------------------------------------------------------


def test_a_config_file_sets_every_capability(tmp_path):
    settings = Settings.from_env({"CHRONOMEM_CONFIG": str(write(tmp_path, FULL_TOML))})
    assert (settings.embedder, settings.cross_encoder) == ("hashing", "llm")
    assert (settings.workers.concurrency, settings.workers.max_attempts, settings.api.max_limit) == (7, 5, 40)
    assert (settings.search.recipe, settings.search.token_budget) == ("hybrid_mmr", 900)
    assert (settings.ingest.extraction, settings.ingest.reflexion) == ("combined", True)
    assert (settings.communities.refresh_threshold, settings.communities.min_size) == (0.35, 3)
    assert settings.communities.summarize_on_extend is False  # the server's own default is kept
    llm = settings.llm
    assert llm is not None and llm.model == "llamacpp:gemma-3-270m" and llm.timeout_s == 240
    assert llm.model_for("rerank") == "heuristic" and llm.base_url_for("llamacpp") == "http://127.0.0.1:9000/v1"
    ontology = settings.ontology
    assert ontology is not None
    assert ontology.entity_labels("Person") == ("Entity", "Person")
    assert ontology.entity_attributes(["Person"], {"age": "41", "shoe": 9}) == {"age": 41}
    assert ontology.allows("WORKS_FOR", ["Person"], ["Company"]) and not ontology.allows("WORKS_FOR", ["Company"],
                                                                                          ["Person"])
    assert ontology.is_single_valued("WORKS_FOR") and ontology.is_single_valued("LIVES_IN")
    assert [m.name for m in settings.json_mappings] == ["crm"]


def test_the_embedder_runtime_and_its_graph_cache_are_read(tmp_path):
    settings = Settings.from_env({"CHRONOMEM_EMBEDDER_RUNTIME": "torch", "CHRONOMEM_ONNX_CACHE": str(tmp_path)})
    assert (settings.embedder_runtime, settings.onnx_cache_dir) == ("torch", tmp_path)
    assert Settings.from_env(settings.environment()) == settings
    with pytest.raises(ConfigurationError, match="auto, onnx or torch"):
        Settings(embedder_runtime="cuda")  # type: ignore[arg-type]


def test_the_environment_wins_over_the_file_and_flags_name_the_file(tmp_path):
    path = write(tmp_path, FULL_TOML)
    settings = Settings.from_env({"CHRONOMEM_WORKERS": "2", "CHRONOMEM_INGEST_EXTRACTION": "staged",
                                  "CHRONOMEM_LLM_TIMEOUT_S": "5"}, config_file=path)
    assert settings.workers.concurrency == 2 and settings.workers.max_attempts == 5
    assert settings.ingest.extraction == "staged" and settings.ingest.reflexion
    assert settings.llm is not None and settings.llm.timeout_s == 5 and settings.llm.model == "llamacpp:gemma-3-270m"


def test_structured_settings_can_name_files_relative_to_the_config_file(tmp_path):
    (tmp_path / "types.json").write_text('{"entity_types": [{"name": "Pet", "description": "An animal."}]}')
    (tmp_path / "maps.toml").write_text('[[json_mappings]]\nname = "m"\nentities = [{ key = "a", name = "x" }]\n')
    path = write(tmp_path, 'ontology = "types.json"\njson_mappings = "maps.toml"\n')
    settings = Settings.from_env({}, config_file=path)
    assert settings.ontology is not None and list(settings.ontology.entity_types) == ["Pet"]
    assert [m.name for m in settings.json_mappings] == ["m"]
    inline = Settings.from_env({"CHRONOMEM_ONTOLOGY": '{"single_valued": ["OWNS"]}'})
    assert inline.ontology is not None and inline.ontology.is_single_valued("OWNS")


def test_settings_travel_to_child_processes_without_loss(tmp_path):
    settings = Settings.from_env({"CHRONOMEM_CONFIG": str(write(tmp_path, FULL_TOML)), "CHRONOMEM_AUTH": "0",
                                  "CHRONOMEM_STORE_URL": "falkordb://db:6379", "OPENAI_API_KEY": "sk-test"})
    child = Settings.from_env({**settings.environment(), "OPENAI_API_KEY": "sk-test"})
    assert child == settings
    assert OntologySpec.from_ontology(child.ontology) == OntologySpec.from_ontology(settings.ontology)  # type: ignore[arg-type]
    assert "sk-test" not in str(settings.environment())  # keys stay in their own inherited variables
    assert Settings.from_env(Settings().environment()) == Settings()


def test_python_made_settings_round_trip_too():
    mapping = JsonMapping(name="crm", entities=(EntitySpec(key="a", name="company", label="Company"),
                                                EntitySpec(key="b", name="owner")),
                          facts=(FactSpec(source="b", relation_type="OWNS", target="a", fact="{b} owns {a}"),))
    spec = OntologySpec.parse({"edge_types": [{"name": "OWNS", "single_valued": True}]})
    settings = Settings(json_mappings=(mapping,), ontology=spec.to_ontology(), llm=LLMSettings(model="heuristic"))
    assert Settings.from_env(settings.environment()) == settings


# -- bad values --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("environ", "named"), [
    ({"CHRONOMEM_INGEST_EXTRACTION": "both"}, "CHRONOMEM_INGEST_EXTRACTION"),
    ({"CHRONOMEM_COMMUNITIES_REFRESH_THRESHOLD": "2"}, "CHRONOMEM_COMMUNITIES_REFRESH_THRESHOLD"),
    ({"CHRONOMEM_SEARCH_TOKEN_BUDGET": "lots"}, "CHRONOMEM_SEARCH_TOKEN_BUDGET"),
    ({"CHRONOMEM_ONTOLOGY": '{"edge_types": [{"name": "X", "source_targets": [{"source": "Ghost"}]}]}'},
     "CHRONOMEM_ONTOLOGY"),
    ({"CHRONOMEM_JSON_MAPPINGS": '[{"name": "m"}]'}, "CHRONOMEM_JSON_MAPPINGS"),
    ({"CHRONOMEM_LLM_MODEL": "heuristic", "CHRONOMEM_LLM_TIMEOUT_S": "-1"}, "CHRONOMEM_LLM_TIMEOUT_S"),
    ({"CHRONOMEM_CONFIG": "/nonexistent/chronomem.toml"}, "CHRONOMEM_CONFIG"),
    ({"CHRONOMEM_EMBEDDER_RUNTIME": "cuda"}, "CHRONOMEM_EMBEDDER_RUNTIME"),
])
def test_a_malformed_variable_is_named(environ, named):
    with pytest.raises(ConfigurationError, match=named):
        Settings.from_env(environ)


@pytest.mark.parametrize(("text", "named"), [
    ("[ingest]\nreflexion = 'sometimes'\n", r"\[ingest\] reflexion"),
    ("[ingest]\nreflection = true\n", r"unknown key \[ingest\] reflection"),
    ("workerz = 3\n", "unknown key 'workerz'"),
    ("[llm]\nmodel = 'openai:gpt-4o'\napi_keys = { openai = 'sk' }\n", "environment only"),
    ("[ingest\n", "not valid TOML"),
])
def test_a_malformed_file_names_the_key(tmp_path, text, named):
    with pytest.raises(ConfigurationError, match=named):
        Settings.from_env({}, config_file=write(tmp_path, text))


def test_an_unknown_search_recipe_fails_when_the_memory_opens(tmp_path):
    from chronomem.embed.testing import HashingEmbedder
    from chronomem.memory import Chronomem

    settings = Settings.from_env({"CHRONOMEM_SEARCH_RECIPE": "hybrid_rfr"})
    with pytest.raises(ConfigurationError, match="hybrid_rfr"):
        Chronomem(store=None, embedder=HashingEmbedder(), settings=settings)  # type: ignore[arg-type]


# -- the examples in the docs run --------------------------------------------------------------------


def _toml_blocks(text: str) -> list[str]:
    import re

    return re.findall(r"```toml\n(.*?)```", text, re.S)


def test_the_readme_and_reference_examples_are_valid_configurations(tmp_path):
    readme = (DOCS.parents[1] / "README.md").read_text(encoding="utf-8").split("## Configure it", 1)[1]
    [example] = _toml_blocks(readme.split("\n## ", 1)[0])
    settings = Settings.from_env({}, config_file=write(tmp_path, example))
    assert settings.ingest.extraction == "combined" and settings.ingest.reflexion
    assert settings.ontology is not None and settings.ontology.is_single_valued("LIVES_IN")
    [reference] = _toml_blocks(DOCS.read_text(encoding="utf-8"))
    documented = Settings.from_env({}, config_file=write(tmp_path, reference))
    assert documented.ontology is not None and documented.ontology.allows("WORKS_FOR", ["Person"], ["Company"])
    assert [m.name for m in documented.json_mappings] == ["crm-accounts"]


def test_the_base_url_variable_applies_to_the_provider_of_the_files_model(tmp_path):
    path = write(tmp_path, '[llm]\nmodel = "llamacpp:gemma-3-270m"\n')
    settings = Settings.from_env({"CHRONOMEM_LLM_BASE_URL": "http://127.0.0.1:9001/v1",
                                  "CHRONOMEM_OLLAMA_BASE_URL": "http://gpu:11434/v1"}, config_file=path)
    assert settings.llm is not None
    assert settings.llm.base_url_for("llamacpp") == "http://127.0.0.1:9001/v1"
    assert settings.llm.base_url_for("ollama") == "http://gpu:11434/v1"
    assert Settings.from_env(settings.environment()) == settings
