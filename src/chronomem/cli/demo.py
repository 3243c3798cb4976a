"""``chronomem demo``: ingest a bundled sample and ask it a few questions (the lead wires ``make demo``).

The sample has two parts, both with values that change over time:

- a multi-session conversation between Maya and an assistant (message episodes): a job change, a
  move, a new dog;
- a stream of JSON CRM records about customer accounts (JSON episodes), mapped to entities and facts
  by a declared :class:`~chronomem.ingest.JsonMapping`: account managers, plans and headquarters
  change, and single-valued relations retire the previous value without any model.

With a language model the conversation becomes a graph too; without one its episodes are stored and
searchable (``unextracted``) and the demo says how to configure a model. For each question it prints
the context block, the current facts, and what was true at an earlier date.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from chronomem.config.settings import Settings
from chronomem.domain import Episode, EpisodeKind, EpisodeStatus, Fact
from chronomem.filters import SearchFilters
from chronomem.ingest import EntitySpec, FactSpec, IngestResult, JsonMapping, Ontology
from chronomem.memory import Chronomem
from chronomem.store.base import Scope
from chronomem.timeutil import assume_utc

if TYPE_CHECKING:
    from chronomem.embed.base import Embedder
    from chronomem.llm.base import LanguageModel

__all__ = ["CONVERSATION", "CRM_MAPPING", "CRM_RECORDS", "QUESTIONS", "DemoQuestion", "run_demo", "sample_episodes"]

CONVERSATION_GROUP = "demo-maya"
CRM_GROUP = "demo-crm"


def _t(text: str) -> datetime:
    return assume_utc(datetime.fromisoformat(text))


# (session time, speaker, text): three sessions, months apart
CONVERSATION: tuple[tuple[str, str, str], ...] = (
    ("2024-01-15T09:00", "Maya", "Hi! I'm Maya. I work as a data engineer at Acme Corp in Lisbon."),
    ("2024-01-15T09:01", "assistant", "Nice to meet you, Maya! How do you like working at Acme Corp?"),
    ("2024-01-15T09:02", "Maya", "I love the team, especially my manager Bob Lee, but the commute is long."),
    ("2024-05-02T18:30", "Maya", "Big news: I started a new job at Globex two weeks ago, as a platform engineer."),
    ("2024-05-02T18:31", "assistant", "Congratulations! What made you leave Acme Corp?"),
    ("2024-05-02T18:32", "Maya", "Globex lets me work remotely, so I moved from Lisbon to Porto last month."),
    ("2024-09-10T12:00", "Maya", "We adopted a dog named Pixel yesterday! My partner Ana chose the name."),
    ("2024-09-10T12:01", "assistant", "Pixel is a great name. How is Pixel settling in in Porto?"),
    ("2024-09-10T12:02", "Maya", "Pixel loves the beach near our flat. Ana walks him every morning."),
)

# CRM export: one record per account change, in time order
CRM_RECORDS: tuple[dict[str, object], ...] = (
    {"account": "Initech", "plan": "starter", "manager": "Dana Cruz", "hq": "Austin", "updated_at": "2024-01-10"},
    {"account": "Umbrella", "plan": "enterprise", "manager": "Evan Wu", "hq": "Boston", "updated_at": "2024-01-20"},
    {"account": "Initech", "plan": "growth", "manager": "Dana Cruz", "hq": "Austin", "updated_at": "2024-03-05"},
    {"account": "Initech", "plan": "growth", "manager": "Farah Ali", "hq": "Austin", "updated_at": "2024-06-01"},
    {"account": "Umbrella", "plan": "enterprise", "manager": "Evan Wu", "hq": "Chicago", "updated_at": "2024-07-15"},
    {"account": "Initech", "plan": "enterprise", "manager": "Farah Ali", "hq": "Denver", "updated_at": "2024-10-01"},
)

CRM_MAPPING = JsonMapping(
    name="crm-accounts",
    source_description="crm",
    entities=(
        EntitySpec(key="account", name="account", label="Company"),
        EntitySpec(key="manager", name="manager", label="Person"),
        EntitySpec(key="hq", name="hq", label="City"),
        EntitySpec(key="plan", name="plan", label="Plan"),
    ),
    facts=(
        FactSpec(source="account", relation_type="MANAGED_BY", target="manager",
                 fact="{account}'s account manager is {manager}", valid_at="updated_at"),
        FactSpec(source="account", relation_type="HEADQUARTERED_IN", target="hq",
                 fact="{account} is headquartered in {hq}", valid_at="updated_at"),
        FactSpec(source="account", relation_type="SUBSCRIBES_TO", target="plan",
                 fact="{account} is on the {plan} plan", valid_at="updated_at"),
    ),
)

DEMO_ONTOLOGY = Ontology(single_valued=["MANAGED_BY", "HEADQUARTERED_IN", "SUBSCRIBES_TO", "WORKS_FOR", "LIVES_IN"])


@dataclass(frozen=True, slots=True)
class DemoQuestion:
    group_id: str
    question: str
    earlier: datetime  # what was true then


QUESTIONS: tuple[DemoQuestion, ...] = (
    DemoQuestion(CRM_GROUP, "Who manages the Initech account?", _t("2024-04-01")),
    DemoQuestion(CRM_GROUP, "Where is Umbrella headquartered?", _t("2024-03-01")),
    DemoQuestion(CONVERSATION_GROUP, "Where does Maya work and live?", _t("2024-02-01")),
    DemoQuestion(CONVERSATION_GROUP, "Who is Pixel?", _t("2024-06-01")),
)


def sample_episodes() -> list[Episode]:
    """The bundled sample as episodes, in time order per group (ids are stable: re-running is a no-op)."""
    episodes = [
        Episode(id=f"maya-{i}", group_id=CONVERSATION_GROUP, speaker=speaker, content=text,
                role="assistant" if speaker == "assistant" else "user", reference_time=_t(when),
                source_description="demo conversation")
        for i, (when, speaker, text) in enumerate(CONVERSATION)
    ]
    episodes += [
        Episode(id=f"crm-{i}", group_id=CRM_GROUP, kind=EpisodeKind.JSON, content=json.dumps(record),
                reference_time=_t(str(record["updated_at"])), source_description="crm")
        for i, record in enumerate(CRM_RECORDS)
    ]
    return episodes


async def run_demo(
    store_url: str | None = None,
    llm: LanguageModel | None = None,
    console: Console | None = None,
    *,
    embedder: Embedder | None = None,
    model_description: str | None = None,
) -> None:
    """Ingest the sample into ``store_url`` (default: in memory) and print the answers' material;
    ``model_description`` is how the model is named (default: as the memory knows it)."""
    from chronomem.embed.testing import HashingEmbedder

    console = console or Console()
    settings = Settings(store_url=store_url or "sqlite://:memory:")
    async with await Chronomem.open(
        settings, embedder=embedder or HashingEmbedder(), llm=llm, json_mappings=(CRM_MAPPING,), ontology=DEMO_ONTOLOGY
    ) as memory:
        console.print(f"Model: {model_description or memory.model_description}", highlight=False)
        results = await memory.add_episodes(sample_episodes(), progress=console.is_terminal)
        if llm is not None:  # a store filled by an earlier run without a model: extract what waits
            await memory.reprocess(CONVERSATION_GROUP)
        _print_ingestion(console, results, llm is not None)
        for question in QUESTIONS:
            await _answer(console, memory, question)


def _print_ingestion(console: Console, results: list[IngestResult], extracted: bool) -> None:
    statuses: dict[str, int] = {}
    for result in results:
        statuses[result.episode.status.value] = statuses.get(result.episode.status.value, 0) + 1
    calls = sum(r.usage.calls for r in results)
    console.print(f"[bold]Ingested {len(results)} episodes[/bold]: {statuses}; {calls} model calls.")
    if not extracted:
        console.print(
            "[yellow]No language model configured:[/yellow] the JSON records were mapped to a graph without one, "
            "and the conversation is stored and searchable but marked "
            f"[italic]{EpisodeStatus.UNEXTRACTED.value}[/italic].\n"
            "To build its graph too, configure a model (e.g. CHRONOMEM_LLM_MODEL=openai:gpt-4o-mini with "
            "OPENAI_API_KEY, or CHRONOMEM_LLM_MODEL=ollama:qwen2.5:7b; see docs/llm.md) and run `chronomem demo` "
            "again. `chronomem demo --model heuristic` runs the whole pipeline offline with a rule-based "
            "stand-in (not an LLM)."
        )


async def _answer(console: Console, memory: Chronomem, question: DemoQuestion) -> None:
    console.rule(f"[bold]{question.question}[/bold]  ({question.group_id})")
    console.print("[bold]Context block[/bold]")
    console.print(await memory.context(question.group_id, question.question, include_episodes=True))
    store = memory.store
    relevant = await _relevant_fact_ids(memory, question)
    current = [f for f in await store.list_facts(question.group_id, filters=SearchFilters()) if f.id in relevant]
    earlier = await store.list_facts(question.group_id, filters=SearchFilters(as_of=question.earlier))
    console.print(_facts_table("Current facts", current))
    console.print(_facts_table(f"True on {question.earlier.date()}", [f for f in earlier if f.id in relevant]))


async def _relevant_fact_ids(memory: Chronomem, question: DemoQuestion) -> set[str]:
    """Facts near the question (full text and vectors, superseded ones included, for the history)."""
    every = SearchFilters(include_superseded=True)
    store = memory.store
    (vector,) = await memory.embedder.embed([question.question])
    by_text = await store.fulltext_search(question.group_id, Scope.FACTS, question.question, limit=8, filters=every)
    by_vector = await store.vector_search(question.group_id, Scope.FACTS, vector, limit=8, filters=every)
    return {hit.id for hit in (*by_text, *by_vector)}


def _facts_table(title: str, facts: list[Fact]) -> Table:
    table = Table(title=title, title_justify="left", show_lines=False)
    for column in ("fact", "valid", "invalid", "expired"):
        table.add_column(column)
    for fact in sorted(facts, key=lambda f: (f.valid_at or f.created_at)):
        table.add_row(
            fact.fact,
            fact.valid_at.date().isoformat() if fact.valid_at else "-",
            fact.invalid_at.date().isoformat() if fact.invalid_at else "-",
            "yes" if fact.expired_at else "",
        )
    if not facts:
        table.add_row("(none)", "", "", "")
    return table
