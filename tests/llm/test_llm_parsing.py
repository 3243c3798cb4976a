"""Tolerant JSON extraction and validation of model answers."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from chronomem.errors import ModelOutputError
from chronomem.llm.parsing import InvalidAnswerError, extract_json, parse_answer
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
