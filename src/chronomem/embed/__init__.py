"""Embedders: the port, a local sentence-transformers one, OpenAI-compatible endpoints, a cache, a test double.

Importing this package loads no model and does not import torch (the local embedder imports it on
first use).
"""

from chronomem.embed.base import Embedder
from chronomem.embed.cache import CachedEmbedder
from chronomem.embed.factory import build_embedder
from chronomem.embed.local import LocalEmbedder
from chronomem.embed.openai import OpenAIEmbedder
from chronomem.embed.testing import HashingEmbedder

__all__ = ["CachedEmbedder", "Embedder", "HashingEmbedder", "LocalEmbedder", "OpenAIEmbedder", "build_embedder"]
