"""Export and import of a whole group round-trip exactly, vectors included."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chronomem.archive import GroupExport
from chronomem.communities.prompts import CommunityDescriptions
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import ConflictError
from chronomem.ingest.prompts import ExtractedEntities, ExtractedEntity
from chronomem.llm.testing import FunctionModel
from chronomem.memory import Chronomem
from chronomem.store.factory import open_store


def speakers_only(prompt, context):
    """A scripted model: every message's speaker is an entity; nothing else is extracted."""
    if prompt.answer is ExtractedEntities:
        speaker = context.episode.current.split(":", 1)[0]
        return ExtractedEntities(entities=[ExtractedEntity(name=speaker)])
    if prompt.answer is CommunityDescriptions:
        return CommunityDescriptions(communities=[])  # summaries fall back to member names
    return prompt.answer()


@pytest.fixture
async def memory(tmp_path):
    store = await open_store(f"sqlite:///{tmp_path / 'graph.db'}")
    async with Chronomem(store=store, embedder=HashingEmbedder(), llm=FunctionModel(speakers_only)) as opened:
        yield opened


async def fill(memory: Chronomem, group: str) -> None:
    await memory.add_episode(group, "I started at Acme today.", speaker="Alice",
                             reference_time=datetime(2024, 3, 1, tzinfo=UTC))
    await memory.add_episode(group, "Congrats! I am still at Initech.", speaker="Bob",
                             reference_time=datetime(2024, 3, 1, 0, 5, tzinfo=UTC))
    await memory.add_episode(group, '{"team": "platform"}', kind="json", metadata={"source": "hr"})
    await memory.add_fact(group, "Alice", "WORKS_AT", "Acme", "Alice works at Acme",
                          valid_at=datetime(2024, 3, 1, tzinfo=UTC))
    await memory.add_fact(group, "Bob", "WORKS_AT", "Initech", "Bob works at Initech",
                          valid_at=datetime(2020, 1, 1, tzinfo=UTC), invalid_at=datetime(2024, 6, 1, tzinfo=UTC))
    await memory.build_communities(group)


def regrouped(export: GroupExport, group_id: str) -> dict:
    data = export.model_dump(mode="json")
    data["group_id"] = group_id
    for key in ("episodes", "entities", "facts", "mentions", "communities"):
        for item in data[key]:
            item["group_id"] = group_id
    return data


async def test_export_import_export_is_identical(memory):
    await fill(memory, "source")
    exported = await memory.export_group("source")
    assert exported.episodes and exported.entities and exported.facts and exported.mentions
    assert exported.communities and all(exported.vectors[scope] for scope in exported.vectors)
    stats = await memory.import_group(GroupExport.model_validate_json(exported.model_dump_json()), group_id="copy")
    assert (stats.episodes, stats.facts) == (3, 2)
    again = await memory.export_group("copy")
    assert regrouped(again, "source") == exported.model_dump(mode="json")


async def test_the_copy_answers_searches_like_the_original(memory):
    await fill(memory, "source")
    await memory.import_group(await memory.export_group("source"), group_id="copy")
    for group in ("source", "copy"):
        results = await memory.search([group], "where does Alice work")
        assert results.facts[0][0].fact == "Alice works at Acme"
    original = await memory.search(["source"], "Acme")
    copied = await memory.search(["copy"], "Acme")
    assert [s for _, s in original.facts] == pytest.approx([s for _, s in copied.facts])


async def test_import_refuses_a_non_empty_group_and_changes_nothing(memory):
    await fill(memory, "source")
    await fill(memory, "busy")
    before = await memory.export_group("busy")
    with pytest.raises(ConflictError, match="not empty"):
        await memory.import_group(await memory.export_group("source"), group_id="busy")
    assert (await memory.export_group("busy")) == before


async def test_vectors_of_another_embedder_need_reembed(memory, tmp_path):
    await fill(memory, "source")
    exported = await memory.export_group("source")
    store = await open_store(f"sqlite:///{tmp_path / 'other.db'}")
    async with Chronomem(store=store, embedder=HashingEmbedder(dimension=64)) as other:
        with pytest.raises(ConflictError, match="reembed"):
            await other.import_group(exported)
        await other.import_group(exported, reembed=True)
        copied = await other.export_group("source")
        assert copied.dimension == 64 and copied.facts == exported.facts
        results = await other.search(["source"], "where does Alice work")
        assert results.facts[0][0].fact == "Alice works at Acme"
