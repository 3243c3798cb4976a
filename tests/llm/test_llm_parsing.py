"""Tolerant JSON extraction and validation of model answers."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from chronomem.errors import ModelOutputError
from chronomem.llm.base import Message, Prompt
from chronomem.llm.budget import limit_schema, text_bound
from chronomem.llm.parsing import (
    InvalidAnswerError,
    complete_items,
    extract_json,
    parse_answer,
    parse_within_bounds,
)
from chronomem.llm.testing import FunctionModel
from chronomem.providers.http import parse_retry_after


class Names(BaseModel):
    names: list[str]


@pytest.mark.parametrize(
    "text",
    [
        '{"names": ["a"]}',
        '  \n{"names": ["a"]}\n',
        '```json\n{"names": ["a"]}\n```',
        '```\n{"names": ["a"]}\n```',
        'Here is the JSON you asked for: {"names": ["a"]} Hope it helps {really}.',
        '<think>maybe {"names": ["wrong"]}?</think>{"names": ["a"]}',
        'reasoning without an opening tag</think>\n{"names": ["a"]}',
        '<thinking>hmm</thinking>\n```json\n{"names": ["a"]}\n```',
        'Intro {not json} then {"names": ["a"]}',
    ],
)
def test_extract_json_tolerates_wrapping(text):
    assert extract_json(text) == {"names": ["a"]}


def test_extract_json_raises_when_nothing_decodes():
    with pytest.raises(ValueError):
        extract_json("I cannot help with that.")


def test_bare_list_is_accepted_for_a_single_field_model():
    assert parse_answer('["a", "b"]', Names) == Names(names=["a", "b"])


def test_validation_problem_names_the_field_and_keeps_the_raw_text():
    with pytest.raises(InvalidAnswerError) as info:
        parse_answer('{"names": "a"}', Names)
    error = info.value
    assert isinstance(error, ModelOutputError)
    assert "names" in error.problem and error.raw_text == '{"names": "a"}'


def test_unparseable_answer_says_so():
    with pytest.raises(InvalidAnswerError, match="not valid JSON"):
        parse_answer("no", Names)


def test_retry_after_forms():
    import httpx

    assert parse_retry_after(httpx.Headers({"retry-after": "7"})) == 7.0
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "250", "retry-after": "7"})) == 0.25
    assert parse_retry_after(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers({})) is None


# -- bounds of the schema an answer was sent ---------------------------------------------------------


class Listing(BaseModel):
    items: list[str] = Field(default_factory=list, json_schema_extra={"maxItems": 10})
    note: Annotated[str, text_bound(12)] = ""


def _listing(limit: int) -> Prompt[int, Listing]:
    return Prompt(name="listing", answer=Listing, build=lambda n: [Message("user", f"list {n}")],
                  max_output_tokens=500, limits=lambda n: {"Listing.items": n})


def test_surplus_items_are_dropped_first_ones_kept_and_counted():
    answer, dropped = parse_within_bounds('{"items": ["a", "b", "c", "d"]}', Listing, limit_schema(
        Listing.model_json_schema(), {"Listing.items": 2}))
    assert answer.items == ["a", "b"] and dropped == 2


async def test_a_model_answer_past_its_context_limit_is_trimmed_and_the_usage_says_so():
    model = FunctionModel(lambda prompt, n: {"items": [str(i) for i in range(7)]})
    completion = await model.complete(_listing(3), 3)
    assert completion.output.items == ["0", "1", "2"]
    assert completion.usage.items_dropped == 4 and completion.usage.retries == 0


async def test_a_string_past_its_bound_is_refused_and_corrected_once():
    answers = iter([{"note": "x" * 13}, {"note": "short"}])
    model = FunctionModel(lambda prompt, n: next(answers))
    completion = await model.complete(_listing(3), 3)
    assert completion.output.note == "short" and completion.usage.retries == 1
    with pytest.raises(InvalidAnswerError, match="longer than the Listing schema allows"):
        parse_answer('{"note": "' + "y" * 13 + '"}', Listing)


def test_code_that_builds_the_model_itself_is_not_bound():
    assert len(Listing(items=["a"] * 30, note="z" * 99).items) == 30


@pytest.mark.parametrize(
    ("cut", "kept"),
    [
        # the fact being written when the cut came may lack a field it was about to get: left out
        ('{"facts": [{"fact": "A", "valid_at": null}, {"fact": "B", "valid_at": "2024-0',
         {"facts": [{"fact": "A", "valid_at": None}]}),
        ('```json\n{"facts": [{"fact": "A"}, {"fa', {"facts": [{"fact": "A"}]}),
        ('Here it is: [{"fact": "A"}, {"fact": "B"}, {"fact": "C"', [{"fact": "A"}, {"fact": "B"}]),
        # a cut after the list: the list is whole, the half-written key is what is left out
        ('{"facts": [{"fact": "A"}], "same_as": [', {"facts": [{"fact": "A"}], "same_as": []}),
        ('{"facts": [{"fact": "A"}], "note": "unfin', {"facts": [{"fact": "A"}]}),
    ],
)
def test_an_answer_cut_off_keeps_its_complete_items(cut, kept):
    assert complete_items(cut) == kept


def test_an_answer_cut_off_before_any_json_has_nothing_to_keep():
    with pytest.raises(ValueError, match="no JSON"):
        complete_items("Sure, the facts are")
