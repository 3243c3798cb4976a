"""The library facade end to end: episodes in, a graph with communities out, at a bounded model cost."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from chronomem import Chronomem, Settings
from chronomem.embed.testing import HashingEmbedder
from chronomem.heuristic import heuristic_model

LINES = [
    ("Caroline", "I went to the LGBTQ support group in Boston with Melanie yesterday."),
    ("Melanie", "Melanie painted a sunrise over Lake Tahoe for the Art Fair in Denver."),
    ("Caroline", "Caroline is studying Counseling at Boston University with Professor Adams."),
    ("Melanie", "My kids Sam and Nora love camping at Yosemite with our dog Luna."),
    ("Caroline", "The Pride Parade in Boston was amazing, Jordan and Taylor came along."),
    ("Melanie", "Melanie signed up for a Pottery Class at the Denver Art Center."),
    ("Caroline", "Caroline adopted a cat called Oscar from the Boston Animal Shelter."),
    ("Melanie", "Sam and Nora started Swimming Lessons at the Denver Aquatic Club."),
    ("Caroline", "Professor Adams recommended the Mental Health Conference in Chicago."),
    ("Melanie", "Luna chased a squirrel around Yosemite while Nora took photos."),
    ("Caroline", "Caroline met Dr. Rivera and Coach Miller at the Harvard Book Club."),
    ("Melanie", "Melanie and Grandma Rose baked Apple Pie for the Maple Street Festival."),
    ("Caroline", "Caroline volunteers at the Trevor Project with Alex Kim on Fridays."),
]


async def test_episodes_build_a_graph_whose_communities_cost_no_extra_call_per_episode(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, embedder="hashing")
    start = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
    model = heuristic_model()
    async with await Chronomem.open(settings, embedder=HashingEmbedder(), llm=model) as memory:
        results = [
            await memory.add_episode("friends", text, speaker=speaker, reference_time=start + timedelta(hours=i))
            for i, (speaker, text) in enumerate(LINES * 3)
        ]
        stats = await memory.stats("friends")
        communities = await memory.store.list_communities("friends")
        block = await memory.context("friends", "Where does Melanie paint?")

    assert all(r.episode.status.value == "done" for r in results)
    assert max(r.usage.calls for r in results) <= 5
    ingestion_calls = sum(r.usage.calls for r in results)
    community_calls = len(model.calls) - ingestion_calls
    assert 0 <= community_calls < len(results) / 2, "communities must not cost a call per episode"
    assert stats.entities >= 30 and stats.facts > 0
    assert communities, "drift past the threshold in a group of 30+ entities rebuilds its communities"
    assert all(c.member_ids and c.name for c in communities)
    assert "Melanie" in block
