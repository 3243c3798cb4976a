"""Cross-encoders: the port, LLM-graded and sentence-transformers adapters, a token-overlap test double.

Importing this package does not import torch (the sentence-transformers adapter imports it on first use).
"""

from chronomem.crossencoder.base import CrossEncoder
from chronomem.crossencoder.llm import LLMCrossEncoder
from chronomem.crossencoder.local import SentenceTransformersCrossEncoder
from chronomem.crossencoder.testing import TokenOverlapCrossEncoder

__all__ = ["CrossEncoder", "LLMCrossEncoder", "SentenceTransformersCrossEncoder", "TokenOverlapCrossEncoder"]
