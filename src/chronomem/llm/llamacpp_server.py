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

And why its sampling is changed: with a JSON schema, llama-cpp-python puts the grammar in the sampler
chain, so every generated token first runs each of the vocabulary's 152k tokens through the grammar;
on a small CPU that costs about as much as decoding the token. llama.cpp's own server samples first
and asks the grammar only about the token chosen, filtering the whole vocabulary only when that token
is refused. The model here does the same (:func:`grammar_last_llama`): the same tokens, a fraction of
the work, since a model writing inside a schema nearly always picks a token the schema allows.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

import numpy as np

__all__ = ["bounded_ram_cache", "grammar_last_llama", "main"]


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


def grammar_last_llama() -> type:
    """A ``Llama`` whose grammar judges the token its sampler chain picks, not every token first."""
    import llama_cpp

    class GrammarLastLlama(llama_cpp.Llama):
        def _init_sampler(self, *args: Any, **kwargs: Any) -> Any:  # the grammar always comes by name
            grammar = kwargs.pop("grammar", None)
            chain = super()._init_sampler(*args, **kwargs)
            if grammar is None:
                return chain
            return GrammarLastSampler(chain, self._model.vocab, grammar, self.n_vocab())

    return GrammarLastLlama


class GrammarLastSampler:
    """Picks a token as ``penalties → grammar → chain`` would, asking the grammar about one token.

    The chain (penalties, then greedy or the temperature samplers) picks from the raw logits; if the
    grammar accepts that token it is the pick, since a grammar only removes tokens. If it refuses it,
    the pick is made again from the logits with the grammar applied to all of them. Both the grammar
    and the chain then accept the token, as ``llama_sampler_sample`` does for one chain.
    """

    def __init__(self, chain: Any, vocab: Any, grammar: Any, n_vocab: int) -> None:
        import llama_cpp
        from llama_cpp._internals import LlamaTokenDataArray

        self._llama_cpp = llama_cpp
        self.chain = chain  # a llama_cpp._internals.LlamaSampler; freed by its own finaliser
        self._grammar = llama_cpp.llama_sampler_init_grammar(
            vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self._grammar:  # llama.cpp logs why; the request fails, not the server
            self._grammar = None
            raise ValueError("llama.cpp could not parse the answer's grammar")
        self._n_vocab = n_vocab
        self._all = LlamaTokenDataArray(n_vocab=n_vocab)
        self._one = LlamaTokenDataArray(n_vocab=1)
        self.rejected = 0  # picks the grammar refused, for the tests: how often the slow path ran

    def sample(self, ctx: Any, idx: int = -1) -> int:
        api = self._llama_cpp
        logits = np.ctypeslib.as_array(api.llama_get_logits_ith(ctx.ctx, idx), shape=(self._n_vocab,))
        token = self._pick(logits, with_grammar=False)
        self._one.copy_logits(np.zeros(1, dtype=np.single))
        self._one.candidates_data.id[0] = token
        api.llama_sampler_apply(self._grammar, ctypes.byref(self._one.candidates))
        if np.isneginf(self._one.candidates_data.logit[0]):
            self.rejected += 1
            token = self._pick(logits, with_grammar=True)
        api.llama_sampler_accept(self._grammar, token)
        api.llama_sampler_accept(self.chain.sampler, token)
        return token

    def _pick(self, logits: Any, *, with_grammar: bool) -> int:
        api = self._llama_cpp
        self._all.copy_logits(logits)
        candidates = ctypes.byref(self._all.candidates)
        if with_grammar:
            api.llama_sampler_apply(self._grammar, candidates)
        api.llama_sampler_apply(self.chain.sampler, candidates)
        return int(self._all.candidates_data.id[self._all.candidates.selected])

    def close(self) -> None:
        grammar, self._grammar = getattr(self, "_grammar", None), None
        if grammar is not None:
            self._llama_cpp.llama_sampler_free(grammar)

    def __del__(self) -> None:
        self.close()


def main() -> None:
    import llama_cpp

    if "--logits_all" in sys.argv:  # prompt logprobs read every kept row of logits: not this server
        raise SystemExit("chronomem.llm.llamacpp_server keeps no logits in its cache: run it without --logits_all")
    from llama_cpp.server.__main__ import main as serve

    # the name the server's model loader builds its cache from
    setattr(llama_cpp, "LlamaRAMCache", bounded_ram_cache())  # noqa: B010
    setattr(llama_cpp, "Llama", grammar_last_llama())  # noqa: B010
    serve()  # type: ignore[no-untyped-call]


if __name__ == "__main__":
    main()
