"""Route each prompt to the model configured for its role (``Prompt.role``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chronomem.llm.base import Completion, LanguageModel, Prompt, writes_prose
from chronomem.llm.closing import aclose_model

__all__ = ["RoutedModel"]


class RoutedModel:
    """Answers a prompt with ``routes[prompt.role]``, or ``default`` when its role has no route."""

    def __init__(
        self,
        default: LanguageModel,
        routes: Mapping[str, LanguageModel] | None = None,
        *,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.default = default
        self.routes = dict(routes or {})
        self._on_close = on_close  # releases what the stacks share (the disk cache)

    @property
    def writes_prose(self) -> bool:
        """Whether every model it routes to writes prose (see :func:`~chronomem.llm.base.writes_prose`)."""
        return all(writes_prose(model) for model in (self.default, *self.routes.values()))

    def model_for(self, role: str) -> LanguageModel:
        return self.routes.get(role, self.default)

    async def complete(self, prompt: Prompt[Any, Any], context: Any) -> Completion[Any]:
        return await self.model_for(prompt.role).complete(prompt, context)

    async def aclose(self) -> None:
        seen: set[int] = set()
        for model in (self.default, *self.routes.values()):
            if id(model) not in seen:
                seen.add(id(model))
                await aclose_model(model)
        if self._on_close is not None:
            self._on_close()
