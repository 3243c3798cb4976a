"""An entity added by hand (Zep's node.add) has the provenance of every hand edit, is searchable,
and an equal name finds the entity the group has instead of a second one."""

from __future__ import annotations

import json

import pytest

from chronomem.app.groups import GroupOperations
from chronomem.config.settings import Settings
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import InvalidInputError
from chronomem.memory import Chronomem


@pytest.fixture
async def memory(tmp_path):
    async with await Chronomem.open(Settings(data_dir=tmp_path), embedder=HashingEmbedder()) as opened:
        yield opened


async def test_a_hand_added_entity_is_recorded_as_an_edit_and_found(memory):
    groups = GroupOperations(memory, source="project acme")
    entity, new = await groups.add_entity("g", "Acme Corp", summary="A maker of anvils.", labels=["Company"],
                                          attributes={"founded": 1949})
    assert new and (entity.labels, entity.summary_source) == (("Company",), "edit")
    [episode_id] = (await memory.store.episodes_of_entities("g", [entity.id]))[entity.id]
    edit = json.loads((await memory.get_episode("g", episode_id)).content)
    assert (edit["edit"], edit["source"], edit["changes"]["name"]) == ("entity", "project acme",
                                                                       {"from": None, "to": "Acme Corp"})
    found = await memory.search(["g"], "Acme anvils")
    assert entity.id in {e.id for e, _ in found.entities}


async def test_an_equal_name_finds_the_entity_the_group_has(memory):
    groups = GroupOperations(memory)
    first, _ = await groups.add_entity("g", "Acme Corp")
    again, new = await groups.add_entity("g", "  acme corp ")
    assert (again.id, new) == (first.id, False)
    assert len(await memory.list_entities("g")) == 1
    with pytest.raises(InvalidInputError):
        await groups.add_entity("g", "   ")
