"""The local server's prompt cache: it keeps one row of logits a state and bounds every byte it holds."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("llama_cpp")

from chronomem.llm.llamacpp_server import bounded_ram_cache

VOCAB = 1000


def _state(tokens: list[int], kv_bytes: int = 10_000) -> SimpleNamespace:
    return SimpleNamespace(scores=np.ones((512, VOCAB), dtype=np.single), input_ids=np.array(tokens, dtype=np.intc),
                           n_tokens=len(tokens), llama_state_size=kv_bytes)


def test_a_kept_state_holds_one_row_of_logits_and_all_it_holds_is_counted() -> None:
    cache = bounded_ram_cache()(capacity_bytes=1 << 20)
    cache[(1, 2, 3)] = _state([1, 2, 3])
    (kept,) = cache.cache_state.values()
    assert kept.scores.shape == (1, VOCAB)
    assert cache.cache_size == 10_000 + VOCAB * 4 + 3 * 4


def test_the_bound_evicts_the_oldest_states() -> None:
    one = 10_000 + VOCAB * 4 + 3 * 4
    cache = bounded_ram_cache()(capacity_bytes=2 * one)
    for first in range(4):
        cache[(first, 2, 3)] = _state([first, 2, 3])
    assert cache.cache_size <= 2 * one
    assert list(cache.cache_state) == [(2, 2, 3), (3, 2, 3)]


def test_the_kept_row_restores_into_the_models_logits() -> None:
    """``Llama.load_state`` assigns a state's logits to the model's first ``n_tokens`` rows: one row broadcasts."""
    cache = bounded_ram_cache()(capacity_bytes=1 << 20)
    cache[(1, 2, 3)] = _state([1, 2, 3])
    scores = np.zeros((512, VOCAB), dtype=np.single)
    scores[:3, :] = cache[(1, 2, 3)].scores.copy()
    assert scores[:3].all() and not scores[3:].any()
