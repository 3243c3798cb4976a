"""Where settings come from: a TOML file, ``CHRONOMEM_*`` variables, and back to variables.

Every setting has one row in :data:`CATALOG`: its key in the config file (``[section] field``), its
environment variable, and what it means. Reading goes defaults < config file < environment (and the
CLI's flags win over both); :func:`settings_environment` writes settings back as variables so a
child process reads exactly the same settings. ``docs/configuration.md`` is generated from the
catalogue (``chronomem docs-config``) and a test fails when either drifts from the settings model.

Values are validated by pydantic against the field's own type, so ``"8"`` is an int and ``"no"`` a
bool; a bad value raises ``ConfigurationError`` naming the variable or the file and key. The
ontology and the JSON mappings are structured: in the file they are tables (or a path to a TOML or
JSON file), in the environment a path or inline JSON.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from chronomem.embed.local import Runtime
from chronomem.errors import ConfigurationError

if TYPE_CHECKING:
    from chronomem.config.settings import Settings
    from chronomem.ingest.json_mapping import JsonMapping
    from chronomem.ingest.ontology import Ontology
    from chronomem.llm.settings import LLMSettings

__all__ = [
    "CATALOG",
    "CONFIG_ENV",
    "SECTIONS",
    "Entry",
    "load_json_mappings",
    "load_ontology",
    "load_settings",
    "settings_environment",
    "value_text",
]

CONFIG_ENV = "CHRONOMEM_CONFIG"
LLM_SETTINGS_ENV = "CHRONOMEM_LLM_SETTINGS"  # how a parent process hands its model settings to children


@dataclass(frozen=True, slots=True)
class Entry:
    """One setting: ``section`` ("" = top level) and ``field`` name its place in ``Settings`` and
    in the config file; ``env`` is its variable (empty when the file is the only way)."""

    section: str
    field: str
    env: str
    description: str

    @property
    def key(self) -> str:
        return f"{self.section}.{self.field}" if self.section else self.field


def _generic(section: str, descriptions: Mapping[str, str], renamed: Mapping[str, str] | None = None) -> list[Entry]:
    """Entries of a section whose variables are ``CHRONOMEM_<SECTION>_<FIELD>`` unless ``renamed``."""
    renamed = renamed or {}
    return [
        Entry(section, name, renamed.get(name, f"CHRONOMEM_{section.upper()}_{name.upper()}"), text)
        for name, text in descriptions.items()
    ]


_TOP = [
    Entry("", "data_dir", "CHRONOMEM_DATA_DIR", "directory of the embedded store and the control plane"),
    Entry("", "store_url", "CHRONOMEM_STORE_URL",
          "store URL (`sqlite:///path.db`, `falkordb://host:6379`); empty: a SQLite file under `data_dir`"),
    Entry("", "embedder", "CHRONOMEM_EMBEDDER", "embedder: `local` (packaged MiniLM), `hashing`, `openai:<model>`, …"),
    Entry("", "embedder_runtime", "CHRONOMEM_EMBEDDER_RUNTIME",
          "how `local` embedders run: `auto` (ONNX Runtime where it can, else torch), `onnx` or `torch`"),
    Entry("", "onnx_cache_dir", "CHRONOMEM_ONNX_CACHE",
          "where a local model's ONNX graph is exported once; empty: `~/.cache/chronomem/onnx`"),
    Entry("", "cross_encoder", "CHRONOMEM_CROSS_ENCODER",
          "the `cross_encoder` reranker: `none`, `llm` (graded by the rerank model) or `local:<model dir>`"),
    Entry("", "auth_required", "CHRONOMEM_AUTH", "`false` serves without API keys (local development only)"),
    Entry("", "control_db", "CHRONOMEM_CONTROL_DB", "control-plane file; empty: `<data_dir>/control.db`"),
    Entry("", "ontology", "CHRONOMEM_ONTOLOGY",
          "server-wide ontology: a table (see docs/configuration.md) or a TOML/JSON file; env: a path or inline JSON"),
    Entry("", "json_mappings", "CHRONOMEM_JSON_MAPPINGS",
          "server-wide JSON mappings: an array of tables or a TOML/JSON file; env: a path or inline JSON"),
]

_WORKERS = _generic("workers", {
    "concurrency": "groups one worker pool ingests at the same time",
    "in_process": "the server runs a worker pool itself; `false`: separate `chronomem worker` processes",
    "max_attempts": "attempts per episode on model failures before it is marked `failed`",
    "retry_base_s": "delay before the second attempt, doubling on each one",
    "retry_max_s": "longest delay between attempts",
    "poll_interval_s": "how often an idle pool looks for work other processes queued",
}, renamed={"concurrency": "CHRONOMEM_WORKERS", "in_process": "CHRONOMEM_INPROCESS_WORKERS",
            "max_attempts": "CHRONOMEM_MAX_ATTEMPTS", "retry_base_s": "CHRONOMEM_RETRY_BASE_S"})

_API = _generic("api", {
    "max_request_bytes": "largest HTTP request body accepted (413 past it)",
    "max_messages_per_request": "messages one request may add",
    "max_content_chars": "characters of one message or episode",
    "max_query_chars": "characters of a search query",
    "max_limit": "largest page or result count a caller may ask for",
}, renamed={"max_request_bytes": "CHRONOMEM_MAX_REQUEST_BYTES"})

_SEARCH = _generic("search", {
    "recipe": "recipe `search` uses when a call names none (`hybrid_rrf`, `hybrid_mmr`, `hybrid_cross_encoder`, …)",
    "context_recipe": "recipe of the context block when a call names none",
    "token_budget": "tokens of a context block when a call gives no budget",
})

_STORE = _generic("store", {
    "sqlite_ann_from": "SQLite: vectors of one group and scope from which search uses an approximate index "
                       "(faiss IVF, trained in the background; needs the `ann` extra); fewer: exact",
})

_TELEMETRY = _generic("telemetry", {
    "metrics": "serve Prometheus metrics at `/metrics` on the API server (docs/operations.md)",
    "worker_metrics_port": "port on which `chronomem worker` serves `/metrics`; 0: none",
    "tracing": "OpenTelemetry spans: `off`, `console`, `otlp` (the `OTEL_EXPORTER_OTLP_*` variables) or "
               "`global` (the application's own provider); needs the `otel` extra",
    "service_name": "the traces' `service.name`",
    "log_format": "`text` or `json` (one object per line, with the episode, task and trace ids)",
    "model_prices": "`model=input/cached_input/output` in dollars per million tokens, `;` between models: "
                    "`chronomem_llm_cost_usd_total`",
})

_INGEST = _generic("ingest", {
    "context_episodes": "previous episodes of the group shown to extraction (the paper's n = 4)",
    "fact_context_episodes": "of those, the newest shown to the staged fact-extraction call",
    "extraction": "`staged` (entities, then facts: the paper) or `combined` (one call extracts both)",
    "reflexion": "a second pass asks the model which entities it missed (one more call per episode)",
    "facts_from_notes": "facts the entity notes state between two entities no extracted fact joins (grounded; no call)",
    "entity_notes": "the entity call writes each entity a one-sentence note for its summary (off: the message's "
                    "sentences and new facts; fewer tokens written)",
    "entity_candidates": "resolution candidates per name, from each of cosine and BM25",
    "fuzzy_ambiguous": "a name at least this similar (0-1) to an entity is asked about in the batched call "
                       "(only equal names merge without a model)",
    "embedding_ambiguous": "name-cosine counterpart of `fuzzy_ambiguous`",
    "place_names": "an entity bearing another name of the place a name denotes in the GeoNames gazetteer "
                   "(München for Munich) is asked about; never merged by it alone (needs the `places` extra)",
    "duplicate_similarity": "same-pair facts at least this close are duplicate candidates",
    "contradiction_similarity": "endpoint-sharing facts at least this close may contradict",
    "same_relation_similarity": "the same bound for facts of the same relation type",
    "fact_candidates": "candidates per new fact, per kind",
    "facts_shown": "existing facts shown to fact extraction, judged there at no extra call (0: by resolution's "
                   "batched call; recommended for small local models, which copy the facts shown back)",
    "end_review": "one call per episode asks which current facts of the existing entities it names it ends, "
                  "and since when (stage 6b); `false` saves that call and leaves closing to resolution by closeness",
    "end_candidates": "current facts shown to that call, the closest in meaning to the message or its new facts "
                      "first",
    "summary_max_chars": "an entity summary (one note per episode) past this many characters is rewritten "
                         "as a narrative",
    "summary_target_chars": "length a rewrite aims at",
    "summary_early_rewrite": "summaries past this fraction of the bound join a rewrite that happens anyway",
})

_COMMUNITIES = _generic("communities", {
    "max_rounds": "label-propagation rounds per level",
    "merge_levels": "propagations over the contracted graph that merge fragments (0 = plain)",
    "min_size": "smaller clusters are not stored",
    "refresh_threshold": "share of entities drifted at which communities are rebuilt",
    "refresh_min_entities": "groups smaller than this are left to extension alone",
    "cached_groups": "groups whose membership index stays in memory",
    "members_per_call": "member lines one summary call reads",
    "communities_per_call": "small communities summarised together in one call",
    "max_map_calls": "chunks read per large community",
    "member_summary_chars": "each member's summary is cut to this in prompts",
    "max_concurrent_calls": "summary calls in flight",
    "reuse_summaries": "a community whose members did not change keeps its summary",
    "name_members": "central members whose names make a name without a model",
    "summary_chars": "budget of summaries written without a model",
    "summarize_on_extend": "one model call per extension updates names and summaries",
    "max_updates_per_call": "communities one extension call updates",
})

# The model settings: LLMSettings.from_env reads their variables, which chronomem.llm.environment
# declares; each row here names the variables that fill its field.
_LLM_FIELDS = {
    "model": "`provider:model` (e.g. `openai:gpt-4o-mini`, `llamacpp:qwen2.5`), `local` (the packaged model) or "
             "`heuristic`: the rule-based stand-in, not an LLM. Unset: no model, episodes stay `unextracted`",
    "role_models": "a model per role (`extraction`, `resolution`, `summary`, `rerank`, `default`); file: a table",
    "base_urls": "endpoint per provider; `CHRONOMEM_LLM_BASE_URL` is the default model's provider's; file: a "
                 "table `{ llamacpp = \"http://127.0.0.1:8080/v1\" }`",
    "api_keys": "API keys: from the environment only, never the config file",
    "azure_api_version": "Azure OpenAI API version",
    "structured_output": "`auto` (negotiated with the endpoint), `json_schema`, `json_object_schema`, "
                         "`json_object` or `prompt`",
    "temperature": "sampling temperature (unset to send none)",
    "max_tokens_field": "`max_tokens` or `max_completion_tokens` (o-series, gpt-5)",
    "timeout_s": "seconds one call may take; unset: 60, or 300 for local servers",
    "max_attempts": "attempts per call on transient failures",
    "initial_backoff_s": "first retry delay of a call",
    "max_backoff_s": "longest retry delay of a call",
    "corrective_retries": "retries that show the model its invalid answer",
    "max_concurrency": "calls in flight per endpoint and model",
    "requests_per_minute": "request rate limit per endpoint and model",
    "tokens_per_minute": "token rate limit per endpoint and model",
    "cache_path": "on-disk response cache (a SQLite file)",
    "local_threads": "threads of the packaged local model's server (0: the cores, up to 8; 1 on a busy machine)",
}


def _llm_entries() -> list[Entry]:
    from chronomem.llm.environment import VARIABLES

    def variables(field: str) -> str:
        names = [v.name for v in VARIABLES if v.setting == field or v.setting.startswith(f"{field}[")]
        if field == "base_urls":  # one row, not one per provider
            names = ["CHRONOMEM_LLM_BASE_URL", "CHRONOMEM_<PROVIDER>_BASE_URL",
                     *(n for n in names if not n.startswith("CHRONOMEM_"))]
        if field == "role_models":
            names = ["CHRONOMEM_LLM_MODEL_<ROLE>"]
        return ", ".join(names)

    return [Entry("llm", field, variables(field), text) for field, text in _LLM_FIELDS.items()]


_LLM = _llm_entries()

CATALOG: tuple[Entry, ...] = (
    *_TOP, *_WORKERS, *_API, *_SEARCH, *_STORE, *_TELEMETRY, *_INGEST, *_COMMUNITIES, *_LLM
)
SECTIONS = ("workers", "api", "search", "store", "telemetry", "ingest", "communities")
_STRUCTURED = {"ontology", "json_mappings"}
_TOP_TYPES: dict[str, Any] = {"data_dir": Path, "store_url": str | None, "embedder": str, "embedder_runtime": Runtime,
                              "onnx_cache_dir": Path | None, "cross_encoder": str, "auth_required": bool,
                              "control_db": Path | None}


# -- reading -----------------------------------------------------------------------------------------


def load_settings(
    settings_class: type[Settings], environ: Mapping[str, str], config_file: str | Path | None = None
) -> Settings:
    """``settings_class`` from the config file (``config_file``, else ``$CHRONOMEM_CONFIG``, else
    none), then the environment on top (the class is passed in: the model does not live here)."""
    path = Path(config_file) if config_file else (Path(environ[CONFIG_ENV]) if environ.get(CONFIG_ENV) else None)
    document = _read_config_file(path) if path is not None else {}
    source = _Source(environ, document, path)
    base = settings_class()
    values: dict[str, Any] = {name: source.top(name, _TOP_TYPES[name], getattr(base, name)) for name in _TOP_TYPES}
    for section in SECTIONS:
        values[section] = source.section(section, getattr(base, section))
    values["llm"] = _llm(source)
    values["ontology"] = source.structured("ontology", load_ontology)
    values["json_mappings"] = source.structured("json_mappings", load_json_mappings) or ()
    try:
        return settings_class(**values)
    except (ConfigurationError, ValueError, TypeError) as exc:
        raise ConfigurationError(f"settings are inconsistent: {exc}") from None


@dataclass(slots=True)
class _Source:
    """The environment over one config file; says where each value came from when it is bad."""

    environ: Mapping[str, str]
    document: dict[str, Any]
    path: Path | None

    def _file_origin(self, section: str, name: str) -> str:
        return f"{self.path}: {f'[{section}] ' if section else ''}{name}"

    def raw(self, entry: Entry) -> tuple[Any, str] | None:
        """The value given for ``entry`` and where, or ``None`` when neither gives one."""
        if entry.env and self.environ.get(entry.env, "") != "":
            return self.environ[entry.env], entry.env
        table = self.document.get(entry.section, {}) if entry.section else self.document
        if entry.field in table:
            return table[entry.field], self._file_origin(entry.section, entry.field)
        return None

    def top(self, name: str, annotation: Any, default: Any) -> Any:
        found = self.raw(_entry("", name))
        if found is None:
            return default
        value, origin = found
        if value == "" or value is None:
            return None if default is None or annotation in (str | None, Path | None) else default
        return _validated(annotation, value, origin)

    def section(self, section: str, default: Any) -> Any:
        """The section's object: its defaults with the given values validated over them."""
        hints = _field_types(type(default))
        given: dict[str, Any] = {}
        origins: list[str] = []
        for entry in (e for e in CATALOG if e.section == section):
            found = self.raw(entry)
            if found is not None:
                given[entry.field] = _validated(hints[entry.field], found[0], found[1])
                origins.append(found[1])
        if not given:
            return default
        try:
            return _replace(default, given)
        except (ConfigurationError, ValueError, TypeError) as exc:
            raise ConfigurationError(f"{', '.join(origins)}: {exc}") from None

    def structured(self, name: str, loader: Callable[[Any, str, Path | None], Any]) -> Any:
        found = self.raw(_entry("", name))
        if found is None:
            return None
        value, origin = found
        relative_to = self.path.parent if self.path is not None and origin != _entry("", name).env else None
        return loader(value, origin, relative_to)


