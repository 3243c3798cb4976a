"""The store contract: every backend in STORE_BACKENDS must pass these unchanged.

Only the Store protocol is used here (no SQL, no backend internals). Full-text assertions are about
which document ranks first, never about exact scores.
"""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from chronomem.domain import Community, Entity, Episode, EpisodeKind, EpisodeStatus, EvidenceSpan, Fact, Mention
from chronomem.embed.testing import HashingEmbedder
from chronomem.errors import InvalidInputError, NotFoundError
from chronomem.filters import SearchFilters, TimeRange, fact_matches
from chronomem.store import GraphWrite, Scope, Store
from chronomem.store.base import (
    BulkLoader,
    EpisodeQueue,
    EpisodeReader,
    GraphReader,
    GraphWriter,
    GroupAdmin,
    QueueDepth,
    SearchIndex,
)

G = "group-a"
OTHER = "group-b"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
EMBED = HashingEmbedder(64)

HOSTILE_GROUP_IDS = [
    "2f1c3a9e-5b7d-4c1e-9a0b-3d2e1f4a5b6c",
    "with-hyphens-and--double",
    "it's",
    'say "hi"',
    "back\\slash\\",
    "unicodé 日本語 🙂",
    "with spaces ",
    "NEAR(a b) OR * - ^ : ( )",
    "'; DROP TABLE facts; --",
]

HOSTILE_QUERIES = [
    '"',
    '""',
    '"unterminated',
    "*",
    "a*",
    "-",
    "-coffee",
    "OR",
    "AND",
    "NOT",
    "NEAR",
    "NEAR(coffee tea)",
    "(",
    ")",
    "(coffee",
    ":",
    "fact:coffee",
    "^",
    "^coffee",
    "coffee OR",
    "OR coffee AND",
    "",
    "   ",
    "\t\n",
    "🙂",
    "日本語",
    "café",
    "'",
    "\\",
    "{col}",
    "coffee -tea +milk",
    "a NEAR/2 b",
    "\x00",
    "%_",
]


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def vec(text: str) -> np.ndarray:
    return EMBED.embed_one(text)


def person(name: str, group: str = G, **kw: object) -> Entity:
    return Entity(group_id=group, name=name, **kw)


def fact(source: Entity, target: Entity, text: str, **kw: object) -> Fact:
    return Fact(group_id=source.group_id, source_id=source.id, target_id=target.id, fact=text, **kw)


async def write_facts(store: Store, group: str, entities: list[Entity], facts: list[Fact]) -> None:
    await store.write(
        GraphWrite(
            group_id=group,
            entities=entities,
            facts=facts,
            entity_vectors={e.id: vec(e.name) for e in entities},
            fact_vectors={f.id: vec(f.fact) for f in facts},
        )
    )


# -- lifecycle and round trips ---------------------------------------------------------------------


async def test_the_backend_plays_every_role_of_the_port(store: Store) -> None:
    for role in (GroupAdmin, EpisodeReader, EpisodeQueue, GraphReader, GraphWriter, BulkLoader, SearchIndex, Store):
        assert isinstance(store, role), role.__name__


async def test_a_bulk_load_leaves_the_group_as_plain_writes_would(store: Store) -> None:
    """Writes in a bulk load are read back at once; once the block is over, every search finds what
    it wrote exactly as in a group written without one."""
    people = [person(f"Person {i}", group=group) for group in (G, OTHER) for i in range(6)]
    facts = [fact(a, b, f"{a.name} works with {b.name} on project {i}")
             for i, (a, b) in enumerate(zip(people, people[1:] + people[:1], strict=True)) if a.group_id == b.group_id]
    async with store.bulk_load(G):
        for at in range(0, 6, 2):  # several writes, as a large import makes them
            mine = [e for e in people if e.group_id == G][at : at + 2]
            await write_facts(store, G, mine, [])
        await write_facts(store, G, [], [f for f in facts if f.group_id == G])
        assert len(await store.list_facts(G)) == 5  # readable inside the block
    theirs = [e for e in people if e.group_id == OTHER]
    await write_facts(store, OTHER, theirs, [f for f in facts if f.group_id == OTHER])
    for group in (G, OTHER):
        query = vec(f"Person 2 works with Person 3 on project {2 if group == G else 8}")
        hits = await store.vector_search(group, Scope.FACTS, query, limit=3)
        words = await store.fulltext_search(group, Scope.FACTS, "Person 2 Person 3", limit=3)
        near = await store.vector_search(group, Scope.ENTITIES, vec("Person 4"), limit=1)
        by_id = {f.id: f for f in facts}
        assert by_id[hits[0].id].fact.startswith("Person 2 works with Person 3"), group
        assert by_id[words[0].id].fact.startswith("Person 2 works with Person 3"), group
        assert [e.name for e in await store.get_entities(group, [near[0].id])] == ["Person 4"]


async def test_a_new_store_is_empty(store: Store) -> None:
    assert await store.list_groups() == []
    stats = await store.stats(G)
    assert (stats.episodes, stats.entities, stats.facts, stats.current_facts, stats.communities) == (0, 0, 0, 0, 0)
    assert await store.fulltext_search(G, Scope.FACTS, "anything") == []
    assert await store.vector_search(G, Scope.FACTS, vec("anything")) == []
    assert await store.list_facts(G) == []
    assert await store.pending_groups() == []


async def test_every_object_reads_back_exactly_as_written(store: Store) -> None:
    episode = Episode(
        group_id=G,
        content="I moved to Paris",
        speaker="Ann",
        role="user",
        metadata={"k": [1, "é"]},
        source_description="chat",
        usage={"calls": 2},
    )
    ann, paris = person("Ann", labels=("Person",), aliases=("Annie",), attributes={"age": 31}), person("Paris")
    lives = fact(
        ann,
        paris,
        "Ann lives in Paris",
        relation_type="LIVES_IN",
        episode_ids=(episode.id,),
        attributes={"since": "2024"},
        valid_at=datetime(2024, 3, 1, 12, 0, 0, 123456, tzinfo=UTC),
    )
    community = Community(group_id=G, name="France", summary="people in France", member_ids=(paris.id, ann.id))
    await store.write(
        GraphWrite(
            group_id=G,
            episodes=[episode],
            entities=[ann, paris],
            facts=[lives],
            mentions=[Mention(group_id=G, episode_id=episode.id, entity_id=ann.id)],
            communities=[community],
            fact_vectors={lives.id: vec(lives.fact)},
            entity_vectors={ann.id: vec("Ann")},
            episode_vectors={episode.id: vec(episode.text)},
            community_vectors={community.id: vec("France")},
        )
    )
    assert await store.get_episodes(G, [episode.id]) == [episode]
    assert await store.get_entities(G, [paris.id, ann.id]) == [paris, ann]
    assert await store.get_facts(G, [lives.id]) == [lives]
    assert await store.get_communities(G, [community.id]) == [community]
    vectors = await store.get_vectors(G, Scope.FACTS, [lives.id, "missing"])
    assert set(vectors) == {lives.id}
    np.testing.assert_allclose(vectors[lives.id], vec(lives.fact), atol=1e-6)
    for scope, object_id in ((Scope.ENTITIES, ann.id), (Scope.EPISODES, episode.id), (Scope.COMMUNITIES, community.id)):
        assert set(await store.get_vectors(G, scope, [object_id])) == {object_id}
    assert await store.list_groups() == [G]


