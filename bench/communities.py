"""Community benchmark: full build and dynamic extension on a synthetic group; prints ``name: value`` lines.

    .venv/bin/python bench/communities.py                 # 20,000 entities, 100,000 facts
    .venv/bin/python bench/communities.py --entities 2000 --facts 10000 --new 100

The group is a planted partition: communities of 8 to 60 entities (each entity's summary names its
community's topic), ``--noise`` of the facts between random entities of any community, the rest
between random members of one community (parallel facts happen, and add weight). It lives in a
SQLite store in a temporary directory; embeddings come from the hashing embedder.

1. Full build without a model (label propagation, names from central members, embeddings, one
   atomic write): ``lp_full_build_s``; propagation alone ``lp_detect_s``; quality against the
   planted communities (``planted_nmi``, ``planted_exact_ratio``: planted communities found exactly).
2. Full build with summaries from a scripted model (a Python function, no latency):
   ``full_build_with_summaries_s`` and ``summary_model_calls``; then a refresh of the unchanged group
   (``refresh_unchanged_model_calls``: summaries of unchanged communities are kept).
3. Dynamic extension: ``--new`` entities arrive in episodes of ``--batch`` entities, each with 2–6
   facts into one planted community (plus, for some, a fact to another newcomer); their entities and
   facts are written first (not timed), then ``extend`` is timed, without a model:
   ``dynamic_extension_ms`` per entity; ``dynamic_extension_single_ms`` for one entity per call;
   ``extension_placed_correctly``; drift before and after ``maybe_refresh``. With the scripted model,
   ``extension_model_calls_per_episode``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, cast

import numpy as np

from chronomem.communities import CommunityBuilder, CommunityConfig
from chronomem.communities.prompts import CommunityAbout, CommunityDescription, CommunityDescriptions, PartialSummary
from chronomem.domain import Entity, Fact
from chronomem.embed.testing import HashingEmbedder
from chronomem.llm.testing import FunctionModel
from chronomem.store import GraphWrite, Store, open_store

GROUP = "bench-communities"
WORDS = [
    "astronomy", "baking", "chess", "diving", "economics", "falconry", "geology", "harpsichord", "ikebana",
    "judo", "knitting", "linguistics", "mycology", "nursing", "origami", "poetry", "quilting", "rowing",
    "sculpture", "tennis", "urbanism", "violin", "winemaking", "xylography", "yoga", "zoology",
]


class TimedStore:
    """The store, with the time spent in each of its coroutines added up (to attribute costs)."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.seconds: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if not asyncio.iscoroutinefunction(attribute):
            return attribute

        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await attribute(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - started

        return timed


def report(name: str, value: object) -> None:
    print(f"{name}: {value}", flush=True)


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- the synthetic group ----------------------------------------------------------------------------


def planted_group(entities: int, facts: int, noise: float, seed: int) -> tuple[list[int], list[tuple[int, int]]]:
    """Community of every entity, and the facts as (a, b) index pairs."""
    rng = np.random.default_rng(seed)
    sizes: list[int] = []
    while sum(sizes) < entities:
        sizes.append(int(rng.integers(8, 61)))
    sizes[-1] -= sum(sizes) - entities
    if sizes[-1] < 2:
        sizes[-2] += sizes.pop()
    community = np.repeat(np.arange(len(sizes)), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    a = rng.integers(0, entities, facts)
    c = community[a]
    inside = starts[c] + (rng.random(facts) * np.asarray(sizes)[c]).astype(np.int64)
    b = np.where(rng.random(facts) < noise, rng.integers(0, entities, facts), inside)
    keep = a != b
    return community.tolist(), list(zip(a[keep].tolist(), b[keep].tolist(), strict=True))


def topic(community: int) -> str:
    return f"{WORDS[community % len(WORDS)]} {community // len(WORDS)}"


async def load_group(store: Store, community: list[int], pairs: list[tuple[int, int]]) -> None:
    entities = [
        Entity(id=f"e{i:06d}", group_id=GROUP, name=f"entity {i}", summary=f"Entity {i} is into {topic(c)}.")
        for i, c in enumerate(community)
    ]
    await store.write(GraphWrite(GROUP, entities=entities))
    for start in range(0, len(pairs), 10_000):
        facts = [
            Fact(group_id=GROUP, source_id=f"e{a:06d}", target_id=f"e{b:06d}", fact=f"entity {a} meets entity {b}")
            for a, b in pairs[start : start + 10_000]
        ]
        await store.write(GraphWrite(GROUP, facts=facts))


# -- quality against the planted partition ----------------------------------------------------------


def nmi(truth: list[int], found: list[int]) -> float:
    """Normalized mutual information (arithmetic mean normalisation)."""
    n = len(truth)
    joint = Counter(zip(truth, found, strict=True))
    pt, pf = Counter(truth), Counter(found)
    mutual = sum(k / n * np.log(k * n / (pt[t] * pf[f])) for (t, f), k in joint.items())
    ht = -sum(k / n * np.log(k / n) for k in pt.values())
    hf = -sum(k / n * np.log(k / n) for k in pf.values())
    return float(2 * mutual / (ht + hf)) if ht + hf else 1.0


def quality(community: list[int], built: list[Any]) -> tuple[float, float]:
    found = [-(i + 1) for i in range(len(community))]  # unassigned entities are singletons
    for k, c in enumerate(built):
        for member in c.member_ids:
            found[int(member[1:])] = k
    planted: dict[int, set[int]] = {}
    for i, c in enumerate(community):
        planted.setdefault(c, set()).add(i)
    exact = {frozenset(int(m[1:]) for m in c.member_ids) for c in built}
    return nmi(community, found), sum(frozenset(m) in exact for m in planted.values()) / len(planted)


# -- the scripted model -----------------------------------------------------------------------------


def scripted(prompt: Any, context: Any) -> Any:
    """Topic = the most common topic among the members' summaries."""

    def about(members: Any) -> tuple[str, list[str]]:
        words = Counter(m.summary.split(" is into ")[-1].rstrip(".") for m in members if " is into " in m.summary)
        best = words.most_common(1)[0][0] if words else "newcomers"
        return f"{len(members)} entities into {best}.", [best, best.split()[0]]

    if prompt.name == "community_summarize":
        answers = [CommunityDescription(key=c.key, summary=about(c.members)[0], topics=about(c.members)[1])
                   for c in context.communities]
        return CommunityDescriptions(communities=answers)
    if prompt.name == "community_update":
        answers = [CommunityDescription(key=c.key, summary=c.summary, topics=about(c.added)[1])
                   for c in context.changes]
        return CommunityDescriptions(communities=answers)
    if prompt.name == "community_map":
        return PartialSummary(summary=about(context.members)[0])
    if prompt.name == "community_reduce":
        return CommunityAbout(summary=" ".join(context.summaries)[:600], topics=["combined"])
    raise AssertionError(prompt.name)


# -- the stages -------------------------------------------------------------------------------------


async def full_builds(store: Store, community: list[int]) -> None:
    embedder = HashingEmbedder()
    builder = CommunityBuilder(store, embedder)
    started = time.perf_counter()
    built = await builder.build(GROUP)
    report("lp_full_build_s", round(time.perf_counter() - started, 3))
    assert builder.last_build is not None
    report("lp_detect_s", round(builder.last_build.detect_s, 3))
    report("lp_rounds", builder.last_build.rounds)
    report("lp_converged", builder.last_build.converged)
    report("communities", len(built))
    report("planted_communities", len(set(community)))
    report("unassigned_entities", builder.last_build.unassigned)
    planted_nmi, exact = quality(community, built)
    report("planted_nmi", round(planted_nmi, 4))
    report("planted_exact_ratio", round(exact, 4))

    model = FunctionModel(scripted, model_name="scripted")
    summarizing = CommunityBuilder(store, embedder, model)
    started = time.perf_counter()
    await summarizing.build(GROUP, resummarize=True)
    report("full_build_with_summaries_s", round(time.perf_counter() - started, 3))
    report("summary_model_calls", len(model.calls))
    report("summary_model_calls_per_community", round(len(model.calls) / max(len(built), 1), 3))
    calls = len(model.calls)
    started = time.perf_counter()
    await summarizing.build(GROUP)
    report("refresh_unchanged_s", round(time.perf_counter() - started, 3))
    report("refresh_unchanged_model_calls", len(model.calls) - calls)


def newcomers(count: int, community: list[int], seed: int) -> list[tuple[Entity, list[Fact], int]]:
    rng = random.Random(seed)
    members: dict[int, list[int]] = {}
    for i, c in enumerate(community):
        members.setdefault(c, []).append(i)
    made = []
    for k in range(count):
        home = rng.randrange(len(members))
        summary = f"Newcomer {k} likes {topic(home)}."
        entity = Entity(id=f"new{k:05d}", group_id=GROUP, name=f"newcomer {k}", summary=summary)
        targets = [f"e{i:06d}" for i in rng.sample(members[home], min(rng.randint(2, 6), len(members[home])))]
        if k and rng.random() < 0.3:
            targets.append(f"new{k - 1:05d}")
        facts = [
            Fact(group_id=GROUP, source_id=entity.id, target_id=t, fact=f"{entity.name} knows {t}") for t in targets
        ]
        made.append((entity, facts, home))
    return made


async def extension(store: Store, community: list[int], count: int, batch: int) -> None:
    arrivals = newcomers(count, community, seed=11)
    timed_store = TimedStore(store)
    config = CommunityConfig(refresh_threshold=0.2)
    builder = CommunityBuilder(cast(Store, timed_store), HashingEmbedder(), config=config)
    await builder.build(GROUP)
    timed_store.seconds.clear()
    placed_home: dict[str, int] = {}
    timed = 0.0
    for start in range(0, len(arrivals), batch):
        episode = arrivals[start : start + batch]
        facts = [f for _, fs, _ in episode for f in fs]
        await store.write(GraphWrite(GROUP, entities=[e for e, _, _ in episode], facts=facts))
        t0 = time.perf_counter()
        result = await builder.extend(GROUP, [e.id for e, _, _ in episode])
        timed += time.perf_counter() - t0
        placed_home.update(result.assigned)
    report("dynamic_extension_ms", round(timed * 1000 / len(arrivals), 3))
    report("dynamic_extension_batch", batch)
    for call, seconds in sorted(timed_store.seconds.items()):  # where that time went, per entity
        report(f"dynamic_extension_store_{call}_ms", round(seconds * 1000 / len(arrivals), 3))
    stored = {c.id: c for c in await store.list_communities(GROUP)}
    correct = 0
    for entity, _, home in arrivals:
        community_id = placed_home.get(entity.id)
        if community_id is not None:
            members = [int(m[1:]) for m in stored[community_id].member_ids if m.startswith("e")]
            correct += Counter(community[m] for m in members).most_common(1)[0][0] == home
    report("extension_placed_correctly", round(correct / len(arrivals), 4))
    report("drift_after_extension", round(await builder.drift(GROUP), 4))
    report("measured_drift_after_extension", round(await builder.measure_drift(GROUP), 4))

    singles = newcomers(50, community, seed=12)
    timed = 0.0
    for entity, facts, _ in singles:
        entity = entity.model_copy(update={"id": "single-" + entity.id})
        facts = [f.model_copy(update={"source_id": entity.id}) for f in facts if not f.target_id.startswith("new")]
        await store.write(GraphWrite(GROUP, entities=[entity], facts=facts))
        t0 = time.perf_counter()
        await builder.extend(GROUP, [entity.id])
        timed += time.perf_counter() - t0
    report("dynamic_extension_single_ms", round(timed * 1000 / len(singles), 3))

    t0 = time.perf_counter()
    refreshed = await builder.maybe_refresh(GROUP)
    report("maybe_refresh_s", round(time.perf_counter() - t0, 3))
    report("refreshed", refreshed)
    report("drift_after_refresh", round(await builder.drift(GROUP), 4))


async def extension_calls(store: Store, community: list[int], batch: int) -> None:
    model = FunctionModel(scripted, model_name="scripted")
    builder = CommunityBuilder(store, HashingEmbedder(), model)
    await builder.build(GROUP)
    before, episodes = len(model.calls), 0
    arrivals = newcomers(10 * batch, community, seed=13)
    for start in range(0, len(arrivals), batch):
        episode = [(e.model_copy(update={"id": "m-" + e.id}), fs) for e, fs, _ in arrivals[start : start + batch]]
        facts = [
            f.model_copy(update={"source_id": e.id})
            for e, fs in episode
            for f in fs
            if not f.target_id.startswith("new")
        ]
        await store.write(GraphWrite(GROUP, entities=[e for e, _ in episode], facts=facts))
        await builder.extend(GROUP, [e.id for e, _ in episode])
        episodes += 1
    report("extension_model_calls_per_episode", round((len(model.calls) - before) / episodes, 3))


async def main(args: argparse.Namespace) -> None:
    community, pairs = planted_group(args.entities, args.facts, args.noise, args.seed)
    with tempfile.TemporaryDirectory(prefix="chronomem-bench-communities-") as tmp:
        store = await open_store(f"sqlite:///{Path(tmp) / 'bench.db'}")
        try:
            started = time.perf_counter()
            await load_group(store, community, pairs)
            report("entities", len(community))
            report("facts", len(pairs))
            report("load_s", round(time.perf_counter() - started, 2))
            progress("loaded; full builds")
            await full_builds(store, community)
            progress("dynamic extension")
            await extension(store, community, args.new, args.batch)
            await extension_calls(store, community, args.batch)
        finally:
            await store.close()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=20_000)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--noise", type=float, default=0.1, help="share of facts between random entities")
    parser.add_argument("--new", type=int, default=500, help="entities arriving after the build")
    parser.add_argument("--batch", type=int, default=5, help="new entities per episode (per extend call)")
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