def _entry(section: str, name: str) -> Entry:
    return next(e for e in CATALOG if e.section == section and e.field == name)


def _read_config_file(path: Path) -> dict[str, Any]:
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"cannot read the config file {path} ({CONFIG_ENV} or --config): {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path} is not valid TOML: {exc}") from None
    _refuse_unknown_keys(document, path)
    return document


def _refuse_unknown_keys(document: dict[str, Any], path: Path) -> None:
    known_top = {e.field for e in CATALOG if not e.section} | set(SECTIONS) | {"llm"}
    for key, value in document.items():
        if key not in known_top:
            raise ConfigurationError(f"{path}: unknown key {key!r}; known: {', '.join(sorted(known_top))}")
        if key in (*SECTIONS, "llm"):
            if not isinstance(value, dict):
                raise ConfigurationError(f"{path}: [{key}] must be a table")
            known = {e.field for e in CATALOG if e.section == key}
            for name in value:
                if name == "api_keys" and key == "llm":
                    raise ConfigurationError(f"{path}: [llm] api_keys: API keys are read from the environment "
                                             "only (OPENAI_API_KEY, ANTHROPIC_API_KEY, …), never a file")
                if name not in known:
                    raise ConfigurationError(f"{path}: unknown key [{key}] {name}; known: {', '.join(sorted(known))}")