async def test_reads_by_id_keep_the_given_order_and_skip_unknown_ids(store: Store) -> None:
    people = [person(n) for n in "abcde"]
    await store.write(GraphWrite(group_id=G, entities=people))
    wanted = [people[3].id, "nope", people[0].id, people[4].id]
    assert [e.id for e in await store.get_entities(G, wanted)] == [people[3].id, people[0].id, people[4].id]
    assert await store.get_facts(G, ["nope"]) == []


async def test_an_empty_write_changes_nothing(store: Store) -> None:
    await store.write(GraphWrite(group_id=G))
    assert await store.list_groups() == []


# -- upserts ---------------------------------------------------------------------------------------


async def test_a_resent_fact_replaces_the_stored_one_everywhere(store: Store) -> None:
    a, b = person("Ann"), person("Bob")
    old = fact(a, b, "Ann likes tennis", valid_at=day(1))
    await write_facts(store, G, [a, b], [old])
    new = old.model_copy(update={"fact": "Ann likes chess", "invalid_at": day(5), "expired_at": day(6)})
    await store.write(GraphWrite(group_id=G, facts=[new], fact_vectors={new.id: vec(new.fact)}))

    (stored,) = await store.get_facts(G, [old.id])
    # a new version of the fact (history is append-only), recorded after the first one
    assert stored == new.model_copy(update={"version": 2, "recorded_at": stored.recorded_at})
    assert stored.recorded_at > old.recorded_at
    assert [v.fact for v in await store.fact_history(G, old.id)] == [old, stored]
    assert await store.fulltext_search(G, Scope.FACTS, "tennis", filters=SearchFilters(include_superseded=True)) == []
    hits = await store.fulltext_search(G, Scope.FACTS, "chess", filters=SearchFilters(include_superseded=True))
    assert [h.id for h in hits] == [new.id]
    assert await store.fulltext_search(G, Scope.FACTS, "chess") == []  # superseded now: not current
    top = await store.vector_search(
        G, Scope.FACTS, vec("Ann likes chess"), filters=SearchFilters(include_superseded=True)
    )
    assert top[0].id == new.id and top[0].score == pytest.approx(1.0, abs=1e-4)
    assert (await store.stats(G)).facts == 1


async def test_a_renamed_entity_is_found_by_its_new_name_only(store: Store) -> None:
    bob = person("Bob Smith", summary="a plumber")
    await store.write(GraphWrite(group_id=G, entities=[bob]))
    renamed = bob.model_copy(update={"name": "Robert Smith", "aliases": ("Bobby",), "summary": "an electrician"})
    await store.write(GraphWrite(group_id=G, entities=[renamed]))
    assert await store.find_entities_by_names(G, ["bob smith"]) == []
    assert await store.find_entities_by_names(G, ["ROBERT  smith!"]) == [renamed]
    assert await store.find_entities_by_names(G, ["bobby"]) == [renamed]
    assert await store.fulltext_search(G, Scope.ENTITIES, "plumber") == []
    assert [h.id for h in await store.fulltext_search(G, Scope.ENTITIES, "electrician")] == [bob.id]


async def test_a_facts_evidence_spans_read_back_beside_its_attributes(store: Store) -> None:
    ann, paris = person("Ann"), person("Paris")
    spans = (EvidenceSpan(episode_id="e1", start=5, end=22), EvidenceSpan(episode_id="e2", start=0, end=9))
    quoted = fact(ann, paris, "Ann lives in Paris", evidence=spans, attributes={"since": "2024"})
    plain = fact(paris, ann, "Paris is home to Ann")
    await write_facts(store, G, [ann, paris], [quoted, plain])
    assert await store.get_facts(G, [quoted.id, plain.id]) == [quoted, plain]
    assert (await store.list_facts(G, limit=10)) and all(
        f.attributes.keys() <= {"since"} for f in await store.list_facts(G, limit=10))


async def test_names_equal_under_the_name_key_find_each_other(store: Store) -> None:
    zurich, usa, beatles, csharp = person("Zürich"), person("U.S.A."), person("The Beatles"), person("C#")
    await store.write(GraphWrite(group_id=G, entities=[zurich, usa, beatles, csharp]))
    assert await store.find_entities_by_names(G, ["Zurich"]) == [zurich]
    assert await store.find_entities_by_names(G, ["USA"]) == [usa]
    assert await store.find_entities_by_names(G, ["beatles"]) == [beatles]
    # the lookup is coarse ("c" finds "C#"); resolution compares the name keys before merging
    assert csharp in await store.find_entities_by_names(G, ["C"])


async def test_a_resent_community_replaces_its_members(store: Store) -> None:
    a, b, c = person("a"), person("b"), person("c")
    club = Community(group_id=G, name="club", member_ids=(a.id, b.id))
    await store.write(GraphWrite(group_id=G, entities=[a, b, c], communities=[club]))
    moved = club.model_copy(update={"member_ids": (c.id, a.id), "summary": "new summary"})
    await store.write(GraphWrite(group_id=G, communities=[moved]))
    assert await store.get_communities(G, [club.id]) == [moved]


async def test_a_resent_vector_replaces_the_old_one(store: Store) -> None:
    a = person("Ann")
    await store.write(GraphWrite(group_id=G, entities=[a], entity_vectors={a.id: vec("apples")}))
    assert (await store.vector_search(G, Scope.ENTITIES, vec("apples")))[0].score == pytest.approx(1.0, abs=1e-4)
    await store.write(GraphWrite(group_id=G, entity_vectors={a.id: vec("oranges")}))
    assert (await store.vector_search(G, Scope.ENTITIES, vec("oranges")))[0].score == pytest.approx(1.0, abs=1e-4)
    np.testing.assert_allclose((await store.get_vectors(G, Scope.ENTITIES, [a.id]))[a.id], vec("oranges"), atol=1e-6)


async def test_entities_of_facts_gives_each_facts_endpoints_in_order(store: Store) -> None:
    ann, bob, cy = person("Ann"), person("Bob"), person("Cy")
    met = fact(ann, bob, "Ann met Bob")
    trio = fact(bob, ann, "Bob, Ann and Cy sang", other_entity_ids=(cy.id,))
    await write_facts(store, G, [ann, bob, cy], [met, trio])
    found = await store.entities_of_facts(G, [trio.id, "no-such-fact", met.id, trio.id])
    assert found == {met.id: met.entity_ids, trio.id: (bob.id, ann.id, cy.id)}
    assert await store.entities_of_facts(G, []) == {}
    assert await store.entities_of_facts("another group", [met.id]) == {}


# -- deletions -------------------------------------------------------------------------------------


async def test_deleting_an_entity_takes_its_mentions_vector_and_memberships(store: Store) -> None:
    ann, bob = person("Ann"), person("Bob")
    episode = Episode(group_id=G, content="Ann met Bob")
    met = fact(ann, bob, "Ann met Bob")
    club = Community(group_id=G, name="club", member_ids=(ann.id, bob.id))
    await store.write(
        GraphWrite(
            group_id=G,
            episodes=[episode],
            entities=[ann, bob],
            facts=[met],
            communities=[club],
            mentions=[Mention(group_id=G, episode_id=episode.id, entity_id=e.id) for e in (ann, bob)],
            entity_vectors={ann.id: vec("Ann"), bob.id: vec("Bob")},
        )
    )
    await store.write(GraphWrite(group_id=G, delete_entity_ids=[ann.id]))

    assert await store.get_entities(G, [ann.id]) == []
    assert (await store.entities_of_episodes(G, [episode.id])).get(episode.id, []) == [bob.id]
    assert (await store.episodes_of_entities(G, [ann.id])).get(ann.id, []) == []
    assert await store.get_vectors(G, Scope.ENTITIES, [ann.id]) == {}
    assert [h.id for h in await store.vector_search(G, Scope.ENTITIES, vec("Ann"), limit=5)] == [bob.id]
    assert (await store.get_communities(G, [club.id]))[0].member_ids == (bob.id,)
    assert await store.find_entities_by_names(G, ["Ann"]) == []
    assert await store.fulltext_search(G, Scope.ENTITIES, "Ann") == []
    assert await store.get_facts(G, [met.id]) == [met]  # facts are the caller's to rewrite or delete


