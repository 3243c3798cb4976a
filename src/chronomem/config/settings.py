"""One typed settings object for everything the library facade, the service and the CLI start.

Nothing here reads the environment on import: :meth:`Settings.from_env` does, when a program asks it
to, together with the optional TOML config file that ``CHRONOMEM_CONFIG`` (or ``chronomem
--config``) names. Every field has a default that works offline on one machine (an embedded SQLite
store under ``data_dir``, the local embedder, no language model). Where each setting is read from,
and what it means, is :mod:`chronomem.config.sources`' catalogue, rendered as
``docs/configuration.md``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronomem.config.sources import load_settings, settings_environment
from chronomem.errors import ConfigurationError
from chronomem.store.settings import StoreSettings
from chronomem.telemetry.settings import TelemetrySettings

if TYPE_CHECKING:
    from chronomem.communities.config import CommunityConfig
    from chronomem.embed.local import Runtime
    from chronomem.ingest.config import IngestConfig
    from chronomem.ingest.json_mapping import JsonMapping
    from chronomem.ingest.ontology import Ontology
    from chronomem.llm.settings import LLMSettings

__all__ = ["ApiLimits", "SearchDefaults", "Settings", "WorkerSettings"]


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """The ingestion worker pool (docs/design.md §6): groups in parallel, each group's episodes in order."""

    concurrency: int = 4  # groups processed at the same time by one pool
    in_process: bool = True  # the server runs a pool itself; False = separate `chronomem worker`s
    max_attempts: int = 3  # attempts per episode on model failures before it is marked failed
    retry_base_s: float = 1.0  # backoff before the second attempt; doubles each time
    retry_max_s: float = 60.0
    poll_interval_s: float = 1.0  # how often an idle pool looks for work other processes queued

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.max_attempts < 1:
            raise ConfigurationError("worker concurrency and max_attempts must be at least 1")
        if self.retry_base_s < 0 or self.retry_max_s < 0 or self.poll_interval_s <= 0:
            raise ConfigurationError("worker delays must be positive")


@dataclass(frozen=True, slots=True)
class ApiLimits:
    """What one HTTP request may carry."""

    max_request_bytes: int = 1_000_000
    max_messages_per_request: int = 100
    max_content_chars: int = 50_000  # one message or episode
    max_query_chars: int = 4_000
    max_limit: int = 100  # largest page or result count a caller may ask for


@dataclass(frozen=True, slots=True)
class SearchDefaults:
    """What search and context use when a call does not say."""

    recipe: str = "hybrid_rrf"  # a name of chronomem.search.config.RECIPES
    context_recipe: str = "context"
    token_budget: int = 2000  # chronomem.search.context.DEFAULT_TOKEN_BUDGET

    def __post_init__(self) -> None:
        if self.token_budget < 1:
            raise ConfigurationError("the context token budget must be at least 1")


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything needed to open a :class:`chronomem.Chronomem` and serve it."""

    data_dir: Path = Path(".chronomem")
    store_url: str | None = None  # None: an embedded SQLite file under data_dir
    embedder: str = "local"
    # how the local embedder runs its model: "auto" (ONNX Runtime where it can, else torch), "onnx", "torch"
    embedder_runtime: Runtime = "auto"
    onnx_cache_dir: Path | None = None  # None: ~/.cache/chronomem/onnx (the local model's exported graph)
    # the cross_encoder reranker: "none", "llm" (the rerank role's model grades) or "local:<model dir>"
    cross_encoder: str = "none"
    llm: LLMSettings | None = None  # None: episodes are stored but not extracted
    workers: WorkerSettings = field(default_factory=WorkerSettings)
    api: ApiLimits = field(default_factory=ApiLimits)
    auth_required: bool = True
    control_db: Path | None = None  # None: <data_dir>/control.db (projects, keys, users, threads)
    ingest: IngestConfig = field(default_factory=lambda: _default_ingest())
    ontology: Ontology | None = None  # None: no custom types, every entity an "Entity"
    # JSON episodes matching one of these are mapped without a model (added to ingest.json_mappings)
    json_mappings: tuple[JsonMapping, ...] = ()
    communities: CommunityConfig = field(default_factory=lambda: _default_communities())
    search: SearchDefaults = field(default_factory=SearchDefaults)
    store: StoreSettings = field(default_factory=StoreSettings)
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)

    def __post_init__(self) -> None:
        # Paths given as strings ("./memory") are accepted and normalized once, here.
        object.__setattr__(self, "data_dir", Path(self.data_dir))
        if self.control_db is not None:
            object.__setattr__(self, "control_db", Path(self.control_db))
        if self.onnx_cache_dir is not None:
            object.__setattr__(self, "onnx_cache_dir", Path(self.onnx_cache_dir))
        from chronomem.embed.local import RUNTIMES

        if self.embedder_runtime not in RUNTIMES:
            raise ConfigurationError(f"embedder_runtime is {self.embedder_runtime!r}: auto, onnx or torch")
        object.__setattr__(self, "json_mappings", tuple(self.json_mappings))

    @property
    def resolved_store_url(self) -> str:
        if self.store_url:
            return self.store_url
        return f"sqlite:///{(self.data_dir / 'chronomem.db').as_posix()}"

    @property
    def resolved_control_db(self) -> Path:
        return self.control_db or self.data_dir / "control.db"

    def with_(self, **changes: Any) -> Settings:
        """A copy with some fields changed."""
        return replace(self, **changes)

    def environment(self) -> dict[str, str]:
        """The ``CHRONOMEM_*`` variables from which :meth:`from_env` reads these settings back (for
        processes started from this one; API keys travel in their own inherited variables)."""
        return settings_environment(self)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, config_file: str | Path | None = None) -> Settings:
        """Read the config file (``config_file``, else ``CHRONOMEM_CONFIG``, else none) and then the
        ``CHRONOMEM_*`` variables (and the LLM module's own) from ``environ`` (default
        ``os.environ``) over it; unset ones keep their defaults, malformed ones raise
        ``ConfigurationError`` naming the variable, or the file and key."""
        return load_settings(cls, os.environ if environ is None else environ, config_file)


# The ingestion and community packages are imported only when settings are made, not on import.


def _default_ingest() -> IngestConfig:
    from chronomem.ingest.config import IngestConfig

    return IngestConfig()


def _default_communities() -> CommunityConfig:
    from chronomem.communities.config import CommunityConfig

    # Extension updates names and summaries without a model, so an episode costs no extra call; the
    # drift-triggered refresh (or an explicit build) re-summarises with the model in batches.
    return CommunityConfig(summarize_on_extend=False)
