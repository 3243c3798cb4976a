"""The library facade as a user calls it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chronomem.config.settings import Settings
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import InvalidInputError, NotFoundError
from chronomem.memory import Chronomem


@pytest.fixture
async def memory(tmp_path):
    async with await Chronomem.open(Settings(data_dir=tmp_path), embedder=HashingEmbedder()) as opened:
        yield opened


async def test_one_group_may_be_named_by_a_plain_string(memory):
    await memory.add_fact("alice", "Alice", "works at", "Acme", "Alice works at Acme")
    assert "Alice works at Acme" in await memory.context("alice", "Where does Alice work?")
    assert [f.fact for f, _ in (await memory.search("alice", "Acme")).facts] == ["Alice works at Acme"]


async def test_open_puts_the_embedded_store_under_the_data_dir(tmp_path, memory):
    await memory.add_episode("g", "hello", kind="text")
    assert (tmp_path / "chronomem.db").exists()
    assert await memory.list_groups() == ["g"]


async def test_episode_fields_are_checked(memory):
    with pytest.raises(InvalidInputError):
        await memory.add_episode("g", "x", reference_time=datetime(2024, 1, 1))  # naive
    with pytest.raises(InvalidInputError, match="video"):
        await memory.add_episode("g", "x", kind="video")
    added = await memory.add_episode("g", "hi", speaker="Ann", reference_time=datetime(2024, 1, 1, tzinfo=UTC),
                                     episode_id="e-1")
    assert (added.episode.id, added.episode.speaker, added.episode.text) == ("e-1", "Ann", "Ann: hi")


async def test_getting_or_deleting_what_is_not_there_says_so(memory):
    for call in (memory.get_episode("g", "nope"), memory.get_fact("g", "nope"), memory.delete_entity("g", "nope"),
                 memory.remove_episode("g", "nope")):
        with pytest.raises(NotFoundError, match="nope"):
            await call
