"""llama-cpp-python's OpenAI-compatible server with a prompt cache whose memory bound holds.

Run as the child process of :class:`chronomem.llm.local_model.LocalServer`:
``python -m chronomem.llm.llamacpp_server --model … --cache true --cache_type ram --cache_size N``
takes the same arguments as ``python -m llama_cpp.server``.

Why not that server as it is: its RAM cache keeps, beside each prompt's evaluated state, a copy of
the logits of up to ``n_batch`` tokens (``n_batch`` × the vocabulary × 4 bytes: 300 MB a state with
Qwen's 152k-token vocabulary) and leaves that copy out of the size it bounds. The server grew past
the machine's memory on long runs whatever ``--cache_size`` said. The logits a state keeps are
never read back unless every token's logits are kept (``logits_all``, for prompt logprobs): after a
restore the model evaluates at least the prompt's last token again and samples from that. So the
cache here keeps one row of them (what the restore needs to broadcast into) and counts every byte it
holds against the bound.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["bounded_ram_cache", "main"]


def bounded_ram_cache() -> type:
    """A ``LlamaRAMCache`` that drops the logits copy of the states it keeps and bounds what it holds."""
    from llama_cpp.llama_cache import LlamaRAMCache

    class BoundedRAMCache(LlamaRAMCache):
        @property
        def cache_size(self) -> int:
            return sum(_held_bytes(state) for state in self.cache_state.values())

        def __setitem__(self, key: Any, value: Any) -> None:
            value.scores = value.scores[-1:].copy()
            super().__setitem__(key, value)

    return BoundedRAMCache


def _held_bytes(state: Any) -> int:
    return int(state.llama_state_size) + int(state.scores.nbytes) + int(state.input_ids.nbytes)


def main() -> None:
    import llama_cpp

    if "--logits_all" in sys.argv:  # prompt logprobs read every kept row of logits: not this server
        raise SystemExit("chronomem.llm.llamacpp_server keeps no logits in its cache: run it without --logits_all")
    from llama_cpp.server.__main__ import main as serve

    # the name the server's model loader builds its cache from
    setattr(llama_cpp, "LlamaRAMCache", bounded_ram_cache())  # noqa: B010
    serve()  # type: ignore[no-untyped-call]


if __name__ == "__main__":
    main()
