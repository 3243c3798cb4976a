"""Output caps sized from the answer schema: lowered where the schema bounds every answer, never
below what the longest valid answer needs, and the declared ceiling where the schema is unbounded."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from chronomem.crossencoder.llm import rerank_prompt
from chronomem.llm.base import Message, Prompt
from chronomem.llm.budget import output_cap, schema_token_bound
from chronomem.llm.openai import OpenAIChatModel


class Tag(BaseModel):
    label: str = Field(max_length=20)
    weight: int = Field(ge=0, le=10)
    kind: Literal["topic", "person"] = "topic"
    note: str | None = Field(default=None, max_length=8)


class Tags(BaseModel):
    tags: list[Tag] = Field(max_length=5)


class Unbounded(BaseModel):
    tags: list[Tag]


class FreeForm(BaseModel):
    attributes: dict[str, Any]


class Tree(BaseModel):
    name: str = Field(max_length=5)
    children: list[Tree] = Field(default_factory=list, max_length=2)


def _prompt(answer: type[BaseModel], ceiling: int = 1000) -> Prompt[None, Any]:
    return Prompt(name="p", answer=answer, build=lambda _: [Message("user", "x")], max_output_tokens=ceiling)


def test_a_bounded_schema_lowers_the_cap_but_leaves_room_for_its_longest_answer():
    longest = Tags(tags=[Tag(label="x" * 20, weight=10, kind="person", note="y" * 8)] * 5)
    text = json.dumps(longest.model_dump(), indent=1)  # whitespace included
    cap = output_cap(_prompt(Tags))
    assert cap < 1000
    assert cap >= len(text) / 2  # even at two characters per token it fits


def test_the_declared_ceiling_wins_when_it_is_lower():
    assert output_cap(_prompt(Tags, ceiling=40)) == 40


def test_unbounded_free_form_and_recursive_schemas_keep_the_declared_ceiling():
    for answer in (Unbounded, FreeForm, Tree):
        assert schema_token_bound(answer.model_json_schema()) is None
        assert output_cap(_prompt(answer, ceiling=700)) == 700


def test_the_adapter_sends_the_sized_cap():
    adapter = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", structured_output="prompt")
    payload = adapter._payload(_prompt(Tags), [Message("user", "x")], "prompt")
    assert payload["max_tokens"] == output_cap(_prompt(Tags)) < 1000


def test_the_rerank_prompt_is_bounded_by_its_schema():
    for count in (1, 3, 24):
        prompt = rerank_prompt(count)
        bound = schema_token_bound(prompt.answer.model_json_schema())
        assert bound is not None and output_cap(prompt) <= prompt.max_output_tokens