async def test_deleting_an_episode_takes_its_mentions_but_facts_keep_provenance(store: Store) -> None:
    ann = person("Ann")
    episode = Episode(group_id=G, content="Ann likes tea")
    likes = fact(ann, ann, "Ann likes tea", episode_ids=(episode.id,))
    await store.write(
        GraphWrite(
            group_id=G,
            episodes=[episode],
            entities=[ann],
            facts=[likes],
            mentions=[Mention(group_id=G, episode_id=episode.id, entity_id=ann.id)],
            episode_vectors={episode.id: vec(episode.text)},
        )
    )
    await store.write(GraphWrite(group_id=G, delete_episode_ids=[episode.id]))
    assert await store.get_episodes(G, [episode.id]) == []
    assert (await store.episodes_of_entities(G, [ann.id])).get(ann.id, []) == []
    assert await store.fulltext_search(G, Scope.EPISODES, "tea") == []
    assert await store.vector_search(G, Scope.EPISODES, vec(episode.text)) == []
    assert await store.get_facts(G, [likes.id]) == [likes]


async def test_a_deleted_fact_disappears_from_every_read_and_search(store: Store) -> None:
    a, b = person("Ann"), person("Bob")
    gone, kept = fact(a, b, "Ann phoned Bob"), fact(a, b, "Ann wrote to Bob")
    await write_facts(store, G, [a, b], [gone, kept])
    await store.write(GraphWrite(group_id=G, delete_fact_ids=[gone.id]))
    assert await store.get_facts(G, [gone.id, kept.id]) == [kept]
    assert [f.id for f in await store.list_facts(G)] == [kept.id]
    assert await store.fulltext_search(G, Scope.FACTS, "phoned") == []
    assert gone.id not in {h.id for h in await store.vector_search(G, Scope.FACTS, vec(gone.fact))}
    assert set((await store.bfs(G, [a.id])).facts) == {kept.id}
    assert [f.id for f in await store.facts_between(G, a.id, b.id)] == [kept.id]
    assert await store.get_vectors(G, Scope.FACTS, [gone.id]) == {}


async def test_communities_can_be_deleted_one_by_one_or_replaced_wholesale(store: Store) -> None:
    c1, c2, c3 = (Community(group_id=G, name=f"topic {n}") for n in (1, 2, 3))
    await store.write(GraphWrite(group_id=G, communities=[c1, c2, c3], community_vectors={c2.id: vec("2")}))
    await store.write(GraphWrite(group_id=G, delete_community_ids=[c1.id]))
    assert {c.id for c in await store.list_communities(G)} == {c2.id, c3.id}
    c4 = Community(group_id=G, name="topic 4")
    await store.write(GraphWrite(group_id=G, communities=[c3, c4], replace_communities=True))
    assert {c.id for c in await store.list_communities(G)} == {c3.id, c4.id}
    assert await store.get_vectors(G, Scope.COMMUNITIES, [c2.id]) == {}
    assert await store.fulltext_search(G, Scope.COMMUNITIES, "topic", limit=10) != []
    assert {h.id for h in await store.fulltext_search(G, Scope.COMMUNITIES, "topic")} == {c3.id, c4.id}


async def test_mentions_can_be_deleted_individually(store: Store) -> None:
    a, b = person("a"), person("b")
    episode = Episode(group_id=G, content="a and b")
    mentions = [Mention(group_id=G, episode_id=episode.id, entity_id=e.id) for e in (a, b)]
    await store.write(GraphWrite(group_id=G, episodes=[episode], entities=[a, b], mentions=mentions))
    await store.write(GraphWrite(group_id=G, delete_mentions=[mentions[0]]))
    assert (await store.entities_of_episodes(G, [episode.id]))[episode.id] == [b.id]


async def test_deletions_run_before_upserts_in_one_batch(store: Store) -> None:
    a = person("Ann")
    await store.write(GraphWrite(group_id=G, entities=[a]))
    again = a.model_copy(update={"summary": "back again"})
    await store.write(GraphWrite(group_id=G, delete_entity_ids=[a.id], entities=[again]))
    assert await store.get_entities(G, [a.id]) == [again]


# -- atomicity -------------------------------------------------------------------------------------


async def test_a_batch_naming_another_group_is_refused_and_writes_nothing(store: Store) -> None:
    mine, theirs = person("Mine"), person("Theirs", group=OTHER)
    for batch in (
        GraphWrite(group_id=G, entities=[mine, theirs]),
        GraphWrite(group_id=G, entities=[mine], facts=[fact(theirs, theirs, "x")]),
        GraphWrite(group_id=G, entities=[mine], episodes=[Episode(group_id=OTHER, content="x")]),
        GraphWrite(group_id=G, entities=[mine], mentions=[Mention(group_id=OTHER, episode_id="e", entity_id="n")]),
        GraphWrite(group_id=G, entities=[mine], communities=[Community(group_id=OTHER, name="c")]),
    ):
        with pytest.raises(InvalidInputError):
            await store.write(batch)
    assert await store.get_entities(G, [mine.id]) == []
    assert await store.get_entities(OTHER, [theirs.id]) == []
    assert await store.list_groups() == []


async def test_a_batch_that_fails_midway_leaves_no_trace(store: Store) -> None:
    a, b = person("Ann"), person("Bob")
    await write_facts(store, G, [a], [])
    failing = GraphWrite(
        group_id=G,
        entities=[b, a.model_copy(update={"summary": "changed"})],
        facts=[fact(a, b, "Ann knows Bob")],
        entity_vectors={b.id: np.ones(7, dtype=np.float32)},  # a dimension this group does not use
    )
    with pytest.raises(InvalidInputError):
        await store.write(failing)
    assert await store.get_entities(G, [a.id, b.id]) == [a]
    assert await store.list_facts(G) == []
    assert await store.fulltext_search(G, Scope.ENTITIES, "Bob") == []
    assert [h.id for h in await store.vector_search(G, Scope.ENTITIES, vec("Ann"))] == [a.id]


async def test_a_vector_for_an_object_outside_the_group_is_refused(store: Store) -> None:
    theirs = person("Theirs", group=OTHER)
    await store.write(GraphWrite(group_id=OTHER, entities=[theirs]))
    mine = person("Mine")
    with pytest.raises(InvalidInputError):
        await store.write(GraphWrite(group_id=G, entities=[mine], entity_vectors={theirs.id: vec("x")}))
    assert await store.get_entities(G, [mine.id]) == []
    assert await store.vector_search(G, Scope.ENTITIES, vec("x")) == []


# -- filters ---------------------------------------------------------------------------------------

LABELS = ("Person", "Place", "Thing")
RELATIONS = ("KNOWS", "LIVES_IN", "OWNS")


