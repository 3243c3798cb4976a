"""Token estimation where a provider reports no counts (test doubles, some local servers, budgets).

``ceil(characters / 4)`` is the usual rule of thumb for English text with BPE tokenizers. It is an
estimate, not a count: rate-limit reservations and context budgets use it, usage records say so.
"""

from __future__ import annotations

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens"]

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``: the estimator used wherever a provider reports no counts."""
    return -(-len(text) // CHARS_PER_TOKEN)