def _field_types(cls: type) -> dict[str, Any]:
    if issubclass(cls, BaseModel):
        return {name: info.annotation for name, info in cls.model_fields.items()}
    return typing.get_type_hints(cls)


def _validated(annotation: Any, value: Any, origin: str) -> Any:
    try:
        return TypeAdapter(annotation).validate_python(value)
    except ValidationError as exc:
        message = exc.errors()[0]["msg"]
        raise ConfigurationError(f"{origin}: {message}, got {value!r}") from None


def _replace(default: Any, changes: dict[str, Any]) -> Any:
    if isinstance(default, BaseModel):
        return type(default).model_validate({**default.model_dump(), **changes})
    return dataclasses.replace(default, **changes)


def _llm(source: _Source) -> LLMSettings | None:
    """The model settings: the file's ``[llm]`` table, a parent's ``CHRONOMEM_LLM_SETTINGS``, then
    the LLM variables on top (LLMSettings.from_env reads them). No model is named: no model."""
    from chronomem.llm.settings import LLMSettings

    inherited = source.environ.get(LLM_SETTINGS_ENV, "")
    table: dict[str, Any] = dict(source.document.get("llm", {}))
    origin = f"{source.path}: [llm]"
    if inherited:
        try:
            table = {**table, **json.loads(inherited)}
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{LLM_SETTINGS_ENV} is not valid JSON: {exc}") from None
        origin = LLM_SETTINGS_ENV
    if not table.get("model") and not source.environ.get("CHRONOMEM_LLM_MODEL"):
        return None
    try:  # the model the variables' CHRONOMEM_LLM_BASE_URL applies to may come from the file
        from_env = LLMSettings.from_env(source.environ, model=source.environ.get("CHRONOMEM_LLM_MODEL")
                                        or table.get("model") or LLMSettings.model_fields["model"].default)
        given_by_env = from_env.model_dump(exclude_unset=True)
        merged = {**table, **{k: v for k, v in given_by_env.items() if v not in ({}, None)}}
        for name in ("role_models", "base_urls"):  # tables merge: a variable overrides one entry
            merged[name] = {**table.get(name, {}), **given_by_env.get(name, {})}
        merged["api_keys"] = from_env.api_keys
        return LLMSettings.model_validate(merged)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else ""
        entry = next((e for e in _LLM if e.field == field), None)
        where = entry.env if entry is not None and entry.env and source.environ.get(entry.env) else f"{origin} {field}"
        raise ConfigurationError(f"{where}: {error['msg']}") from None


