"""Fixtures for the LLM layer's tests."""

from __future__ import annotations

from chronomem.llm.pytest_plugin import no_model_requests

__all__ = ["no_model_requests"]
