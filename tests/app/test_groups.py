"""The group operations every shell shares: a write queues in order, records what the caller keeps
beside it first, and a refused write changes nothing."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from chronomem.app.groups import GroupOperations, decode_cursor, encode_cursor, merge_metadata
from chronomem.config.settings import Settings
from chronomem.domain import Episode
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import ConflictError, InvalidInputError, NotFoundError
from chronomem.memory import Chronomem


@pytest.fixture
async def memory(tmp_path):
    async with await Chronomem.open(Settings(data_dir=tmp_path), embedder=HashingEmbedder()) as opened:
        yield opened


async def test_queue_records_first_then_stores_in_order_and_wakes_the_workers(memory):
    woken: list[int] = []
    recorded: list[list[str]] = []
    groups = GroupOperations(memory, notify=lambda: woken.append(1))

    def record(episodes: Sequence[Episode]) -> None:
        recorded.append([e.id for e in episodes])

    episodes = [Chronomem.new_episode("g", text, episode_id=f"e-{n}") for n, text in enumerate(("a", "b", "c"))]
    stored, _ = await groups.queue(episodes, record=record)
    assert [e.id for e in stored] == recorded[0] == ["e-0", "e-1", "e-2"]
    assert woken == [1]
    assert [e.id for e in await groups.list_episodes("g", limit=10)] == ["e-2", "e-1", "e-0"]  # newest first


async def test_a_refused_write_records_nothing_and_stores_nothing(memory):
    groups = GroupOperations(memory)
    recorded: list[object] = []
    twice = [Chronomem.new_episode("g", "a", episode_id="same"), Chronomem.new_episode("g", "b", episode_id="same")]
    with pytest.raises(InvalidInputError, match="same id"):
        await groups.queue(twice, record=recorded.append)
    await groups.queue([Chronomem.new_episode("g", "a", episode_id="kept")], record=lambda _: None)
    with pytest.raises(ConflictError):  # the id is taken by other content
        await groups.queue([Chronomem.new_episode("g", "other", episode_id="kept")], record=recorded.append)
    assert recorded == []
    assert [e.content for e in await groups.list_episodes("g", limit=10)] == ["a"]


def test_cursors_round_trip_and_foreign_ones_are_refused():
    assert decode_cursor(encode_cursor(40)) == 40 and decode_cursor(None) == 0
    for foreign in ("nope", encode_cursor(1).replace("o", "x", 1) + "!!"):
        with pytest.raises(InvalidInputError, match="not one this server issued"):
            decode_cursor(foreign)


def test_metadata_merges_removes_on_null_and_keeps_other_keys():
    stored = {"a": 1, "b": "x", "c": [1, "y", True]}
    assert merge_metadata(stored, {"b": None, "d": 2.5, "e": False}) == {"a": 1, "c": [1, "y", True], "d": 2.5,
                                                                         "e": False}
    assert merge_metadata(stored, {"gone": None}) == stored
    assert stored == {"a": 1, "b": "x", "c": [1, "y", True]}  # not changed in place


@pytest.mark.parametrize(("changes", "message"), [
    ({"nested": {"k": "v"}}, "'nested'"),
    ({"deep": [["a"]]}, "'deep'"),
    ({"deep": [{"k": 1}]}, "'deep'"),
    ({"nan": float("nan")}, "'nan'"),
    ({f"k{n}": n for n in range(8)}, "at most 10 keys after the merge, this one would hold 11"),
])
def test_metadata_that_breaks_the_rules_is_refused(changes, message):
    with pytest.raises(InvalidInputError, match=message):
        merge_metadata({"a": 1, "b": 2, "c": 3}, changes)


async def test_an_episodes_metadata_update_changes_nothing_on_bad_input(memory):
    groups = GroupOperations(memory)
    [episode], _ = await groups.queue([Chronomem.new_episode("g", "Ann moved to Lyon", metadata={"a": 1})],
                                      record=lambda _: None)
    updated = await groups.update_episode_metadata("g", episode.id, {"a": None, "b": ["x", 2]})
    assert updated.metadata == {"b": ["x", 2]} and updated.content == "Ann moved to Lyon"
    with pytest.raises(InvalidInputError):
        await groups.update_episode_metadata("g", episode.id, {"c": 1, "d": {"nested": True}})
    with pytest.raises(NotFoundError):
        await groups.update_episode_metadata("other", episode.id, {"c": 1})
    assert (await groups.get_episode("g", episode.id)).metadata == {"b": ["x", 2]}
