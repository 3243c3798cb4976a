"""One typed settings object for everything the library facade, the service and the CLI start.

Nothing here reads the environment on import: :meth:`Settings.from_env` does, when a program asks it
to. Every field has a default that works offline on one machine (an embedded SQLite store under
``data_dir``, the local embedder, no language model).

Environment variables read by :meth:`Settings.from_env` (all optional):

==============================  ==========================================================
``CHRONOMEM_DATA_DIR``          directory for the embedded store and the control plane
``CHRONOMEM_STORE_URL``         store URL (default ``sqlite:///<data_dir>/chronomem.db``)
``CHRONOMEM_EMBEDDER``          embedder spec for ``build_embedder`` (default ``local``)
``CHRONOMEM_WORKERS``           groups ingested in parallel by the in-process worker pool
``CHRONOMEM_INPROCESS_WORKERS`` ``0`` to leave ingestion to separate ``chronomem worker``s
``CHRONOMEM_MAX_ATTEMPTS``      model failures tolerated per episode before ``failed``
``CHRONOMEM_RETRY_BASE_S``      first retry delay; doubles on each attempt
``CHRONOMEM_MAX_REQUEST_BYTES`` largest HTTP request body accepted
``CHRONOMEM_AUTH``              ``0`` to serve without API keys (local development only)
==============================  ==========================================================

and, when ``CHRONOMEM_LLM_MODEL`` is set (e.g. ``openai:gpt-4o-mini``), whatever
``chronomem.llm.settings.LLMSettings.from_env`` reads for the model. Without it no model is used:
episodes are stored and searchable as ``unextracted`` until ``chronomem reprocess``.

What ingestion extracts (``ingest``, ``ontology``, ``json_mappings``) and how communities are kept
(``communities``) are set in Python for now; no variable reads them yet.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronomem.errors import ConfigurationError

if TYPE_CHECKING:
    from chronomem.communities.config import CommunityConfig
    from chronomem.ingest.config import IngestConfig
    from chronomem.ingest.json_mapping import JsonMapping
    from chronomem.ingest.ontology import Ontology
    from chronomem.llm.settings import LLMSettings

__all__ = ["ApiLimits", "Settings", "WorkerSettings"]

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """The ingestion worker pool (DESIGN §6): groups in parallel, each group's episodes in order."""

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
class Settings:
    """Everything needed to open a :class:`chronomem.Chronomem` and serve it."""

    data_dir: Path = Path(".chronomem")
    store_url: str | None = None  # None: an embedded SQLite file under data_dir
    embedder: str = "local"
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

    def __post_init__(self) -> None:
        # Paths given as strings ("./memory") are accepted and normalized once, here.
        object.__setattr__(self, "data_dir", Path(self.data_dir))
        if self.control_db is not None:
            object.__setattr__(self, "control_db", Path(self.control_db))
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
        """The ``CHRONOMEM_*`` variables that :meth:`from_env` reads back as these settings (for
        processes started from this one). The model settings are not included: they are read from
        their own variables, which a child process inherits."""
        return {
            "CHRONOMEM_DATA_DIR": str(self.data_dir),
            "CHRONOMEM_STORE_URL": self.store_url or "",
            "CHRONOMEM_EMBEDDER": self.embedder,
            "CHRONOMEM_WORKERS": str(self.workers.concurrency),
            "CHRONOMEM_INPROCESS_WORKERS": "1" if self.workers.in_process else "0",
            "CHRONOMEM_MAX_ATTEMPTS": str(self.workers.max_attempts),
            "CHRONOMEM_RETRY_BASE_S": repr(self.workers.retry_base_s),
            "CHRONOMEM_MAX_REQUEST_BYTES": str(self.api.max_request_bytes),
            "CHRONOMEM_AUTH": "1" if self.auth_required else "0",
        }

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read the ``CHRONOMEM_*`` variables (and the LLM module's own) from ``environ``
        (default ``os.environ``); unset ones keep their defaults, malformed ones raise
        ``ConfigurationError`` naming the variable."""
        env = os.environ if environ is None else environ
        base = cls()
        workers = WorkerSettings(
            concurrency=_int(env, "CHRONOMEM_WORKERS", base.workers.concurrency),
            in_process=_bool(env, "CHRONOMEM_INPROCESS_WORKERS", base.workers.in_process),
            max_attempts=_int(env, "CHRONOMEM_MAX_ATTEMPTS", base.workers.max_attempts),
            retry_base_s=_float(env, "CHRONOMEM_RETRY_BASE_S", base.workers.retry_base_s),
        )
        api = replace(base.api, max_request_bytes=_int(env, "CHRONOMEM_MAX_REQUEST_BYTES", base.api.max_request_bytes))
        return cls(
            data_dir=Path(env.get("CHRONOMEM_DATA_DIR", str(base.data_dir))),
            store_url=env.get("CHRONOMEM_STORE_URL") or None,
            embedder=env.get("CHRONOMEM_EMBEDDER", base.embedder),
            llm=_llm_from_env(env),
            workers=workers,
            api=api,
            auth_required=_bool(env, "CHRONOMEM_AUTH", base.auth_required),
        )


# The ingestion and community packages are imported only when settings are made, not on import.


def _default_ingest() -> IngestConfig:
    from chronomem.ingest.config import IngestConfig

    return IngestConfig()


def _default_communities() -> CommunityConfig:
    from chronomem.communities.config import CommunityConfig

    # Extension updates names and summaries without a model, so an episode costs no extra call; the
    # drift-triggered refresh (or an explicit build) re-summarises with the model in batches.
    return CommunityConfig(summarize_on_extend=False)


def _llm_from_env(env: Mapping[str, str]) -> LLMSettings | None:
    """The model settings, when a model is chosen (``CHRONOMEM_LLM_MODEL``); else no model."""
    if not env.get("CHRONOMEM_LLM_MODEL"):
        return None
    from chronomem.llm.settings import LLMSettings

    return LLMSettings.from_env(env)


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigurationError(f"{name} must be an integer, got {raw!r}") from None


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigurationError(f"{name} must be a number, got {raw!r}") from None


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise ConfigurationError(f"{name} must be 1/0, true/false, yes/no or on/off, got {raw!r}")