def random_graph(rng: random.Random, n_entities: int = 12, n_facts: int = 120) -> tuple[list[Entity], list[Fact]]:
    """Facts on a coarse time grid (equal bounds are common), some open, some superseded, some in the future."""
    entities = [person(f"entity {i}", labels=tuple(rng.sample(LABELS, rng.randint(1, 2)))) for i in range(n_entities)]
    facts = []
    for i in range(n_facts):
        source, target = rng.choice(entities), rng.choice(entities)
        valid = None if rng.random() < 0.3 else day(rng.randint(0, 10))
        invalid = None if rng.random() < 0.5 else day(rng.randint(0, 10) + (valid - T0).days if valid else 0)
        if rng.random() < 0.1:
            invalid = datetime(2999, 1, 1, tzinfo=UTC)  # ends in the future: still current
        created = day(rng.randint(0, 10))
        expired = None if rng.random() < 0.6 else created + timedelta(days=rng.randint(0, 5))
        facts.append(
            fact(
                source,
                target,
                f"fact {i} {rng.choice(['coffee', 'tea', 'juice'])} {rng.choice(['hot', 'cold'])}",
                relation_type=rng.choice(RELATIONS),
                valid_at=valid,
                invalid_at=invalid,
                created_at=created,
                expired_at=expired,
            )
        )
    return entities, facts


def random_range(rng: random.Random) -> TimeRange:
    start = None if rng.random() < 0.3 else day(rng.randint(0, 10))
    end = None if rng.random() < 0.3 else day(rng.randint(0, 5) + ((start - T0).days if start else 0))
    return TimeRange(start=start, end=end, include_null=rng.random() < 0.5)


def random_filters(rng: random.Random) -> SearchFilters:
    options: dict[str, object] = {}
    if rng.random() < 0.3:
        options["labels"] = tuple(rng.sample(LABELS, rng.randint(0, 2)))
    if rng.random() < 0.3:
        options["relation_types"] = tuple(rng.sample(RELATIONS, rng.randint(0, 2)))
    for name in ("valid_at", "invalid_at", "created_at", "expired_at"):
        if rng.random() < 0.2:
            options[name] = random_range(rng)
    if rng.random() < 0.35:
        options["as_of"] = day(rng.randint(-1, 12))
    if rng.random() < 0.35:
        options["known_at"] = day(rng.randint(-1, 12) + rng.choice([0, 0.5]))
    options["include_superseded"] = rng.random() < 0.3
    if rng.random() < 0.5:
        options["now"] = day(rng.randint(0, 12))
    return SearchFilters(**options)


def expected(facts: list[Fact], labels: dict[str, set[str]], filters: SearchFilters | None) -> list[Fact]:
    return [f for f in facts if fact_matches(f, filters, endpoint_labels=labels[f.source_id] | labels[f.target_id])]


async def test_list_facts_agrees_with_fact_matches_on_random_filters(store: Store) -> None:
    rng = random.Random(7)
    entities, facts = random_graph(rng)
    await write_facts(store, G, entities, facts)
    labels = {e.id: set(e.labels) for e in entities}
    ordered = sorted(facts, key=lambda f: (f.created_at, f.id))
    assert await store.list_facts(G) == ordered  # no filters: every fact, superseded included
    assert [f.id for f in await store.list_facts(G, filters=SearchFilters())] == [
        f.id for f in expected(ordered, labels, SearchFilters())
    ]
    for _ in range(150):
        filters = random_filters(rng)
        got = [f.id for f in await store.list_facts(G, filters=filters)]
        assert got == [f.id for f in expected(ordered, labels, filters)], filters


async def test_searches_and_bfs_apply_the_same_filters(store: Store) -> None:
    rng = random.Random(11)
    entities, facts = random_graph(rng, n_facts=80)
    await write_facts(store, G, entities, facts)
    labels = {e.id: set(e.labels) for e in entities}
    for _ in range(25):
        filters = random_filters(rng)
        allowed = {f.id for f in expected(facts, labels, filters)}
        text_hits = await store.fulltext_search(G, Scope.FACTS, "coffee hot", limit=200, filters=filters)
        with_words = {f.id for f in facts if "coffee" in f.fact or "hot" in f.fact}
        assert {h.id for h in text_hits} == allowed & with_words
        vector_hits = await store.vector_search(G, Scope.FACTS, vec("coffee"), limit=5, filters=filters)
        assert {h.id for h in vector_hits} <= allowed
        assert len(vector_hits) == min(5, len(allowed))
        reached = await store.bfs(G, [entities[0].id], max_hops=3, filters=filters)
        assert set(reached.facts) <= allowed


async def test_the_default_filter_is_current_facts(store: Store) -> None:
    a, b = person("Ann"), person("Bob")
    now_true = fact(a, b, "Ann works with Bob")
    ended = fact(a, b, "Ann worked with Bob before", invalid_at=day(3))
    superseded = fact(a, b, "Ann works near Bob", expired_at=day(2))
    future_end = fact(a, b, "Ann works for Bob until later", invalid_at=datetime(2999, 1, 1, tzinfo=UTC))
    await write_facts(store, G, [a, b], [now_true, ended, superseded, future_end])
    current = {now_true.id, future_end.id}
    assert {h.id for h in await store.fulltext_search(G, Scope.FACTS, "Ann")} == current
    assert {h.id for h in await store.vector_search(G, Scope.FACTS, vec("Ann works"))} == current
    assert set((await store.bfs(G, [a.id])).facts) == current
    assert {f.id for f in await store.facts_between(G, a.id, b.id)} == current
    assert {f.id for f in await store.facts_between(G, b.id, a.id, include_superseded=True)} == {
        now_true.id,
        ended.id,
        superseded.id,
        future_end.id,
    }
    assert {f.id for f in await store.facts_of_entities(G, [b.id])} == current
    assert (await store.stats(G)).current_facts == 2
    as_of = await store.list_facts(G, filters=SearchFilters(as_of=day(2)))
    assert {f.id for f in as_of} == {now_true.id, ended.id, superseded.id, future_end.id}


async def test_labels_filter_entities_and_facts_by_endpoint(store: Store) -> None:
    ann = person("Ann Coffee", labels=("Person",))
    cafe = person("Coffee House", labels=("Place",))
    mug = person("Coffee Mug", labels=("Thing",))
    visits = fact(ann, cafe, "Ann visits the coffee house")
    owns = fact(ann, mug, "Ann owns a coffee mug")
    await write_facts(store, G, [ann, cafe, mug], [visits, owns])
    places = SearchFilters(labels=("Place",))
    assert [h.id for h in await store.fulltext_search(G, Scope.ENTITIES, "coffee", filters=places)] == [cafe.id]
    assert [h.id for h in await store.vector_search(G, Scope.ENTITIES, vec("coffee"), filters=places)] == [cafe.id]
    assert [h.id for h in await store.fulltext_search(G, Scope.FACTS, "coffee", filters=places)] == [visits.id]
    people = SearchFilters(labels=("Person",))
    assert {h.id for h in await store.fulltext_search(G, Scope.FACTS, "coffee", filters=people)} == {visits.id, owns.id}


# -- BFS -------------------------------------------------------------------------------------------


async def test_bfs_reports_shortest_hop_counts(store: Store) -> None:
    #  a - b - c - d - e      and a shortcut a - d; f is isolated; x is another group's
    a, b, c, d, e, f = (person(n) for n in "abcdef")
    ab, bc, cd, de, ad = fact(a, b, "ab"), fact(b, c, "bc"), fact(c, d, "cd"), fact(d, e, "de"), fact(a, d, "ad")
    old = fact(a, f, "af", expired_at=day(1))
    await write_facts(store, G, [a, b, c, d, e, f], [ab, bc, cd, de, ad, old])

    one = await store.bfs(G, [a.id], max_hops=1)
    assert one.entities == {a.id: 0, b.id: 1, d.id: 1}
    assert one.facts == {ab.id: 1, ad.id: 1}

    two = await store.bfs(G, [a.id], max_hops=2)
    assert two.entities == {a.id: 0, b.id: 1, d.id: 1, c.id: 2, e.id: 2}
    assert two.facts == {ab.id: 1, ad.id: 1, bc.id: 2, cd.id: 2, de.id: 2}

    assert (await store.bfs(G, [a.id], max_hops=0)).entities == {a.id: 0}
    assert (await store.bfs(G, [a.id], max_hops=2, filters=SearchFilters(include_superseded=True))).entities[f.id] == 1
    both = await store.bfs(G, [a.id, e.id], max_hops=1)
    assert both.entities == {a.id: 0, e.id: 0, b.id: 1, d.id: 1}
    assert both.facts == {ab.id: 1, ad.id: 1, de.id: 1}
    assert await store.bfs(OTHER, [a.id]) == type(one)(entities={}, facts={})


