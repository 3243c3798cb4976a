"""A small typed prompt shared by the adapter tests."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from chronomem.llm.base import Message, Prompt

__all__ = ["PERSON", "Person", "Question"]


class Person(BaseModel):
    name: str
    role: Literal["speaker", "mentioned"]


class Question(BaseModel):
    text: str


def _build(question: Question) -> list[Message]:
    return [
        Message("system", "You extract the person named in the text."),
        Message("user", question.text),
    ]


PERSON = Prompt(name="extract_person", answer=Person, build=_build, max_output_tokens=64)
