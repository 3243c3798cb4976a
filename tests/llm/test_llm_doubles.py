"""The shipped test doubles behave like a real model behind the port."""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from chronomem.errors import InvalidInputError, ModelCallForbiddenError, ModelOutputError, ModelTruncatedError
from chronomem.llm.accounting import usage_scope
from chronomem.llm.base import LanguageModel, Message, Prompt
from chronomem.llm.testing import (
    FunctionModel,
    SchemaModel,
    ScriptedModel,
    allow_model_requests,
    forbid_model_requests,
    no_model_requests,
)
from chronomem.providers.guard import ensure_model_requests_allowed
from chronomem.providers.tokens import estimate_tokens


class Entity(BaseModel):
    name: str
    kind: Literal["person", "place"]


class Entities(BaseModel):
    entities: list[Entity]


class Ctx(BaseModel):
    text: str


def _build(ctx: Ctx) -> list[Message]:
    return [Message("system", "Extract entities."), Message("user", ctx.text)]


EXTRACT = Prompt(name="extract", answer=Entities, build=_build, max_output_tokens=200)


def test_function_model_is_a_language_model():
    assert isinstance(FunctionModel(lambda p, c: {}), LanguageModel)


async def test_callback_answers_by_prompt_name_and_context():
    def answer(prompt, ctx):
        assert prompt.name == "extract"
        return Entities(entities=[Entity(name=ctx.text.split()[0], kind="person")])

    model = FunctionModel(answer)
    ctx = Ctx(text="Alice went home")
    completion = await model.complete(EXTRACT, ctx)
    assert completion.output == Entities(entities=[Entity(name="Alice", kind="person")])
    assert model.calls == [("extract", ctx)]


async def test_usage_is_estimated_from_rendered_messages_and_answer_json():
    model = FunctionModel(lambda p, c: {"entities": [{"name": "Bob", "kind": "person"}]}, model_name="fn")
    ctx = Ctx(text="Bob is here today")
    completion = await model.complete(EXTRACT, ctx)
    usage = completion.usage
    expected_in = estimate_tokens("Extract entities.") + estimate_tokens("Bob is here today")
    assert (usage.calls, usage.input_tokens, usage.model) == (1, expected_in, "fn")
    assert usage.output_tokens == estimate_tokens('{"entities": [{"name": "Bob", "kind": "person"}]}')
    assert usage.by_prompt == {"extract": 1}
    assert model.usage.calls == 1


async def test_async_callback_and_text_with_fences_and_prose_are_accepted():
    async def answer(prompt, ctx):
        return 'Sure! Here it is:\n```json\n{"entities": [{"name": "Paris", "kind": "place"}]}\n```'

    completion = await FunctionModel(answer).complete(EXTRACT, Ctx(text="x"))
    assert completion.output.entities[0].name == "Paris"


async def test_invalid_answer_gets_one_corrective_retry_that_can_fix_it():
    seen: list[list[Message]] = []

    def answer(prompt, ctx):
        messages = prompt.messages(ctx)
        seen.append(messages)
        if len(seen) == 1:
            return {"entities": [{"name": "Bob", "kind": "robot"}]}
        return {"entities": [{"name": "Bob", "kind": "person"}]}

    model = FunctionModel(answer)
    completion = await model.complete(EXTRACT, Ctx(text="Bob"))
    assert completion.output.entities[0].kind == "person"
    assert len(model.calls) == 2 and completion.usage.calls == 2 and completion.usage.retries == 1
    correction = seen[1][-1]
    assert correction.role == "user" and "entities.0.kind" in correction.content
    assert seen[1][-2].role == "assistant" and "robot" in seen[1][-2].content


async def test_answer_still_invalid_after_correction_raises_model_output_error():
    model = FunctionModel(lambda p, c: "no json here")
    with pytest.raises(ModelOutputError, match="extract"):
        await model.complete(EXTRACT, Ctx(text="x"))
    assert len(model.calls) == 2


async def test_answer_longer_than_the_prompt_limit_is_truncated_not_parsed():
    tiny = Prompt(name="tiny", answer=Entities, build=_build, max_output_tokens=5)
    model = FunctionModel(lambda p, c: {"entities": [{"name": "Bartholomew", "kind": "person"}]})
    with pytest.raises(ModelTruncatedError, match=r"tiny.*max_output_tokens=5"):
        await model.complete(tiny, Ctx(text="x"))
    assert len(model.calls) == 1


