"""Each ingestion prompt's tokens by part: what a prompt cache serves and what every call pays for.

Every prompt is rendered for a typical LoCoMo turn (the median conv-26 message, with four previous
turns) and counted with the packaged model's own tokenizer (Qwen2.5, read from the GGUF with no
weights loaded): the static prefix (the system message: rules, schema, worked examples) split
into its parts, and the call's data (the user message). With the server's prompt cache, a call
after the first evaluates only the data.

Prints ``PROMPT_static_tokens``, ``PROMPT_data_tokens`` and ``PROMPT_static_share`` per prompt, and
the parts of the static prefix as ``PROMPT_rules_tokens``, ``PROMPT_schema_tokens``,
``PROMPT_examples_tokens`` and ``PROMPT_json_schema_tokens`` (the answer's JSON schema, which the
OpenAI-compatible adapter adds to the system message for a llama.cpp server).

    .venv/bin/python bench/prompt_tokens.py
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chronomem.ingest.prompts import (
    ENTITY_EXTRACTION,
    ENTITY_RESOLUTION,
    FACT_EXTRACTION,
    FACT_RESOLUTION,
    CandidateEntity,
    CandidateFact,
    EntityExtractionContext,
    EntityQuestion,
    EntityRef,
    EntityResolutionContext,
    EpisodeText,
    FactExtractionContext,
    FactQuestion,
    FactResolutionContext,
)
from chronomem.llm.local_model import assemble, local_model
from chronomem.llm.openai import OpenAIChatModel

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ingest import locomo_episodes  # noqa: E402  (bench/ingest.py: conv-26 as episodes)


def _contexts() -> dict[str, Any]:
    turns = locomo_episodes("g", 60)
    current = sorted(turns, key=lambda e: len(e.content))[len(turns) // 2]
    index = turns.index(current)
    previous = tuple(t.text for t in turns[max(0, index - 4):index])
    text = EpisodeText(current.text, current.reference_time, previous=previous, speaker=current.speaker)
    refs = (EntityRef(current.speaker or "Caroline"), EntityRef("LGBTQ support group"), EntityRef("Melanie"))
    existing = tuple(CandidateFact(n, f"Caroline attended a support group on day {n}", "ATTENDED", True,
                                   datetime(2023, 5, n, tzinfo=UTC)) for n in range(1, 4))
    question = EntityQuestion(0, "Mel", "Entity", (CandidateEntity(1, "Melanie", "Caroline's friend, a painter"),))
    fact = FactQuestion(0, "Caroline went to a support group", "ATTENDED",
                        (CandidateFact(1, "Caroline attended an LGBTQ support group", "ATTENDED", True),))
    return {
        "extract_entities": (ENTITY_EXTRACTION, EntityExtractionContext(text)),
        "extract_facts": (FACT_EXTRACTION, FactExtractionContext(text, refs, existing=existing)),
        "resolve_entities": (ENTITY_RESOLUTION, EntityResolutionContext(text, (question,))),
        "resolve_facts": (FACT_RESOLUTION, FactResolutionContext((fact,))),
    }


def _parts(system: str) -> dict[str, str]:
    """The static prefix cut at its schema line, its worked example and the adapter's schema
    instruction (the answer's JSON schema, after a blank line)."""
    system, _, instruction = system.partition("\n\n")
    rules, _, rest = system.partition("\nSchema: ")
    schema, _, example = rest.partition("\nExample.")
    return {"rules": rules, "schema": "Schema: " + schema, "examples": ("Example." + example) if example else "",
            "json_schema": instruction}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    args = parser.parse_args(argv)
    from llama_cpp import Llama

    vocab = Llama(model_path=str(assemble(local_model(args.model))), vocab_only=True, verbose=False)

    def tokens(text: str) -> int:
        return len(vocab.tokenize(text.encode(), add_bos=False)) if text else 0

    # the messages as the local model's server gets them: with the answer's schema instruction that
    # the adapter adds in its llama.cpp mode (json_object_schema)
    adapter = OpenAIChatModel(args.model, provider="local")
    for name, (prompt, context) in _contexts().items():
        sent = adapter._payload(prompt, prompt.messages(context), "json_object_schema", context)["messages"]
        system, user = (m["content"] for m in sent)
        static, data = tokens(system), tokens(user)
        print(f"{name}_static_tokens: {static}")
        print(f"{name}_data_tokens: {data}")
        print(f"{name}_static_share: {static / (static + data):.2f}")
        for part, text in _parts(system).items():
            print(f"{name}_{part}_tokens: {tokens(text)}")


if __name__ == "__main__":
    main()