async def test_bfs_ignores_seeds_the_group_does_not_hold(store: Store) -> None:
    """A fact may outlive an endpoint; that endpoint's id is then no seed, even where a walk from it
    would reach facts first (``f-0`` sorts before ``f-1``, and the limit keeps one)."""
    a, b, ghost = person("a"), person("b"), person("ghost")
    gone, ab = fact(ghost, b, "ghost knew b", id="f-0"), fact(a, b, "a knows b", id="f-1")
    await write_facts(store, G, [a, b], [gone, ab])  # ghost: an endpoint, never an entity of the group
    walked = await store.bfs(G, [ghost.id, a.id], max_hops=1)
    assert walked.entities == {a.id: 0, b.id: 1} and walked.facts == {ab.id: 1}
    assert (await store.bfs(G, [ghost.id, a.id], max_hops=1, limit=1)).facts == {ab.id: 1}
    assert await store.bfs(G, [ghost.id], max_hops=2) == type(walked)(entities={}, facts={})


async def test_bfs_from_episodes_starts_at_the_entities_they_mention(store: Store) -> None:
    a, b, c = person("a"), person("b"), person("c")
    ab, bc = fact(a, b, "ab"), fact(b, c, "bc")
    episode = Episode(group_id=G, content="about a")
    await write_facts(store, G, [a, b, c], [ab, bc])
    await store.write(
        GraphWrite(
            group_id=G, episodes=[episode], mentions=[Mention(group_id=G, episode_id=episode.id, entity_id=a.id)]
        )
    )
    result = await store.bfs(G, [], seed_episode_ids=[episode.id], max_hops=2)
    assert result.entities == {a.id: 1, b.id: 2}
    assert result.facts == {ab.id: 2}
    seeded = await store.bfs(G, [b.id], seed_episode_ids=[episode.id], max_hops=1)
    assert seeded.entities == {b.id: 0, a.id: 1, c.id: 1}


async def test_bfs_traverses_hyperedges_and_respects_the_limit(store: Store) -> None:
    a, b, c, d = (person(n) for n in "abcd")
    meeting = fact(a, b, "a met b with c", other_entity_ids=(c.id,))
    later = fact(c, d, "c called d")
    await write_facts(store, G, [a, b, c, d], [meeting, later])
    result = await store.bfs(G, [a.id], max_hops=2)
    assert result.entities == {a.id: 0, b.id: 1, c.id: 1, d.id: 2}
    limited = await store.bfs(G, [a.id], max_hops=2, limit=1)
    assert limited.facts == {meeting.id: 1}
    assert d.id not in limited.entities


async def test_bfs_matches_a_reference_walk_on_a_random_graph(store: Store) -> None:
    rng = random.Random(3)
    entities, facts = random_graph(rng, n_entities=30, n_facts=60)
    await write_facts(store, G, entities, facts)
    labels = {e.id: set(e.labels) for e in entities}
    for filters in (None, SearchFilters(include_superseded=True), SearchFilters(as_of=day(4))):
        usable = expected(facts, labels, filters)
        hops, fact_hops = {entities[0].id: 0}, {}
        for hop in range(3):
            for f in usable:
                if f.id not in fact_hops and any(hops.get(e) == hop for e in f.entity_ids):
                    fact_hops[f.id] = hop + 1
                    for e in f.entity_ids:
                        hops.setdefault(e, hop + 1)
        result = await store.bfs(G, [entities[0].id], max_hops=3, filters=filters)
        assert result.facts == fact_hops
        assert result.entities == hops


# -- vector search ---------------------------------------------------------------------------------


async def test_vector_search_ranks_by_cosine_similarity(store: Store) -> None:
    a, b = person("Ann"), person("Bob")
    texts = ["Ann bakes apple pie", "Ann repairs old bicycles", "Bob sails on the lake", "Bob bakes bread"]
    facts = [fact(a, b, t) for t in texts]
    await write_facts(store, G, [a, b], facts)
    query = vec("apple pie")
    hits = await store.vector_search(G, Scope.FACTS, query, limit=4)
    expected_order = sorted(facts, key=lambda f: -float(vec(f.fact) @ query))
    assert [h.id for h in hits] == [f.id for f in expected_order]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].score == pytest.approx(float(vec(texts[0]) @ query), abs=1e-4)
    assert len(await store.vector_search(G, Scope.FACTS, query, limit=2)) == 2
    strong = await store.vector_search(G, Scope.FACTS, query, limit=4, min_score=hits[1].score - 1e-6)
    assert [h.id for h in strong] == [h.id for h in hits[:2]]


async def test_filtered_vector_search_returns_k_hits_when_k_match(store: Store) -> None:
    """The nearest facts are all superseded; the current ones are far down the ranking."""
    rng = np.random.default_rng(5)
    a = person("Ann")
    query = rng.standard_normal(32).astype(np.float32)
    query /= np.linalg.norm(query)
    facts, vectors = [], {}
    for i in range(300):
        current = i % 50 == 0
        noise = rng.standard_normal(32).astype(np.float32)
        v = (query * (0.2 if current else 3.0)) + noise  # superseded ones sit close to the query
        f = fact(a, a, f"fact {i}", expired_at=None if current else day(1))
        facts.append(f)
        vectors[f.id] = v / np.linalg.norm(v)
    await store.write(GraphWrite(group_id=G, entities=[a], facts=facts, fact_vectors=vectors))
    hits = await store.vector_search(G, Scope.FACTS, query, limit=5)
    currents = [f for f in facts if f.expired_at is None]
    best = sorted(currents, key=lambda f: -float(vectors[f.id] @ query))[:5]
    assert [h.id for h in hits] == [f.id for f in best]
    assert len(await store.vector_search(G, Scope.FACTS, query, limit=50)) == len(currents)


async def test_superseding_a_fact_after_searches_updates_vector_search(store: Store) -> None:
    a = person("Ann")
    lives = fact(a, a, "Ann lives in Lyon", valid_at=day(1))
    await write_facts(store, G, [a], [lives])
    assert [h.id for h in await store.vector_search(G, Scope.FACTS, vec(lives.fact))] == [lives.id]
    moved = lives.model_copy(update={"invalid_at": day(5), "expired_at": day(6)})
    await store.write(GraphWrite(group_id=G, facts=[moved]))  # new timestamps, same vector
    assert await store.vector_search(G, Scope.FACTS, vec(lives.fact)) == []
    then = await store.vector_search(G, Scope.FACTS, vec(lives.fact), filters=SearchFilters(as_of=day(3)))
    assert [h.id for h in then] == [lives.id]
    assert await store.vector_search(G, Scope.FACTS, vec(lives.fact), filters=SearchFilters(as_of=day(5))) == []
    known = SearchFilters(known_at=day(5))  # created_at is now; at day 5 we knew nothing
    assert [h.id for h in await store.vector_search(G, Scope.FACTS, vec(lives.fact), filters=known)] == []


