"""The limiting wrapper of a ``LanguageModel``: each call holds a slot of a
:class:`~chronomem.providers.limits.RateLimiter` (shared per endpoint, see
:mod:`chronomem.providers.limits`) and reserves its estimated tokens while it runs.
"""

from __future__ import annotations

from typing import Any

from chronomem.llm.accounting import estimate_message_tokens
from chronomem.llm.base import Completion, LanguageModel, Prompt
from chronomem.llm.budget import output_cap
from chronomem.llm.closing import aclose_model
from chronomem.providers.limits import RateLimiter

__all__ = ["LimitedModel"]


class LimitedModel:
    """Wraps a ``LanguageModel`` so each call holds a slot of ``limiter`` while it runs."""

    def __init__(self, inner: LanguageModel, limiter: RateLimiter) -> None:
        self.inner = inner
        self.limiter = limiter
        self.model_name: str = getattr(inner, "model_name", type(inner).__name__)

    async def complete(self, prompt: Prompt[Any, Any], context: Any) -> Completion[Any]:
        reserve = estimate_message_tokens(prompt.messages(context)) + output_cap(prompt, context)
        async with self.limiter.slot(reserve) as reservation:
            completion = await self.inner.complete(prompt, context)
            reservation.settle(completion.usage.input_tokens + completion.usage.output_tokens)
        return completion

    async def aclose(self) -> None:
        await aclose_model(self.inner)
