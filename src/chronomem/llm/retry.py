"""The retry wrapper of a ``LanguageModel``: each whole ``complete`` call is retried per a
:class:`~chronomem.providers.retry.RetryPolicy` (backoff with jitter, ``Retry-After`` honoured;
see :mod:`chronomem.providers.retry`), and every retry is recorded in the usage accounting.
"""

from __future__ import annotations

from typing import Any

from chronomem.errors import ModelUnavailableError
from chronomem.llm.accounting import record_usage
from chronomem.llm.base import Completion, LanguageModel, Prompt, Usage
from chronomem.llm.closing import aclose_model
from chronomem.providers.retry import RetryPolicy, call_with_retries

__all__ = ["RetryingModel"]


class RetryingModel:
    """Wraps a ``LanguageModel``: transient failures are retried; ``retries`` counts them all."""

    def __init__(self, inner: LanguageModel, policy: RetryPolicy | None = None) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self.retries = 0
        self.model_name: str = getattr(inner, "model_name", type(inner).__name__)

    async def complete(self, prompt: Prompt[Any, Any], context: Any) -> Completion[Any]:
        retried = 0

        def count(_error: ModelUnavailableError, _delay: float) -> None:
            nonlocal retried
            retried += 1
            self.retries += 1

        try:
            completion = await call_with_retries(
                lambda: self.inner.complete(prompt, context), self.policy, on_retry=count
            )
        finally:
            if retried:
                record_usage(Usage(retries=retried, model=self.model_name))
        completion.usage.retries += retried
        return completion

    async def aclose(self) -> None:
        await aclose_model(self.inner)
