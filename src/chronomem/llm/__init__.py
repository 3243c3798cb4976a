"""The LLM layer: the port (typed prompt → validated answer), adapters, wrappers, settings, test doubles.

Importing it starts nothing and imports no SDK: adapters speak the providers' wire formats with httpx.
The test doubles live in :mod:`chronomem.llm.testing`, the loopback fake provider in
:mod:`chronomem.llm.fakeserver`.
"""

from chronomem.llm.accounting import process_usage, usage_scope
from chronomem.llm.anthropic import AnthropicModel
from chronomem.llm.base import Completion, LanguageModel, Message, ModelRole, Prompt, Usage
from chronomem.llm.cache import CachedModel, ResponseCache
from chronomem.llm.limits import LimitedModel
from chronomem.llm.openai import OpenAIChatModel
from chronomem.llm.retry import RetryingModel
from chronomem.llm.routing import RoutedModel
from chronomem.llm.settings import LLMSettings, build_language_model
from chronomem.providers.limits import RateLimiter, shared_limiter
from chronomem.providers.retry import RetryPolicy

__all__ = [
    "AnthropicModel",
    "CachedModel",
    "Completion",
    "LLMSettings",
    "LanguageModel",
    "LimitedModel",
    "Message",
    "ModelRole",
    "OpenAIChatModel",
    "Prompt",
    "RateLimiter",
    "ResponseCache",
    "RetryPolicy",
    "RetryingModel",
    "RoutedModel",
    "Usage",
    "build_language_model",
    "process_usage",
    "shared_limiter",
    "usage_scope",
]
