"""The managed server's sampler asks the grammar about the chosen token only: the same answers.

Both models run in this process (the packaged 1.5B, loaded twice: llama-cpp-python's own sampler
chain and :func:`chronomem.llm.llamacpp_server.grammar_last_llama`), at temperature 0 with the
server's default repeat penalty, so every token is the same or the shortcut is wrong.
"""

from __future__ import annotations

from typing import Any

import pytest

from chronomem.llm.llamacpp_server import grammar_last_llama

SYSTEM = "Extract the facts the message states as JSON. Each fact is a third-person sentence naming its entities."
MESSAGE = "Speaker: Chen Wei\nMessage: I moved over to the Platform team, and my new lead is Aisha Bello."
FACTS = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"source": {"type": "string"}, "target": {"type": "string"}, "fact": {"type": "string"}},
                "required": ["source", "target", "fact"],
            },
        }
    },
    "required": ["facts"],
}
# a schema the model would not follow unprompted: its first choices are refused and picked again
REFUSED = {"type": "object", "properties": {"animal": {"enum": ["zebra", "okapi"]}}, "required": ["animal"]}


@pytest.fixture(scope="module")
def models(model_path: Any) -> Any:
    import llama_cpp

    def load(kind: type) -> Any:
        return kind(model_path=str(model_path), n_ctx=1024, n_threads=2, seed=7, verbose=False)

    return load(llama_cpp.Llama), load(grammar_last_llama())


def _answer(llm: Any, schema: dict[str, Any], message: str) -> tuple[str, int]:
    answer = llm.create_chat_completion(
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": message}],
        response_format={"type": "json_object", "schema": schema},
        temperature=0, seed=7, repeat_penalty=1.1, max_tokens=80,
    )  # fmt: skip
    return answer["choices"][0]["message"]["content"], answer["usage"]["completion_tokens"]


@pytest.mark.parametrize(("schema", "message"), [(FACTS, MESSAGE), (REFUSED, "Say hello.")], ids=["facts", "refused"])
def test_the_grammar_last_sampler_writes_what_the_grammar_first_chain_writes(models, schema, message) -> None:
    stock, grammar_last = models
    expected, tokens = _answer(stock, schema, message)
    written, _ = _answer(grammar_last, schema, message)
    assert written == expected
    rejected = grammar_last._sampler.rejected  # the sampler of the last generation stays on the model
    if schema is REFUSED:
        assert rejected > 0  # the slow path ran and still wrote within the schema
        assert '"animal"' in written
    else:
        assert rejected < tokens / 2  # inside a schema the model's own pick nearly always stands