async def test_a_fact_resent_with_its_unchanged_vector_is_still_found_by_its_new_times(store: Store) -> None:
    a = person("Ann")
    works = fact(a, a, "Ann works at the bakery")
    await write_facts(store, G, [a], [works])
    assert len(await store.vector_search(G, Scope.FACTS, vec(works.fact))) == 1
    ended = works.model_copy(update={"expired_at": day(9)})
    await store.write(GraphWrite(group_id=G, facts=[ended], fact_vectors={works.id: vec(works.fact)}))
    assert await store.vector_search(G, Scope.FACTS, vec(works.fact)) == []
    everything = SearchFilters(include_superseded=True)
    hits = await store.vector_search(G, Scope.FACTS, vec(works.fact), filters=everything)
    assert [h.id for h in hits] == [works.id] and hits[0].score == pytest.approx(1.0, abs=1e-4)


async def test_vector_search_covers_entities_episodes_and_communities(store: Store) -> None:
    ann, paris = person("Ann"), person("Paris")
    talk = Episode(group_id=G, content="we talked about sailing")
    walk = Episode(group_id=G, content="we walked in the park")
    sport = Community(group_id=G, name="sailing boats regatta")
    food = Community(group_id=G, name="cooking recipes")
    await store.write(
        GraphWrite(
            group_id=G,
            entities=[ann, paris],
            episodes=[talk, walk],
            communities=[sport, food],
            entity_vectors={ann.id: vec("Ann"), paris.id: vec("Paris")},
            episode_vectors={talk.id: vec(talk.text), walk.id: vec(walk.text)},
            community_vectors={sport.id: vec(sport.name), food.id: vec(food.name)},
        )
    )
    assert (await store.vector_search(G, Scope.ENTITIES, vec("Paris")))[0].id == paris.id
    assert (await store.vector_search(G, Scope.EPISODES, vec("sailing")))[0].id == talk.id
    assert (await store.vector_search(G, Scope.COMMUNITIES, vec("recipes")))[0].id == food.id


async def test_new_vectors_are_searchable_right_after_the_write(store: Store) -> None:
    a = person("Ann")
    await store.write(GraphWrite(group_id=G, entities=[a], entity_vectors={a.id: vec("Ann")}))
    assert len(await store.vector_search(G, Scope.ENTITIES, vec("x"))) == 1  # the index is now built
    others = [person(f"other {i}") for i in range(20)]
    await store.write(GraphWrite(group_id=G, entities=others, entity_vectors={o.id: vec(o.name) for o in others}))
    assert (await store.vector_search(G, Scope.ENTITIES, vec("other 7")))[0].id == others[7].id
    await store.write(GraphWrite(group_id=G, delete_entity_ids=[others[7].id]))
    assert others[7].id not in {h.id for h in await store.vector_search(G, Scope.ENTITIES, vec("other 7"), limit=30)}


# -- full text -------------------------------------------------------------------------------------