async def test_a_list_of_standalone_items_cut_off_keeps_its_complete_items():
    # a model repeating itself until the limit: what it wrote first is kept, the cut item is not
    listing = Prompt(name="listing", answer=Entities, build=_build, max_output_tokens=40, keeps_complete_items=True)
    runaway = {"entities": [{"name": f"Person {i}", "kind": "person"} for i in range(30)]}
    completion = await FunctionModel(lambda p, c: runaway).complete(listing, Ctx(text="x"))
    kept = completion.output.entities
    assert 0 < len(kept) < 30 and kept == runaway_prefix(runaway, len(kept))
    assert completion.usage.answers_cut_off == 1 and completion.usage.calls == 1


def runaway_prefix(answer: dict, count: int) -> list[Entity]:
    return [Entity(**item) for item in answer["entities"][:count]]


async def test_a_list_cut_off_before_its_first_item_was_complete_is_still_a_truncation():
    listing = Prompt(name="listing", answer=Entities, build=_build, max_output_tokens=5, keeps_complete_items=True)
    model = FunctionModel(lambda p, c: {"entities": [{"name": "Bartholomew", "kind": "person"}]})
    with pytest.raises(ModelTruncatedError, match="listing"):
        await model.complete(listing, Ctx(text="x"))


async def test_latency_is_simulated_and_measured():
    model = FunctionModel(lambda p, c: {"entities": []}, latency_s=0.05)
    completion = await model.complete(EXTRACT, Ctx(text="x"))
    assert completion.usage.latency_s >= 0.05


async def test_usage_scope_aggregates_calls_made_in_concurrent_tasks():
    model = FunctionModel(lambda p, c: {"entities": []})
    with usage_scope() as outer:
        with usage_scope() as inner:
            await asyncio.gather(*(model.complete(EXTRACT, Ctx(text="abcd")) for _ in range(3)))
        await model.complete(EXTRACT, Ctx(text="abcd"))
    assert inner.calls == 3 and outer.calls == 4
    assert outer.by_prompt == {"extract": 4}


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Nested(BaseModel):
    label: Annotated[str, Field(min_length=2)]
    score: float = Field(gt=0.5)


class Everything(BaseModel):
    title: str
    count: int = Field(ge=3)
    when: dt.datetime
    colour: Colour
    mode: Literal["a", "b"]
    maybe: str | None
    nested: Nested
    items: list[Nested] = Field(min_length=1)
    pair: tuple[int, str]
    mapping: dict[str, int]
    defaulted: int = 42


async def test_schema_model_answers_any_prompt_with_valid_minimal_data():
    prompt = Prompt(name="any", answer=Everything, build=lambda c: [Message("user", "hi")])
    completion = await SchemaModel().complete(prompt, None)
    out = completion.output
    assert out.count == 3 and out.colour is Colour.RED and out.mode == "a" and out.maybe is None
    assert len(out.nested.label) == 2 and out.nested.score > 0.5
    assert len(out.items) == 1 and out.defaulted == 42


def test_forbid_switch_blocks_real_requests_and_allow_reopens_it():
    with allow_model_requests():  # whatever the suite's default (the lead may forbid globally)
        ensure_model_requests_allowed("x")
        with forbid_model_requests():
            with pytest.raises(ModelCallForbiddenError, match=r"api\.example"):
                ensure_model_requests_allowed("api.example")
            with allow_model_requests():
                ensure_model_requests_allowed("loopback")
            with pytest.raises(ModelCallForbiddenError):
                ensure_model_requests_allowed("api.example")
        ensure_model_requests_allowed("x")


def test_no_model_requests_fixture_is_importable_from_testing():
    assert callable(no_model_requests)


@pytest.mark.usefixtures("no_model_requests")
def test_fixture_forbids_requests():
    with pytest.raises(ModelCallForbiddenError):
        ensure_model_requests_allowed("api.example")


async def test_scripted_model_answers_in_order_per_prompt_name_and_a_bad_answer_uses_the_correction():
    model = ScriptedModel({"extract": [{"entities": [{"name": "A", "kind": "nope"}]}, {"entities": []}, "{}", "{}"]})
    first = await model.complete(EXTRACT, Ctx(text="x"))
    assert first.output == Entities(entities=[]) and model.unused == {"extract": 2}
    with pytest.raises(ModelOutputError):
        await model.complete(EXTRACT, Ctx(text="x"))  # invalid twice: the correction did not fix it
    assert model.unused == {}
    with pytest.raises(InvalidInputError, match="extract"):
        await model.complete(EXTRACT, Ctx(text="x"))  # the script ran out: a test bug, said plainly