def load_ontology(value: Any, origin: str = "ontology", relative_to: Path | None = None) -> Ontology:
    """An ontology from a table, inline JSON or a TOML/JSON file path (see ``OntologySpec``)."""
    from chronomem.ingest.ontology_spec import OntologySpec

    return OntologySpec.parse(_structured_data(value, origin, relative_to), origin=origin).to_ontology(origin=origin)


def load_json_mappings(value: Any, origin: str = "json_mappings", relative_to: Path | None = None
                       ) -> tuple[JsonMapping, ...]:
    """JSON mappings from an array of tables, inline JSON or a TOML/JSON file (a TOML file holds
    them as ``[[json_mappings]]``)."""
    from chronomem.ingest.json_mapping import JsonMapping

    data = _structured_data(value, origin, relative_to)
    if isinstance(data, dict):
        data = data.get("json_mappings", data.get("mappings"))
    try:
        mappings = TypeAdapter(tuple[JsonMapping, ...]).validate_python(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise ConfigurationError(f"{origin}: not valid JSON mappings: {where}: {error['msg']}") from None
    names = [m.name for m in mappings]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"{origin}: two JSON mappings share a name")
    return mappings


def _structured_data(value: Any, origin: str, relative_to: Path | None) -> Any:
    """A table as is; a string is inline JSON when it starts like JSON, else a TOML or JSON file."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigurationError(f"{origin}: not valid JSON: {exc}") from None
    path = Path(text)
    if relative_to is not None and not path.is_absolute():
        path = relative_to / path
    try:
        content = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"{origin}: cannot read {path}: {exc}") from None
    try:
        return json.loads(content) if path.suffix.lower() == ".json" else tomllib.loads(content)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"{origin}: {path} is not valid {path.suffix.lstrip('.').upper()}: {exc}") from None


# -- writing back ------------------------------------------------------------------------------------


def settings_environment(settings: Settings) -> dict[str, str]:
    """Variables from which :func:`load_settings` reads ``settings`` back exactly (API keys excepted:
    they stay in the variables the child process inherits)."""
    env: dict[str, str] = {}
    for entry in CATALOG:
        if entry.section in SECTIONS:
            env[entry.env] = value_text(getattr(getattr(settings, entry.section), entry.field))
        elif not entry.section and entry.field not in _STRUCTURED:
            env[entry.env] = value_text(getattr(settings, entry.field))
    if settings.ontology is not None:
        from chronomem.ingest.ontology_spec import OntologySpec

        env["CHRONOMEM_ONTOLOGY"] = OntologySpec.from_ontology(settings.ontology).model_dump_json()
    env["CHRONOMEM_JSON_MAPPINGS"] = json.dumps([m.model_dump(mode="json") for m in settings.json_mappings])
    if settings.llm is not None:
        env[LLM_SETTINGS_ENV] = settings.llm.model_dump_json(exclude={"api_keys"})
        env["CHRONOMEM_LLM_MODEL"] = settings.llm.model
    return env


def value_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)