async def test_fulltext_ranks_the_best_matching_fact_first(store: Store) -> None:
    a, b = person("Ann"), person("Bob")
    facts = [
        fact(a, b, "Ann drinks coffee"),
        fact(a, b, "Ann drinks green tea every morning with Bob"),
        fact(a, b, "Bob sells coffee beans and coffee machines"),
        fact(a, b, "Ann rides a bicycle"),
    ]
    await write_facts(store, G, [a, b], facts)
    hits = await store.fulltext_search(G, Scope.FACTS, "coffee machines")
    assert hits[0].id == facts[2].id
    assert {h.id for h in hits} == {facts[0].id, facts[2].id}
    assert all(h.score > 0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(await store.fulltext_search(G, Scope.FACTS, "Ann", limit=2)) == 2
    assert await store.fulltext_search(G, Scope.FACTS, "Ann", limit=0) == []


async def test_fulltext_covers_entities_episodes_and_communities(store: Store) -> None:
    ann = person("Ann Lee", summary="a violinist from Seoul")
    bob = person("Bob", summary="likes Ann's violin concerts")
    said = Episode(group_id=G, content="I finally bought a kayak", speaker="Marguerite")
    note = Episode(group_id=G, kind=EpisodeKind.TEXT, content="Kayak rental prices went up")
    club = Community(group_id=G, name="music", summary="violin and orchestra people")
    await store.write(GraphWrite(group_id=G, entities=[ann, bob], episodes=[said, note], communities=[club]))
    assert (await store.fulltext_search(G, Scope.ENTITIES, "violinist Seoul"))[0].id == ann.id
    assert (await store.fulltext_search(G, Scope.ENTITIES, "Ann Lee"))[0].id == ann.id
    assert [h.id for h in await store.fulltext_search(G, Scope.EPISODES, "Marguerite")] == [said.id]  # "speaker: text"
    assert {h.id for h in await store.fulltext_search(G, Scope.EPISODES, "kayak")} == {said.id, note.id}
    assert [h.id for h in await store.fulltext_search(G, Scope.COMMUNITIES, "orchestra")] == [club.id]
    assert [h.id for h in await store.fulltext_search(G, Scope.COMMUNITIES, "music")] == [club.id]


async def test_fulltext_is_case_and_accent_insensitive(store: Store) -> None:
    a = person("Zoë")
    cafe = fact(a, a, "Zoë opened a Café in Montréal")
    await write_facts(store, G, [a], [cafe])
    for query in ("cafe", "CAFÉ", "montreal", "zoe"):
        assert [h.id for h in await store.fulltext_search(G, Scope.FACTS, query)] == [cafe.id], query


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
async def test_any_query_string_is_safe(store: Store, query: str) -> None:
    a = person("Ann")
    plain = fact(a, a, "coffee near the station or the tea shop, not milk")
    await write_facts(store, G, [a], [plain])
    await store.write(GraphWrite(group_id=G, episodes=[Episode(group_id=G, content="coffee and tea")]))
    for scope in Scope:
        hits = await store.fulltext_search(G, scope, query)
        assert all(h.id for h in hits)


async def test_operator_words_are_searched_as_plain_words(store: Store) -> None:
    a = person("Ann")
    near = fact(a, a, "the shop near the station")
    either = fact(a, a, "tea or coffee")
    other = fact(a, a, "nothing relevant here")
    await write_facts(store, G, [a], [near, either, other])
    assert [h.id for h in await store.fulltext_search(G, Scope.FACTS, "NEAR(")] == [near.id]
    assert [h.id for h in await store.fulltext_search(G, Scope.FACTS, "OR")] == [either.id]
    assert [h.id for h in await store.fulltext_search(G, Scope.FACTS, '"station*')] == [near.id]
    assert await store.fulltext_search(G, Scope.FACTS, "-station") != []


# -- hostile group ids and isolation ---------------------------------------------------------------


async def test_hostile_group_ids_work_and_never_see_each_other(store: Store) -> None:
    written: dict[str, tuple[Entity, Fact, Episode]] = {}
    for group in HOSTILE_GROUP_IDS:
        a, b = person("Ann", group=group), person("Bob", group=group)
        f = fact(a, b, "Ann borrowed the red kayak from Bob")
        episode = Episode(group_id=group, content="Ann borrowed the red kayak")
        community = Community(group_id=group, name="kayak club")
        await store.write(
            GraphWrite(
                group_id=group,
                entities=[a, b],
                facts=[f],
                episodes=[episode],
                communities=[community],
                mentions=[Mention(group_id=group, episode_id=episode.id, entity_id=a.id)],
                fact_vectors={f.id: vec(f.fact)},
                entity_vectors={a.id: vec("Ann"), b.id: vec("Bob")},
                episode_vectors={episode.id: vec(episode.text)},
                community_vectors={community.id: vec("kayak club")},
            )
        )
        await store.insert_episode(Episode(group_id=group, content="queued"))
        written[group] = (a, f, episode)
    assert await store.list_groups() == sorted(HOSTILE_GROUP_IDS)
    assert await store.pending_groups() == sorted(HOSTILE_GROUP_IDS)
    for group, (a, f, episode) in written.items():
        own = {obj.id for obj in (a, f, episode)}
        foreign = {obj.id for g, objs in written.items() if g != group for obj in objs}
        seen = {h.id for h in await store.fulltext_search(group, Scope.FACTS, "kayak Ann")}
        seen |= {h.id for h in await store.fulltext_search(group, Scope.EPISODES, "kayak")}
        seen |= {h.id for h in await store.fulltext_search(group, Scope.ENTITIES, "Ann")}
        seen |= {h.id for h in await store.vector_search(group, Scope.FACTS, vec(f.fact), limit=50)}
        seen |= {h.id for h in await store.vector_search(group, Scope.EPISODES, vec(episode.text), limit=50)}
        seen |= {h.id for h in await store.vector_search(group, Scope.ENTITIES, vec("Ann"), limit=50)}
        seen |= set((await store.bfs(group, [a.id, *(x[0].id for x in written.values())])).entities)
        seen |= {x.id for x in await store.list_facts(group)}
        seen |= {x.id for x in await store.find_entities_by_names(group, ["Ann"])}
        seen |= {x.id for x in await store.list_episodes(group)}
        assert own <= seen and not seen & foreign, group
        assert len(await store.fulltext_search(group, Scope.COMMUNITIES, "kayak")) == 1
        assert len(await store.vector_search(group, Scope.COMMUNITIES, vec("kayak club"))) == 1
        others = [x[1].id for g, x in written.items() if g != group]
        assert await store.get_facts(group, others) == []
        assert (await store.stats(group)).facts == 1


async def test_hostile_group_ids_can_be_deleted_one_at_a_time(store: Store) -> None:
    for group in HOSTILE_GROUP_IDS:
        a = person("Ann", group=group)
        await write_facts(store, group, [a], [fact(a, a, "Ann swims")])
    for i, group in enumerate(HOSTILE_GROUP_IDS):
        await store.delete_group(group)
        assert await store.list_groups() == sorted(HOSTILE_GROUP_IDS[i + 1 :])
        assert await store.fulltext_search(group, Scope.FACTS, "swims") == []
        for rest in HOSTILE_GROUP_IDS[i + 1 :]:
            assert len(await store.fulltext_search(rest, Scope.FACTS, "swims")) == 1


# -- the episode queue -----------------------------------------------------------------------------


async def test_inserting_an_episode_twice_is_a_noop_returning_the_original(store: Store) -> None:
    episode = Episode(group_id=G, content="hello")
    stored, inserted = await store.insert_episode(episode)
    assert inserted and stored == episode
    again, inserted_again = await store.insert_episode(episode.model_copy(update={"content": "changed"}))
    assert not inserted_again and again == episode
    assert await store.get_episodes(G, [episode.id]) == [episode]
    elsewhere, inserted_elsewhere = await store.insert_episode(episode.model_copy(update={"group_id": OTHER}))
    assert inserted_elsewhere and elsewhere.group_id == OTHER


async def test_queue_transitions_count_attempts_and_keep_the_last_error(store: Store) -> None:
    episode, _ = await store.insert_episode(Episode(group_id=G, content="work"))
    assert episode.status is EpisodeStatus.PENDING and episode.attempts == 0
    processing = await store.set_episode_status(G, episode.id, EpisodeStatus.PROCESSING)
    assert (processing.status, processing.attempts) == (EpisodeStatus.PROCESSING, 1)
    failed = await store.set_episode_status(G, episode.id, EpisodeStatus.PENDING, error="timeout")
    assert (failed.status, failed.attempts, failed.last_error) == (EpisodeStatus.PENDING, 1, "timeout")
    retried = await store.set_episode_status(G, episode.id, EpisodeStatus.PROCESSING)
    assert (retried.attempts, retried.last_error) == (2, "timeout")
    done = await store.set_episode_status(G, episode.id, EpisodeStatus.DONE)
    assert (done.status, done.attempts, done.last_error) == (EpisodeStatus.DONE, 2, None)
    assert await store.get_episodes(G, [episode.id]) == [done]
    with pytest.raises(NotFoundError):
        await store.set_episode_status(G, "missing", EpisodeStatus.DONE)
    with pytest.raises(NotFoundError):
        await store.set_episode_status(OTHER, episode.id, EpisodeStatus.DONE)


async def test_an_episodes_metadata_is_replaced_whole_and_its_text_stays(store: Store) -> None:
    episode, _ = await store.insert_episode(
        Episode(group_id=G, content="Ann moved to Lyon", metadata={"channel": "sms", "n": 1}))
    updated = await store.set_episode_metadata(G, episode.id, {"n": 2, "tags": ["a", "b"], "ok": True})
    assert updated == episode.model_copy(update={"metadata": {"n": 2, "tags": ["a", "b"], "ok": True}})
    assert await store.get_episodes(G, [episode.id]) == [updated]
    assert [e.id for e in await store.fulltext_search(G, Scope.EPISODES, "Lyon")] == [episode.id]
    assert (await store.set_episode_metadata(G, episode.id, {})).metadata == {}
    with pytest.raises(NotFoundError):
        await store.set_episode_metadata(G, "missing", {"n": 3})
    with pytest.raises(NotFoundError):
        await store.set_episode_metadata(OTHER, episode.id, {"n": 3})
    with pytest.raises(InvalidInputError):
        await store.set_episode_metadata(G, episode.id, {"when": object()})
    assert (await store.get_episodes(G, [episode.id]))[0].metadata == {}


async def test_rewriting_a_stored_episode_keeps_the_metadata_set_since(store: Store) -> None:
    """A worker finishing an episode writes it back as it read it: a metadata update made while it
    extracted is not undone."""
    episode, _ = await store.insert_episode(Episode(group_id=G, content="work", metadata={"v": 1}))
    await store.set_episode_metadata(G, episode.id, {"v": 2})
    finished = episode.model_copy(update={"status": EpisodeStatus.DONE, "attempts": 1})
    await store.write(GraphWrite(G, episodes=[finished]))
    [stored] = await store.get_episodes(G, [episode.id])
    assert (stored.status, stored.attempts, stored.metadata) == (EpisodeStatus.DONE, 1, {"v": 2})
    fresh = Episode(group_id=G, content="new", metadata={"v": 7})
    await store.write(GraphWrite(G, episodes=[fresh]))
    assert (await store.get_episodes(G, [fresh.id]))[0].metadata == {"v": 7}


async def test_reset_processing_and_pending_groups(store: Store) -> None:
    first, _ = await store.insert_episode(Episode(group_id=G, content="one"))
    second, _ = await store.insert_episode(Episode(group_id=OTHER, content="two"))
    third, _ = await store.insert_episode(Episode(group_id=OTHER, content="three"))
    assert await store.pending_groups() == sorted([G, OTHER])
    for group, episode in ((G, first), (OTHER, second)):
        await store.set_episode_status(group, episode.id, EpisodeStatus.PROCESSING)
    await store.set_episode_status(OTHER, third.id, EpisodeStatus.DONE)
    assert await store.pending_groups() == []
    assert await store.reset_processing() == 2
    assert await store.pending_groups() == sorted([G, OTHER])
    assert (await store.get_episodes(G, [first.id]))[0].status is EpisodeStatus.PENDING
    assert await store.reset_processing() == 0


async def test_the_queue_depth_counts_every_group_whatever_else_it_holds(store: Store) -> None:
    assert await store.queue_depth() == {}
    held, _ = await store.insert_episode(Episode(group_id=G, content="held", created_at=day(2)))
    await store.insert_episode(Episode(group_id=OTHER, content="waits", created_at=day(3)))
    await store.insert_episode(Episode(group_id=OTHER, content="waits longer", created_at=day(1)))
    await store.set_episode_status(G, held.id, EpisodeStatus.PROCESSING)  # G: nothing pending
    assert await store.queue_depth() == {EpisodeStatus.PENDING: QueueDepth(2, day(1)),
                                         EpisodeStatus.PROCESSING: QueueDepth(1, day(2))}
    await store.set_episode_status(G, held.id, EpisodeStatus.DONE)
    assert EpisodeStatus.PROCESSING not in await store.queue_depth()


async def test_list_episodes_orders_filters_and_limits(store: Store) -> None:
    times = [day(3), day(1), day(2), day(2)]
    episodes = [Episode(group_id=G, content=f"e{i}", reference_time=t) for i, t in enumerate(times)]
    for episode in episodes:
        await store.insert_episode(episode)
    await store.set_episode_status(G, episodes[0].id, EpisodeStatus.DONE)
    key = sorted(episodes, key=lambda e: (e.reference_time, e.created_at, e.id))
    assert [e.id for e in await store.list_episodes(G, newest_first=False)] == [e.id for e in key]
    assert [e.id for e in await store.list_episodes(G)] == [e.id for e in reversed(key)]
    assert [e.id for e in await store.list_episodes(G, limit=2)] == [e.id for e in reversed(key)][:2]
    assert {e.id for e in await store.list_episodes(G, before=day(2))} == {episodes[1].id}
    done = await store.list_episodes(G, statuses=[EpisodeStatus.DONE])
    assert [e.id for e in done] == [episodes[0].id]
    pending = await store.list_episodes(G, statuses=[EpisodeStatus.PENDING], before=day(3), newest_first=False)
    assert [e.id for e in pending] == [e.id for e in key if e.id != episodes[0].id]


# -- lookups, listings, stats, groups --------------------------------------------------------------


async def test_provenance_and_neighbourhood_lookups(store: Store) -> None:
    a, b, c = person("a"), person("b"), person("c")
    first = Episode(group_id=G, content="first")
    second = Episode(group_id=G, content="second")
    ab = fact(a, b, "ab", episode_ids=(first.id,))
    abc = fact(a, b, "ab with c", other_entity_ids=(c.id,), episode_ids=(first.id, second.id))
    bc_old = fact(b, c, "bc", expired_at=day(1))
    ba = fact(b, a, "ba")
    await store.write(
        GraphWrite(
            group_id=G,
            episodes=[first, second],
            entities=[a, b, c],
            facts=[ab, abc, bc_old, ba],
            mentions=[Mention(group_id=G, episode_id=first.id, entity_id=x.id) for x in (a, b)]
            + [Mention(group_id=G, episode_id=second.id, entity_id=a.id)],
        )
    )
    assert {f.id for f in await store.facts_between(G, a.id, b.id)} == {ab.id, abc.id, ba.id}
    assert {f.id for f in await store.facts_of_entities(G, [c.id])} == {abc.id}
    assert {f.id for f in await store.facts_of_entities(G, [c.id], include_superseded=True)} == {abc.id, bc_old.id}
    assert {f.id for f in await store.facts_of_episode(G, second.id)} == {abc.id}
    assert {f.id for f in await store.facts_of_episode(G, first.id)} == {ab.id, abc.id}
    mentioned = await store.entities_of_episodes(G, [first.id, second.id])
    assert sorted(mentioned[first.id]) == sorted([a.id, b.id]) and mentioned[second.id] == [a.id]
    mentions = await store.episodes_of_entities(G, [a.id, c.id])
    assert sorted(mentions[a.id]) == sorted([first.id, second.id]) and mentions.get(c.id, []) == []
    ids, edges = await store.entity_edges(G)
    assert sorted(ids) == sorted([a.id, b.id, c.id])
    weights = {frozenset((e.a, e.b)): e.weight for e in edges}
    assert weights == {frozenset((a.id, b.id)): 3}


async def test_listings_page_in_creation_order(store: Store) -> None:
    people = [person(f"p{i}", created_at=day(i % 3)) for i in range(7)]
    await store.write(GraphWrite(group_id=G, entities=people))
    ordered = sorted(people, key=lambda e: (e.created_at, e.id))
    assert await store.list_entities(G) == ordered
    assert await store.list_entities(G, limit=3, offset=2) == ordered[2:5]
    facts = [fact(people[0], people[1], f"f{i}", created_at=day(5 - i % 2)) for i in range(5)]
    await store.write(GraphWrite(group_id=G, facts=facts))
    ordered_facts = sorted(facts, key=lambda f: (f.created_at, f.id))
    assert await store.list_facts(G, limit=2, offset=1) == ordered_facts[1:3]


async def test_stats_count_each_kind(store: Store) -> None:
    a, b = person("a"), person("b")
    await store.write(
        GraphWrite(
            group_id=G,
            entities=[a, b],
            episodes=[Episode(group_id=G, content="x")],
            facts=[fact(a, b, "one"), fact(a, b, "two", expired_at=day(1))],
            communities=[Community(group_id=G, name="c")],
        )
    )
    stats = await store.stats(G)
    assert (stats.episodes, stats.entities, stats.facts, stats.current_facts, stats.communities) == (1, 2, 2, 1, 1)
    assert (await store.stats(OTHER)).entities == 0


async def test_deleting_a_group_removes_it_and_only_it(store: Store) -> None:
    for group in (G, OTHER):
        a = person("Ann", group=group)
        await write_facts(store, group, [a], [fact(a, a, "Ann reads")])
        await store.insert_episode(Episode(group_id=group, content="Ann reads"))
    assert await store.list_groups() == [G, OTHER]
    await store.delete_group(G)
    await store.delete_group("never existed")
    assert await store.list_groups() == [OTHER]
    assert (await store.stats(G)).facts == 0
    assert await store.fulltext_search(G, Scope.FACTS, "reads") == []
    assert await store.vector_search(G, Scope.FACTS, vec("Ann reads")) == []
    assert await store.pending_groups() == [OTHER]
    assert len(await store.fulltext_search(OTHER, Scope.FACTS, "reads")) == 1
    a = person("Ann")  # the id can be used again
    await write_facts(store, G, [a], [fact(a, a, "Ann writes")])
    assert len(await store.fulltext_search(G, Scope.FACTS, "writes")) == 1
    assert len(await store.vector_search(G, Scope.FACTS, vec("Ann writes"))) == 1


# -- concurrency -----------------------------------------------------------------------------------


async def test_concurrent_writes_and_reads_all_succeed(store: Store) -> None:
    async def one(i: int) -> None:
        a = person(f"person {i}")
        await write_facts(store, G, [a], [fact(a, a, f"person {i} likes number {i}")])
        assert await store.get_entities(G, [a.id]) == [a]
        await store.fulltext_search(G, Scope.FACTS, "likes")

    await asyncio.gather(*(one(i) for i in range(40)))
    stats = await store.stats(G)
    assert (stats.entities, stats.facts) == (40, 40)
    assert len(await store.fulltext_search(G, Scope.FACTS, "likes", limit=100)) == 40
    assert len(await store.vector_search(G, Scope.FACTS, vec("likes"), limit=100)) == 40
