"""The chronomem exception tree.

Every error the library raises on purpose derives from :class:`ChronomemError`; foreign exceptions
(sqlite3, httpx, redis, provider SDKs) are translated at the adapter boundary with ``raise … from exc``.

    ChronomemError
    ├── ConfigurationError          settings are missing or inconsistent; an optional extra is absent
    │   └── MissingExtraError       an optional dependency is not installed (names the extra)
    ├── InvalidInputError           the caller sent something we refuse (bad id, naive datetime, …)
    ├── NotFoundError               an object the caller named does not exist in that group
    ├── ConflictError               the request contradicts stored state (e.g. id reused with other content)
    ├── StoreError                  the storage backend failed
    │   └── StoreUnavailableError   the backend cannot be reached (retryable)
    ├── ModelError                  a language model, embedder or cross-encoder failed
    │   ├── ModelUnavailableError   transport failure, 5xx, timeout, rate limit after all retries
    │   ├── ModelOutputError        the answer could not be parsed or validated, even after correction
    │   ├── ModelTruncatedError     the answer was cut off at the output-token limit
    │   └── ModelCallForbiddenError a real model call was attempted where they are forbidden (tests)
    └── IngestionError              an episode could not be processed (wraps the stage that failed)
"""

from __future__ import annotations

__all__ = [
    "ChronomemError",
    "ConfigurationError",
    "ConflictError",
    "IngestionError",
    "InvalidInputError",
    "MissingExtraError",
    "ModelCallForbiddenError",
    "ModelError",
    "ModelOutputError",
    "ModelTruncatedError",
    "ModelUnavailableError",
    "NotFoundError",
    "StoreError",
    "StoreUnavailableError",
]


class ChronomemError(Exception):
    """Root of every error chronomem raises on purpose."""


class ConfigurationError(ChronomemError):
    """Settings are missing or inconsistent."""


class MissingExtraError(ConfigurationError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"{package!r} is not installed; install the extra with: pip install 'chronomem[{extra}]'"
        )
        self.package = package
        self.extra = extra


class InvalidInputError(ChronomemError, ValueError):
    """The caller sent something we refuse; nothing was changed."""


class NotFoundError(ChronomemError, LookupError):
    """An object the caller named does not exist (in that group)."""


class ConflictError(ChronomemError):
    """The request contradicts stored state; nothing was changed."""


class StoreError(ChronomemError):
    """The storage backend failed."""


class StoreUnavailableError(StoreError):
    """The storage backend cannot be reached; the operation may be retried."""


class ModelError(ChronomemError):
    """A language model, embedder or cross-encoder failed."""


class ModelUnavailableError(ModelError):
    """Transport failure, server error, timeout or rate limit that outlasted every retry."""


class ModelOutputError(ModelError):
    """The model's answer could not be parsed or validated, even after one corrective retry."""


class ModelTruncatedError(ModelOutputError):
    """The model's answer was cut off at its output-token limit."""


class ModelCallForbiddenError(ModelError):
    """A real model call was attempted where real calls are forbidden (tests)."""


class IngestionError(ChronomemError):
    """An episode could not be processed; ``stage`` names the pipeline stage that failed."""

    def __init__(self, message: str, *, stage: str | None = None) -> None:
        super().__init__(message)
        self.stage = stage
