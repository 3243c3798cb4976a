"""The cross-encoder a ``Settings.cross_encoder`` spec names (``CHRONOMEM_CROSS_ENCODER``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from chronomem.errors import ConfigurationError

if TYPE_CHECKING:
    from chronomem.crossencoder.base import CrossEncoder
    from chronomem.llm.base import LanguageModel

__all__ = ["CROSS_ENCODER_SETTING", "build_cross_encoder"]

CROSS_ENCODER_SETTING = "CHRONOMEM_CROSS_ENCODER"  # named by every error that asks for one


def build_cross_encoder(spec: str, llm: LanguageModel | None) -> CrossEncoder | None:
    """``none`` → no cross-encoder; ``llm`` → the model grades passages (prompt role ``rerank``);
    ``local:<dir>`` → a sentence-transformers cross-encoder loaded from that directory."""
    kind, _, argument = spec.strip().partition(":")
    if kind in ("", "none"):
        return None
    if kind == "llm":
        if llm is None:
            raise ConfigurationError(f"{CROSS_ENCODER_SETTING}=llm needs a model: set CHRONOMEM_LLM_MODEL")
        from chronomem.crossencoder.llm import LLMCrossEncoder

        return LLMCrossEncoder(llm)
    if kind == "local" and argument:
        if not Path(argument).is_dir():  # found at start-up, not at the first search
            raise ConfigurationError(f"{CROSS_ENCODER_SETTING}: no model directory at {argument}")
        from chronomem.crossencoder.local import SentenceTransformersCrossEncoder

        return SentenceTransformersCrossEncoder(argument)
    raise ConfigurationError(f"{CROSS_ENCODER_SETTING} must be none, llm or local:<model dir>, got {spec!r}")
