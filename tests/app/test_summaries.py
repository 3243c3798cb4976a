"""User and thread summaries: written by the model incrementally (one call for what is new, none
when nothing is), steered by summary instructions, and the graph's own words without a model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from chronomem.app.summaries import WrittenSummary
from chronomem.app.tenancy import SUMMARY_INSTRUCTION, SUMMARY_REFRESH_LINES, GraphRef, ProjectSpace
from chronomem.controlplane import ControlPlane
from chronomem.controlplane.sqlite import SQLiteControlPlane
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import ModelUnavailableError
from chronomem.llm.testing import FunctionModel
from chronomem.memory import Chronomem, NewMessage
from chronomem.store.factory import open_store


@dataclass
class Setup:
    space: ProjectSpace
    control: ControlPlane
    seen: list[tuple[str, tuple[str, ...], tuple[str, ...], str]]  # prompt, new lines, instructions, previous
    failing: list[bool]


@pytest.fixture
async def setup(tmp_path) -> AsyncIterator[Setup]:
    seen: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = []
    failing = [False]

    def answer(prompt, context):
        if prompt.name not in ("user_summary", "thread_summary"):
            return prompt.answer()  # ingestion extracts nothing here: facts come as triples
        if failing[0]:
            raise ModelUnavailableError("provider unreachable (scripted)")
        seen.append((prompt.name, context.new_lines, context.instructions, context.previous))
        return WrittenSummary(summary=f"{context.previous} +{len(context.new_lines)}".strip())

    store = await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    memory = Chronomem(store=store, embedder=HashingEmbedder(), llm=FunctionModel(answer))
    control = SQLiteControlPlane.open(":memory:")
    project = control.ensure_project("p")
    yield Setup(ProjectSpace(project, control, memory), control, seen, failing)
    control.close()
    await memory.close()


async def add_fact(space: ProjectSpace, target: str, text: str) -> None:
    await space.add_fact(GraphRef(user_id="ada"), "Ada", "LIKES", target, text)


async def test_the_user_summary_folds_in_only_what_is_new_in_one_call(setup: Setup):
    space = setup.space
    space.create_user("ada", first_name="Ada")
    await add_fact(space, "maps", "Ada likes maps")
    await add_fact(space, "tea", "Ada likes tea")
    assert await space.user_summary("ada") == "+2"
    assert [(name, len(lines)) for name, lines, _, _ in setup.seen] == [("user_summary", 2)]

    assert await space.user_summary("ada") == "+2"  # nothing new: no call
    assert len(setup.seen) == 1

    for n in range(SUMMARY_REFRESH_LINES - 1):  # fewer new facts than a refresh is worth: no call
        await add_fact(space, f"topic {n}", f"Ada likes topic {n}")
    assert await space.user_summary("ada") == "+2" and len(setup.seen) == 1
    await add_fact(space, "jazz", "Ada likes jazz")
    assert await space.user_summary("ada") == f"+2 +{SUMMARY_REFRESH_LINES}"
    _, lines, _, previous = setup.seen[-1]
    assert previous == "+2" and len(lines) == SUMMARY_REFRESH_LINES and "Ada likes jazz" in lines[-1]


async def test_summary_instructions_of_the_project_and_the_user_steer_the_call(setup: Setup):
    space = setup.space
    user = space.create_user("ada", first_name="Ada")
    setup.control.put_document(space.project.id, SUMMARY_INSTRUCTION, "", "tone", "Keep the user's tone.")
    setup.control.put_document(space.project.id, SUMMARY_INSTRUCTION, user.group_id, "diet", "Note diets.")
    await add_fact(space, "tea", "Ada likes tea")
    await space.user_summary("ada")
    assert setup.seen[-1][2] == ("Keep the user's tone.", "Note diets.")


async def test_a_failing_model_keeps_the_last_summary_and_retries_later(setup: Setup):
    space = setup.space
    space.create_user("ada", first_name="Ada")
    await add_fact(space, "tea", "Ada likes tea")
    setup.failing[0] = True
    fallback = await space.user_summary("ada")
    assert fallback.startswith("[no model summary; facts the graph holds about user ada]")
    setup.failing[0] = False
    assert await space.user_summary("ada") == "+1"  # the fact was not marked as folded in


async def test_the_thread_summary_grows_with_its_messages(setup: Setup):
    space = setup.space
    space.create_user("ada", first_name="Ada")
    space.create_thread("t1", "ada")
    await space.add_messages("t1", [NewMessage("I moved to Lisbon.", name="Ada"), NewMessage("Nice!", "assistant")])
    assert await space.thread_summary("t1") == "+2"
    assert setup.seen[-1][0] == "thread_summary" and setup.seen[-1][1][0].endswith("Ada: I moved to Lisbon.")
    later = [NewMessage(f"Message {n}.", name="Ada") for n in range(SUMMARY_REFRESH_LINES)]
    await space.add_messages("t1", later[:-1])
    assert await space.thread_summary("t1") == "+2" and len(setup.seen) == 1
    await space.add_messages("t1", later[-1:])
    assert await space.thread_summary("t1") == f"+2 +{SUMMARY_REFRESH_LINES}"
    assert len(setup.seen) == 2
