"""Output caps sized from the answer schema: lowered where the schema bounds every answer, never
below what the longest valid answer needs, and the declared ceiling where the schema is unbounded."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from chronomem.crossencoder.llm import rerank_prompt
from chronomem.llm.base import Message, Prompt
from chronomem.llm.budget import (
    answer_schema_for,
    limit_schema,
    output_cap,
    schema_token_bound,
    text_bound,
)
from chronomem.llm.openai import OpenAIChatModel
from chronomem.llm.parsing import parse_within_bounds


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


# -- maps, limits from the context, and every prompt of the package --------------------------------------

_MAP = {"type": "object", "maxProperties": 3, "propertyNames": {"maxLength": 10},
        "additionalProperties": {"type": "string", "maxLength": 20}}


def test_a_map_is_bounded_by_its_key_count_key_length_and_values_and_unbounded_without_one():
    longest = json.dumps({f"k{i}".ljust(10, "x"): "v" * 20 for i in range(3)})
    bound = schema_token_bound(_MAP)
    assert bound is not None and bound >= len(longest) / 2
    for missing in ("maxProperties", "propertyNames"):
        assert schema_token_bound({k: v for k, v in _MAP.items() if k != missing}) is None
    assert schema_token_bound({**_MAP, "additionalProperties": {"type": "string"}}) is None


class Reply(BaseModel):
    words: list[Annotated[str, text_bound(30)]] = Field(default_factory=list, json_schema_extra={"maxItems": 50})
    note: Annotated[str, text_bound(400)] | None = None
    tags: dict[str, Any] = Field(default_factory=dict, json_schema_extra=_MAP)


def _limited_prompt(words: int) -> Prompt[int, Any]:
    return Prompt(name="reply", answer=Reply, build=lambda _: [Message("user", "x")], max_output_tokens=5000,
                  limits=lambda n: {"Reply.words": n, "Reply.words[]": 8, "Reply.note": 10, "Reply.tags": words})


def test_limits_tighten_the_schema_and_never_loosen_it():
    schema = limit_schema(Reply.model_json_schema(), {"Reply.words": 4, "Reply.words[]": 8, "Reply.note": 900})
    words, note = schema["properties"]["words"], schema["properties"]["note"]["anyOf"][0]
    assert words["maxItems"] == 4 and words["items"]["maxLength"] == 8
    assert note["maxLength"] == 400  # 900 would loosen it
    assert Reply.model_json_schema()["properties"]["words"]["maxItems"] == 50  # the model's own is untouched


def test_a_limit_naming_no_such_field_is_an_error():
    for typo in ("Reply.wrods", "Replies.words", "Reply.note[]"):
        with pytest.raises(ValueError, match="no list, string, map or integer field"):
            limit_schema(Reply.model_json_schema(), {typo: 1})


class Tagged(BaseModel):
    tags: dict[str, Any] = Field(json_schema_extra=_MAP)  # required: it stays, bounded
    pick: int | None = None


def test_a_map_limited_to_nothing_forbids_keys_the_way_grammars_understand():
    tags = limit_schema(Tagged.model_json_schema(), {"Tagged.tags": 0})["properties"]["tags"]
    assert tags["maxProperties"] == 0 and tags["additionalProperties"] is False


def test_an_optional_field_limited_to_nothing_is_not_offered_and_its_answer_is_the_default():
    schema = answer_schema_for(_limited_prompt(0), 3)
    assert "tags" not in schema["properties"] and schema["additionalProperties"] is False
    assert schema_token_bound(schema) < schema_token_bound(answer_schema_for(_limited_prompt(1), 3))
    # written anyway (a provider without a grammar): dropped like any item over a bound
    reply, dropped = parse_within_bounds('{"words": ["a"], "tags": {"x": 1}}', Reply, schema)
    assert reply.tags == {} and reply.words == ["a"] and dropped == 1


def test_an_integer_limit_is_its_maximum():
    pick = limit_schema(Tagged.model_json_schema(), {"Tagged.pick": 3})["properties"]["pick"]
    assert pick["anyOf"][0]["maximum"] == 3


def test_the_cap_follows_the_context_and_the_adapter_sends_that_schema_and_cap():
    prompt = _limited_prompt(2)
    caps = [output_cap(prompt, n) for n in (1, 5, 20)]
    assert caps[0] < caps[1] < caps[2] <= output_cap(prompt) == output_cap(prompt, None)
    # vLLM compiles the schema into a grammar: it is sent tightened for the call
    adapter = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", provider="vllm", structured_output="json_schema")
    payload = adapter._payload(prompt, [Message("user", "x")], "json_schema", 5)
    assert payload["max_tokens"] == caps[1]
    assert payload["response_format"]["json_schema"]["schema"]["properties"]["words"]["maxItems"] == 5


def _package_prompts() -> list[tuple[Prompt[Any, Any], Any]]:
    """Every prompt of the package with a typical context (the ones a context tightens)."""
    from datetime import UTC, datetime

    from chronomem.app import summaries
    from chronomem.communities import prompts as communities
    from chronomem.crossencoder.llm import RerankContext
    from chronomem.ingest import prompts as ingest

    episode = ingest.EpisodeText("Alice: I joined Acme in Berlin, with Bob.", datetime(2024, 5, 6, tzinfo=UTC))
    entities = (ingest.EntityRef("Alice"), ingest.EntityRef("Acme"), ingest.EntityRef("Berlin"))
    fact_question = ingest.FactQuestion(1, "f", "R", (ingest.CandidateFact(1, "c", "R", True),))
    entity_question = ingest.EntityQuestion(1, "Bob", "Entity", (ingest.CandidateEntity(1, "Bob Smith"),))
    member = communities.MemberText("Alice", "an engineer")
    return [
        (ingest.ENTITY_EXTRACTION, ingest.EntityExtractionContext(episode)),
        (ingest.ENTITY_REFLEXION, ingest.ReflexionContext(episode, ("Alice",))),
        (ingest.FACT_EXTRACTION, ingest.FactExtractionContext(episode, entities)),
        (ingest.COMBINED_EXTRACTION, ingest.CombinedExtractionContext(episode)),
        (ingest.ENTITY_RESOLUTION, ingest.EntityResolutionContext(episode, (entity_question,))),
        (ingest.FACT_RESOLUTION, ingest.FactResolutionContext((fact_question,))),
        (ingest.SUMMARY_REWRITE, ingest.SummaryContext((ingest.SummaryItem(1, "Alice", "long"),), 300)),
        (summaries.USER_SUMMARY, summaries.SummaryUpdate("the user Alice", "", ("x",))),
        (summaries.THREAD_SUMMARY, summaries.SummaryUpdate("the thread t", "", ("x",))),
        (communities.SUMMARIZE_COMMUNITIES,
         communities.SummarizeCommunities((communities.CommunityDraft("c1", (member,)),))),
        (communities.SUMMARIZE_MEMBERS, communities.MemberChunk((member,), 1, 1, 1)),
        (communities.COMBINE_SUMMARIES, communities.PartialSummaries(("a",), 2, ("Alice",))),
        (communities.UPDATE_COMMUNITIES, communities.UpdateCommunities(
            (communities.CommunityChange("c1", "n", "s", (member,)),))),
        (rerank_prompt(3), RerankContext("q", ("a", "b", "c"))),
    ]


def test_every_prompt_of_the_package_has_a_bounded_answer_and_a_cap_no_higher_for_its_context():
    for prompt, context in _package_prompts():
        assert schema_token_bound(answer_schema_for(prompt, context)) is not None, prompt.name
        assert output_cap(prompt, context) <= output_cap(prompt) <= prompt.max_output_tokens, prompt.name


def test_a_small_context_lowers_the_resolution_caps_below_their_ceilings():
    caps = {prompt.name: output_cap(prompt, context) for prompt, context in _package_prompts()}
    ceilings = {prompt.name: prompt.max_output_tokens for prompt, _ in _package_prompts()}
    for name in ("resolve_facts", "resolve_entities", "rewrite_summaries", "community_summarize"):
        assert caps[name] < ceilings[name], name


def test_a_grammar_server_is_sent_no_string_bound_it_cannot_compile_but_the_cap_keeps_it():
    class Essay(BaseModel):
        title: Annotated[str, text_bound(80)]
        body: Annotated[str, text_bound(3000)]

    prompt = _prompt(Essay, ceiling=5000)
    adapter = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1", structured_output="json_object_schema")
    payload = adapter._payload(prompt, [Message("user", "x")], "json_object_schema")
    sent = payload["response_format"]["schema"]["properties"]
    assert sent["title"]["maxLength"] == 80 and "maxLength" not in sent["body"]  # llama.cpp refuses ~1,500
    assert payload["max_tokens"] == output_cap(prompt) < 5000
