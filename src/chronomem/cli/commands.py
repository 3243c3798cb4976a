"""The ``chronomem`` command line: a thin shell over the library (parse, call, render).

Every command reads ``Settings.from_env()`` and then the global options (``--data-dir``,
``--store``, ``--embedder``), so ``CHRONOMEM_*`` variables and flags mix. Commands that open the
memory import the library lazily: ``chronomem keys`` and ``--help`` load no model.
The reference page ``docs/cli.md`` is generated from this module (``chronomem docs-cli``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from chronomem.config.settings import Settings
from chronomem.errors import ChronomemError, InvalidInputError

if TYPE_CHECKING:
    from typer._click import Command, Parameter  # typer vendors click; its types live there

    from chronomem.controlplane import ControlPlane
    from chronomem.domain import Community, Entity, Episode, Fact
    from chronomem.embed.base import Embedder
    from chronomem.eval.qa import QaOptions
    from chronomem.ingest import IngestResult
    from chronomem.llm.base import LanguageModel
    from chronomem.memory import Chronomem
    from chronomem.search.searcher import SearchResults
    from chronomem.store.base import GroupStats
    from chronomem.store.factory import StoreTraits

__all__ = ["app", "main", "reference_markdown"]

T = TypeVar("T")

app = typer.Typer(
    name="chronomem",
    help="Memory for LLM agents on a bi-temporal knowledge graph.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
keys_app = typer.Typer(help="Create, list and revoke API keys (stored hashed, scoped to a project).",
                       no_args_is_help=True, rich_markup_mode=None)
app.add_typer(keys_app, name="keys")
ontology_app = typer.Typer(help="Show or replace a project's ontology (entity and edge types, signatures, "
                           "single-valued relations).", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(ontology_app, name="ontology")
mappings_app = typer.Typer(help="Show or replace a project's JSON mappings.", no_args_is_help=True,
                           rich_markup_mode=None)
app.add_typer(mappings_app, name="mappings")

console = Console()
err_console = Console(stderr=True)


# -- plumbing ----------------------------------------------------------------------------------------


@app.callback()
def _options(
    ctx: typer.Context,
    data_dir: Annotated[Path | None, typer.Option(help="Directory of the embedded store and control plane.")] = None,
    store: Annotated[str | None, typer.Option(help="Store URL, e.g. sqlite:///memory.db.")] = None,
    embedder: Annotated[str | None, typer.Option(help="Embedder spec: local, hashing, ...")] = None,
    config: Annotated[Path | None, typer.Option(
        help="TOML config file (default: $CHRONOMEM_CONFIG); see docs/configuration.md.")] = None,
) -> None:
    """Memory for LLM agents on a bi-temporal knowledge graph."""
    ctx.obj = {"data_dir": data_dir, "store": store, "embedder": embedder, "config": config}


def _settings(ctx: typer.Context, *, store: str | None = None) -> Settings:
    given = ctx.find_root().obj or {}
    with _clean_errors():
        settings = Settings.from_env(config_file=given.get("config"))
    changes: dict[str, Any] = {}
    if given.get("data_dir") is not None:
        changes["data_dir"] = given["data_dir"]
    if (store or given.get("store")) is not None:
        changes["store_url"] = store or given["store"]
    if given.get("embedder") is not None:
        changes["embedder"] = given["embedder"]
    return replace(settings, **changes)


@contextmanager
def _clean_errors() -> Iterator[None]:
    """Library errors become one clean line on stderr and exit status 1."""
    try:
        yield
    except ChronomemError as exc:
        err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)  # "[ingest]" is not markup
        raise typer.Exit(1) from None


def _run(coro: Coroutine[Any, Any, T]) -> T:
    with _clean_errors():
        return asyncio.run(coro)


def _traits(settings: Settings) -> StoreTraits:
    """What the configured store's backend allows, learnt from its URL without opening it."""
    from chronomem.store.factory import store_traits

    with _clean_errors():
        return store_traits(settings.resolved_store_url)


async def _with_memory(
    settings: Settings, work: Callable[[Chronomem], Awaitable[T]], *, llm: LanguageModel | None = None
) -> T:
    from chronomem.memory import Chronomem

    async with await Chronomem.open(settings, llm=llm) as memory:
        return await work(memory)


ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="'heuristic' runs the whole pipeline offline with the rule-based stand-in (not an LLM); 'local' "
        "the packaged Qwen2.5-Coder-1.5B-Instruct (chronomem[local-model]), also offline; otherwise the "
        "model configured by CHRONOMEM_LLM_MODEL, if any.",
    ),
]


def _stand_in_model(model: str | None) -> LanguageModel | None:
    """The model ``--model`` names instead of the configured one: the heuristic stand-in, or the
    packaged local model (``local``, ``local:qwen2.5-coder-0.5b``), which runs offline."""
    if model is None:
        return None
    if model == "heuristic":
        from chronomem.heuristic import heuristic_model

        return heuristic_model()
    if model == "local" or model.startswith("local:"):
        from chronomem.llm.settings import LLMSettings, build_language_model

        with _clean_errors():
            return build_language_model(LLMSettings(model=model))
    raise typer.BadParameter(
        "only 'heuristic' and 'local[:name]' are accepted here; configure other models with CHRONOMEM_LLM_MODEL"
    )


@contextmanager
def _control(ctx: typer.Context) -> Iterator[ControlPlane]:
    from chronomem.controlplane import open_control_plane

    control = open_control_plane(_settings(ctx))
    try:
        yield control
    finally:
        control.close()


def _when(text: str | None) -> datetime | None:
    if text is None:
        return None
    from chronomem.timeutil import parse_instant

    try:
        return parse_instant(text)
    except InvalidInputError as exc:
        raise typer.BadParameter(str(exc)) from None


# -- serving -----------------------------------------------------------------------------------------


StoreOption = Annotated[
    str | None,
    typer.Option("--store", help="Store URL for this command (e.g. falkordb://host:6379); wins over the global one."),
]


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    workers: Annotated[bool | None, typer.Option(
        help="Run ingestion workers in this process (default: yes, or CHRONOMEM_INPROCESS_WORKERS).")] = None,
    processes: Annotated[int, typer.Option(
        min=1, help="Server processes sharing the port (on SQLite: with --no-workers, beside one worker).")] = 1,
    store: StoreOption = None,
) -> None:
    """Serve the HTTP API (OpenAPI at /docs) with in-process ingestion workers."""
    from chronomem.service.app import create_app, serve_app, serve_processes

    settings = _settings(ctx, store=store)
    if workers is not None:
        settings = replace(settings, workers=replace(settings.workers, in_process=workers))
    _say_model(settings)
    if processes == 1:
        _configure_telemetry(settings)
        _run_server(serve_app(create_app(settings), host=host, port=port))
        return
    if settings.workers.in_process and _traits(settings).single_queue_consumer:
        # Every process would start workers, and one process consumes this store's queue.
        raise typer.BadParameter("this store's queue takes one consumer process: several server processes "
                                 "need --no-workers (run one `chronomem worker` beside them)")
    serve_processes(settings, host=host, port=port, processes=processes)


@app.command()
def ui(
    ctx: typer.Context,
    port: Annotated[int, typer.Option(help="TCP port on 127.0.0.1.")] = 8765,
    open_browser: Annotated[bool, typer.Option("--open/--no-open", help="Open the page in a web browser.")] = True,
    store: StoreOption = None,
) -> None:
    """Explore the memory in a web browser: the explorer on 127.0.0.1, without API keys (local use).

    Besides the users and graphs of the project 'default' it opens the store's raw groups (those
    written by the library and the CLI). Serve others with 'chronomem serve' and keys instead.
    """
    from chronomem.service.app import create_app, serve_app
    from chronomem.service.routers.explorer import serve_raw_groups

    settings = replace(_settings(ctx, store=store), auth_required=False)
    explorer = create_app(settings)
    serve_raw_groups(explorer)
    url = f"http://127.0.0.1:{port}/ui/"
    err_console.print(f"explorer at {url} (loopback only, no API key; Ctrl-C to stop)", highlight=False)
    console.print(url, markup=False, highlight=False)
    if open_browser:
        import threading
        import webbrowser

        threading.Timer(1.0, webbrowser.open, args=(url,)).start()  # once the server listens
    _run_server(serve_app(explorer, host="127.0.0.1", port=port, log_level="warning"))


def _run_server(coro: Coroutine[Any, Any, None]) -> None:
    """Serve on uvloop when it is installed (``uvicorn[standard]``): cheaper I/O under load."""
    try:
        import uvloop
    except ImportError:
        _run(coro)
        return
    with _clean_errors():
        uvloop.run(coro)


@app.command()
def worker(
    ctx: typer.Context,
    shard: Annotated[str, typer.Option(help="This worker's share of the groups, i/n (e.g. 0/2).")] = "0/1",
    concurrency: Annotated[int | None, typer.Option(help="Groups processed at once.")] = None,
    metrics_port: Annotated[int | None, typer.Option(
        help="Serve Prometheus /metrics on this port (default: telemetry.worker_metrics_port; 0: none).")] = None,
    metrics_host: Annotated[str, typer.Option(help="Interface of /metrics.")] = "127.0.0.1",
    store: StoreOption = None,
) -> None:
    """Process queued episodes until stopped (run the server with --no-workers)."""
    from chronomem.app.workers import Shard, run_until_stopped

    settings = _settings(ctx, store=store)
    if concurrency is not None:
        settings = replace(settings, workers=replace(settings.workers, concurrency=concurrency))
    try:
        part = Shard.parse(shard)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if part.count > 1 and not _traits(settings).supports_shards:
        # One process consumes this store's queue (it runs groups in parallel: --concurrency).
        raise typer.BadParameter("this store's queue takes one worker process: leave --shard at 0/1")
    port = settings.telemetry.worker_metrics_port if metrics_port is None else metrics_port
    _configure_telemetry(settings)

    async def work(memory: Chronomem) -> None:
        from chronomem.app.project_config import ProjectProfiles
        from chronomem.controlplane import open_control_plane

        control = open_control_plane(settings)
        memory.use_group_profiles(ProjectProfiles(control))  # each project's ontology and mappings
        try:
            pool = await run_until_stopped(
                memory, shard=part, metrics_port=port or None, metrics_host=metrics_host,
                on_ready=lambda: err_console.print(f"worker {part.index}/{part.count} running "
                                                   f"(model: {memory.model_description}); Ctrl-C to stop"),
            )
        finally:
            control.close()
        err_console.print(f"processed {pool.processed}, failed {pool.failed}")

    _run(_with_memory(settings, work))


def _configure_telemetry(settings: Settings) -> None:
    """A serving process applies its telemetry settings: prices, tracing, JSON logs."""
    from chronomem.telemetry import configure

    with _clean_errors():
        configure(settings.telemetry)


def _say_model(settings: Settings) -> None:
    """Every long-running command says which model extracts (the stand-in: that it is not an LLM)."""
    from chronomem.heuristic import describe_model

    err_console.print(f"model: {describe_model(settings.llm.model if settings.llm else None)}", highlight=False)


@app.command("mcp")
def mcp_command(
    ctx: typer.Context,
    transport: Annotated[str, typer.Option(help="stdio or http (streamable HTTP).")] = "stdio",
    host: Annotated[str, typer.Option(help="Interface to bind (http).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (http).")] = 8001,
    group: Annotated[str, typer.Option(help="Group used when a tool call names none.")] = "default",
    project: Annotated[str, typer.Option(help="Project whose users, threads and context templates the "
                                               "summary and template tools serve (created if new).")] = "default",
) -> None:
    """Serve the MCP tools (add memory, search, context, episodes, delete, task status, summaries,
    context templates)."""
    from chronomem.mcp_server import run_mcp

    if transport not in ("stdio", "http"):
        raise typer.BadParameter("transport must be stdio or http")
    settings = _settings(ctx)
    _say_model(settings)  # stderr: stdout is the stdio transport
    run_mcp(settings, transport=transport, host=host, port=port, default_group=group,  # type: ignore[arg-type]
            project=project)


# -- writing -----------------------------------------------------------------------------------------


@app.command()
def add(
    ctx: typer.Context,
    group: Annotated[str, typer.Argument(help="Group (graph) id.")],
    content: Annotated[str, typer.Argument(help="The message or text.")],
    kind: Annotated[str, typer.Option(help="message, text or json.")] = "message",
    speaker: Annotated[str | None, typer.Option(help="Who said it (messages).")] = None,
    at: Annotated[str | None, typer.Option(help="When it was said or happened (ISO 8601).")] = None,
    source: Annotated[str, typer.Option(help="Source description.")] = "",
    model: ModelOption = None,
) -> None:
    """Add one episode and extract it now; prints the entities and facts it added or changed."""
    reference_time = _when(at)
    llm = _stand_in_model(model)
    result = _run(_with_memory(_settings(ctx), lambda m: m.add_episode(
        group, content, kind=kind, speaker=speaker, reference_time=reference_time, source_description=source), llm=llm))
    _print_ingest(result)


def _print_ingest(result: IngestResult) -> None:
    episode = result.episode
    done = "already added, nothing changed" if result.skipped else f"{result.usage.calls} model calls"
    _say(f"episode {episode.id}: {episode.status.value} ({done})")
    if episode.status.value == "unextracted":
        _say("no model configured: the episode is stored and searchable; set CHRONOMEM_LLM_MODEL and run "
             "`chronomem reprocess` to extract it")
    for title, entities in (("entities created", result.entities_created),
                            ("entities updated", result.entities_updated)):
        if entities:
            _say(f"{title}: {', '.join(e.name for e in entities)}")
    for title, facts in (("facts created", result.facts_created), ("facts restated", result.facts_updated),
                         ("facts invalidated", result.facts_invalidated)):
        if facts:
            _say(f"{title}:")
            for fact in facts:
                _say(f"  {fact.relation_type}: {fact.fact} ({_day(fact.valid_at)} – {_day(fact.invalid_at)})")
    for warning in result.warnings:
        err_console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)


def _say(line: str) -> None:
    """One line of plain output: no markup read from the data, no wrapping."""
    console.print(line, markup=False, highlight=False, soft_wrap=True)


@app.command("add-fact")
def add_fact(
    ctx: typer.Context,
    group: Annotated[str, typer.Argument(help="Group (graph) id.")],
    source: Annotated[str, typer.Argument(help="Source entity name.")],
    relation: Annotated[str, typer.Argument(help="Relation type, e.g. WORKS_AT.")],
    target: Annotated[str, typer.Argument(help="Target entity name.")],
    fact: Annotated[str, typer.Argument(help="The fact in words.")],
    valid_at: Annotated[str | None, typer.Option(help="When it became true (ISO 8601).")] = None,
    invalid_at: Annotated[str | None, typer.Option(help="When it stopped being true (ISO 8601).")] = None,
) -> None:
    """Add a fact triple with timestamps (no model involved)."""
    valid, invalid = _when(valid_at), _when(invalid_at)
    added = _run(_with_memory(_settings(ctx), lambda m: m.add_fact(
        group, source, relation, target, fact, valid_at=valid, invalid_at=invalid)))
    console.print(f"fact {added.id}: {added.fact}")


@app.command("import")
def import_command(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="File to read.", exists=True, dir_okay=False)],
    fmt: Annotated[str, typer.Option("--format", help="messages (JSONL), locomo, longmemeval or export.")]
    = "messages",
    group: Annotated[str | None, typer.Option(help="Target group (messages, export) or group-id prefix.")] = None,
    queue: Annotated[bool, typer.Option(help="Only queue the episodes for workers.")] = False,
    reembed: Annotated[bool, typer.Option(help="export: embed again with this embedder.")] = False,
) -> None:
    """Import conversations (JSONL messages, LoCoMo, LongMemEval) or a whole exported group."""
    if fmt == "export":
        from chronomem.archive import read_export

        with _clean_errors():
            export = read_export(path.read_bytes())
        stats = _run(_with_memory(_settings(ctx), lambda m: m.import_group(export, group_id=group, reembed=reembed)))
        console.print(f"imported {stats.episodes} episodes, {stats.entities} entities, {stats.facts} facts")
        return
    from chronomem.app.conversation_import import FORMATS, import_episodes, read_episodes

    if fmt not in FORMATS:
        raise typer.BadParameter(f"--format must be one of {', '.join((*FORMATS, 'export'))}")
    with _clean_errors():
        episodes = read_episodes(path, fmt, group_id=group)  # type: ignore[arg-type]
    counts = _run(_with_memory(_settings(ctx), lambda m: import_episodes(m, episodes, queue=queue, progress=True)))
    _say(f"{'queued' if queue else 'ingested'} {counts.added} new episodes into {counts.groups} group(s); "
         f"{counts.already_present} were already there")


@app.command()
def export(
    ctx: typer.Context,
    group: Annotated[str, typer.Argument(help="Group (graph) id.")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")] = None,
) -> None:
    """Export a whole group (episodes, entities, facts, mentions, communities, vectors) as JSON."""
    data = _run(_with_memory(_settings(ctx), lambda m: m.export_group(group)))
    text = data.model_dump_json()
    if output is None:
        sys.stdout.write(text + "\n")
    else:
        output.write_text(text + "\n", encoding="utf-8")
        err_console.print(f"wrote {len(data.episodes)} episodes, {len(data.facts)} facts to {output}")


@app.command()
def backup(
    ctx: typer.Context,
    destination: Annotated[Path, typer.Argument(help="A new (or empty) directory for the backup.")],
) -> None:
    """Back up the store and its control plane while they serve, with a manifest of checksums: the
    embedded store's files (SQLite's online backup), or one snapshot per FalkorDB shard. Restore with
    `chronomem restore`."""
    from chronomem.app.backup import backup as make_backup

    with _clean_errors():
        report = make_backup(_settings(ctx), destination)
    _say_backup(report, "backed up")


@app.command()
def restore(
    ctx: typer.Context,
    source: Annotated[Path, typer.Argument(help="A directory written by `chronomem backup`.")],
    check: Annotated[bool, typer.Option("--check", help="Only verify the backup; write nothing.")] = False,
    falkordb_dir: Annotated[Path | None, typer.Option(
        help="FalkorDB backup: a new directory for the servers' data (a cluster: node-<port> per node).")] = None,
    port: Annotated[int | None, typer.Option(
        help="FalkorDB cluster backup: the first port of the restored nodes (one port per shard from it).")] = None,
) -> None:
    """Restore a backup into a fresh data directory (--data-dir), after checking every file against
    its manifest (size, SHA-256, integrity); a damaged backup is refused and nothing is written.
    A FalkorDB backup becomes server data directories (--falkordb-dir) to start the servers on."""
    from chronomem.app.backup import restore as restore_backup
    from chronomem.app.backup import verify

    with _clean_errors():
        report = verify(source) if check else restore_backup(source, _settings(ctx), falkordb_dir=falkordb_dir,
                                                             first_port=port)
    _say_backup(report, "checked" if check else "restored")


def _say_backup(report: Any, done: str) -> None:
    for file in report.files:
        rows = ", ".join(f"{n} {c}" for n, c in file.tables.items() if c and not n.startswith(("fts", "index_log")))
        if file.slots:
            rows = "slots " + " ".join(f"{a}-{b}" for a, b in file.slots) + (", control plane" if file.control else "")
        err_console.print(f"  {file.name} ({file.role}): {file.bytes:,} bytes, sha256 {file.sha256[:12]}…; {rows}",
                          highlight=False, markup=False)
    console.print(f"{done} {report.directory} ({report.total_bytes:,} bytes, made {report.created_at.isoformat()}) "
                  f"in {report.seconds:.2f} s", highlight=False, markup=False)


@app.command()
def reprocess(
    ctx: typer.Context,
    group: Annotated[str, typer.Argument(help="Group (graph) id.")],
) -> None:
    """Extract a group again from its episodes (e.g. after configuring a model)."""
    with err_console.status(f"reprocessing {group}…"):
        count = _run(_with_memory(_settings(ctx), lambda m: m.reprocess(group)))
    console.print(f"reprocessed {count} episodes of {group}")


@app.command()
def communities(
    ctx: typer.Context,
    group: Annotated[str, typer.Argument(help="Group (graph) id.")],
) -> None:
    """Rebuild a group's communities from scratch."""
    result = _run(_with_memory(_settings(ctx), lambda m: m.build_communities(group)))
    console.print(f"communities of {group}: {result}")


# -- reading -----------------------------------------------------------------------------------------


@app.command()
def search(
    ctx: typer.Context,
    group: Annotated[str, typer.Argument(help="Group (graph) id.")],
    query: Annotated[str, typer.Argument(help="What to look for.")],
    recipe: Annotated[str, typer.Option(help="Search recipe, e.g. hybrid_rrf, hybrid_mmr, episodes_only.")]
    = "hybrid_rrf",
    limit: Annotated[int, typer.Option(help="Results per scope.")] = 10,
    as_of: Annotated[str | None, typer.Option(help="Facts true at this time (ISO 8601).")] = None,
    known_at: Annotated[str | None, typer.Option(help="Facts we knew at this time (ISO 8601).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Search facts, entities, episodes and communities of a group."""
    from chronomem.filters import SearchFilters
    from chronomem.search.config import recipe as named_recipe

    when, known = _when(as_of), _when(known_at)
    filters = SearchFilters(as_of=when, known_at=known) if when or known else None
    with _clean_errors():
        config = named_recipe(recipe).with_limit(limit)
        fallback = named_recipe("episodes_only").with_limit(limit)

    async def work(memory: Chronomem) -> tuple[SearchResults, str | None]:
        from chronomem.app.groups import GroupOperations

        groups = GroupOperations(memory)  # the search the HTTP API and the MCP server run
        results = await groups.search([group], query, config=config, filters=filters)
        if results.facts or results.entities or results.episodes or results.communities:
            return results, None
        why = await _why_nothing(memory, group)
        if recipe != "episodes_only":
            results = await groups.search([group], query, config=fallback, filters=filters)
            if results.episodes:
                return results, f"{why}; showing matching episodes (--recipe episodes_only)"
        return results, why

    results, note = _run(_with_memory(_settings(ctx), work))
    if note:
        err_console.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    scopes: dict[str, list[tuple[Fact | Entity | Episode | Community, float]]] = {
        "facts": list(results.facts), "entities": list(results.entities), "episodes": list(results.episodes),
        "communities": list(results.communities),
    }
    if as_json:
        console.print_json(json.dumps({
            name: [{**obj.model_dump(mode="json"), "score": score} for obj, score in hits]
            for name, hits in scopes.items()
        }))
        return
    for name, hits in scopes.items():
        if hits:
            console.print(_table(name, hits))


async def _why_nothing(memory: Chronomem, group: str) -> str:
    """Why a search of ``group`` found no fact or entity, in words for the person who asked."""
    from chronomem.domain import EpisodeStatus

    waiting = await memory.list_episodes(group, statuses=[
        EpisodeStatus.UNEXTRACTED, EpisodeStatus.PENDING, EpisodeStatus.PROCESSING, EpisodeStatus.FAILED])
    if waiting:
        return (f"nothing extracted matched: {len(waiting)} episode(s) of {group!r} are not extracted yet "
                "(no model configured, still queued, or failed; see `chronomem reprocess`)")
    if not await memory.list_episodes(group, limit=1):
        return f"group {group!r} holds no episodes"
    return "nothing in the group matched the query"


def _table(name: str, hits: list[tuple[Fact | Entity | Episode | Community, float]]) -> Table:
    from chronomem.domain import Episode, Fact

    table = Table(title=name, title_justify="left")
    table.add_column("score", justify="right")
    table.add_column("id")
    table.add_column("text")
    table.add_column("valid", overflow="fold")
    for obj, score in hits:
        valid = ""
        if isinstance(obj, Fact):
            text, valid = obj.fact, f"{_day(obj.valid_at)} – {_day(obj.invalid_at)}"
        elif isinstance(obj, Episode):
            text = obj.text
        else:  # an entity or a community
            text = obj.name
        table.add_row(f"{score:.3f}", obj.id[:12], text, valid)
    return table


def _day(moment: datetime | None) -> str:
    return moment.date().isoformat() if moment else "…"


@app.command()
def context(
    ctx: typer.Context,
    group: Annotated[str, typer.Argument(help="Group (graph) id.")],
    query: Annotated[str, typer.Argument(help="The question the context is for.")],
) -> None:
    """Print the context block (the paper's template) for a query, exactly as an agent gets it."""

    async def work(memory: Chronomem) -> tuple[str, str | None]:
        from chronomem.app.groups import GroupOperations

        groups = GroupOperations(memory)  # the context block the HTTP API and the MCP server build
        block = await groups.context([group], query)
        if block.strip():
            return block, None
        why = await _why_nothing(memory, group)
        block = await groups.context([group], query, include_episodes=True)
        return block, (f"{why}; the block shows matching episodes instead" if block.strip() else why)

    block, note = _run(_with_memory(_settings(ctx), work))
    if note:
        err_console.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
    if block:
        sys.stdout.write(block + "\n")  # verbatim: the text an agent gets, not wrapped to the terminal


@app.command()
def groups(ctx: typer.Context) -> None:
    """List the groups that hold data, with their counts."""

    async def work(memory: Chronomem) -> list[tuple[str, GroupStats]]:
        return [(g, await memory.stats(g)) for g in await memory.list_groups()]

    table = Table("group", "episodes", "entities", "facts", "current facts", "communities")
    for group, stats in _run(_with_memory(_settings(ctx), work)):
        table.add_row(group, *(str(v) for v in (stats.episodes, stats.entities, stats.facts,
                                                 stats.current_facts, stats.communities)))
    console.print(table)


@app.command("eval")
def eval_command(
    ctx: typer.Context,
    locomo: Annotated[Path | None, typer.Option(help="LoCoMo file (locomo10.json).")] = None,
    longmemeval: Annotated[Path | None, typer.Option(help="LongMemEval file (.json or .json.gz).")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N conversations / questions.")] = None,
    folds: Annotated[int | None, typer.Option(
        min=2, help="Also choose the config on K-1 folds and report each metric out of fold (_oof)."
    )] = None,
    qa: Annotated[bool, typer.Option(
        "--qa", help="Answer the questions with a model from the context block and from the full conversation, "
        "graded by the benchmarks' rules (docs/evaluation.md)."
    )] = False,
    model: Annotated[str | None, typer.Option(
        help="QA: the reader ('local[:name]', provider:model, or 'lexical', an offline stand-in that is not a "
        "model); default: the configured model.")] = None,
    judge_model: Annotated[str | None, typer.Option(help="QA: the judge (default: the reader).")] = None,
    ingest_model: Annotated[str | None, typer.Option(
        help="QA: extract the conversations into a graph with this model first (slow; default: episodes).")] = None,
    types: Annotated[str | None, typer.Option(help="QA: comma-separated question types / LoCoMo categories.")] = None,
    sample: Annotated[int | None, typer.Option(help="QA: N questions drawn at random (with --seed).")] = None,
    seed: Annotated[int, typer.Option(help="QA: the sample's seed.")] = 0,
    max_conversation_tokens: Annotated[int | None, typer.Option(
        help="QA: only questions whose whole conversation is at most this long.")] = None,
    lme_oracle: Annotated[bool, typer.Option(help="QA: LongMemEval haystacks cut to their evidence sessions.")] = False,
    recipe: Annotated[str | None, typer.Option(help="QA: a search recipe for the context block.")] = None,
    template: Annotated[Path | None, typer.Option(help="QA: a file holding a context template.")] = None,
    token_budget: Annotated[int, typer.Option(help="QA: the context block's token budget.")] = 2000,
    full_context: Annotated[bool, typer.Option(help="QA: also answer from the full conversation.")] = True,
    context_window: Annotated[int | None, typer.Option(
        help="QA: the reader's window in tokens (default 8192 for the local model, else 128000).")] = None,
    price_in: Annotated[float | None, typer.Option(help="QA: USD per million input tokens.")] = None,
    price_out: Annotated[float | None, typer.Option(help="QA: USD per million output tokens.")] = None,
) -> None:
    """Run the retrieval evaluation on LoCoMo and/or LongMemEval and print name: value lines.

    With --folds K, weights are chosen on the other folds (LoCoMo: by conversation; LongMemEval: by
    question) and every metric is reported out of fold (_oof) beside in-sample (_in_sample) and BM25.
    With --qa, questions are answered and graded instead (--limit then counts questions)."""
    from chronomem.eval import run_eval

    if locomo is None and longmemeval is None:
        raise typer.BadParameter("give --locomo and/or --longmemeval")
    embedder = _chosen_embedder(ctx)
    if qa:
        from chronomem.eval.qa import QaOptions

        local = model is not None and (model == "local" or model.startswith("local:"))
        prices = (price_in or 0.0, price_out or 0.0) if price_in or price_out else None
        options = QaOptions(
            types=frozenset(t.strip() for t in (types or "").split(",") if t.strip()), limit=limit, sample=sample,
            seed=seed, max_conversation_tokens=max_conversation_tokens, lme_oracle=lme_oracle,
            token_budget=token_budget, recipe=recipe, template=template.read_text() if template is not None else None,
            full_context=full_context, context_window=context_window or (8192 if local else 128_000), prices=prices,
        )
        lines = _run(_eval_qa(ctx, locomo, longmemeval, options, embedder, model, judge_model, ingest_model))
        for line in lines:
            console.print(line, markup=False, highlight=False)
        return
    with err_console.status("evaluating…") as status:
        report = _run(run_eval(locomo=locomo, longmemeval=longmemeval, limit=limit, embedder=embedder, folds=folds,
                               progress=lambda line: status.update(f"evaluating: {line}")))
    for line in report.lines():
        console.print(line, markup=False, highlight=False)


async def _eval_qa(
    ctx: typer.Context, locomo: Path | None, longmemeval: Path | None, options: QaOptions, embedder: Embedder | None,
    model: str | None, judge_model: str | None, ingest_model: str | None,
) -> list[str]:
    from chronomem.eval.qa import progress_bars, run_qa
    from chronomem.eval.qa_models import build_qa_model
    from chronomem.llm.closing import aclose_model

    settings = _settings(ctx)
    reader = build_qa_model(model, settings)
    if reader is None:
        raise typer.BadParameter("no model: pass --model (local, lexical, provider:model) or configure one")
    judge = build_qa_model(judge_model, settings) if judge_model else None
    extractor = build_qa_model(ingest_model, settings) if ingest_model else None
    try:
        with progress_bars() as progress:
            report = await run_qa(reader, locomo, longmemeval, options=options, judge=judge, ingest_model=extractor,
                                  embedder=embedder, progress=progress)
    finally:
        for each in {id(m): m for m in (reader, judge, extractor) if m is not None}.values():
            await aclose_model(each)
    return list(report.lines())


@app.command()
def demo(ctx: typer.Context, model: ModelOption = None) -> None:
    """Ingest a small sample (a conversation and a CRM record stream) into a fresh store and query it."""
    from chronomem.cli.demo import run_demo
    from chronomem.embed import build_embedder
    from chronomem.heuristic import describe_model

    settings = _settings(ctx)
    llm = _stand_in_model(model)
    described = describe_model(model or (settings.llm.model if settings.llm is not None else None))
    if llm is None and settings.llm is not None:
        from chronomem.heuristic import STAND_INS
        from chronomem.llm.settings import build_language_model

        llm = build_language_model(settings.llm, named=STAND_INS)
    with _clean_errors():
        embedder = _chosen_embedder(ctx) or build_embedder(
            settings.embedder, local_runtime=settings.embedder_runtime, onnx_cache_dir=settings.onnx_cache_dir
        )
    _run(run_demo(store_url=settings.store_url, llm=llm, console=console, embedder=embedder,
                  model_description=described))


def _chosen_embedder(ctx: typer.Context) -> Embedder | None:
    """The embedder named by ``--embedder``, if given (else the command's own default)."""
    spec = (ctx.find_root().obj or {}).get("embedder")
    if spec is None:
        return None
    from chronomem.embed import build_embedder

    with _clean_errors():
        settings = _settings(ctx)
        return build_embedder(spec, local_runtime=settings.embedder_runtime, onnx_cache_dir=settings.onnx_cache_dir)


# -- keys --------------------------------------------------------------------------------------------


@keys_app.command("create")
def keys_create(
    ctx: typer.Context,
    project: Annotated[str, typer.Option(help="Project the key works for (created if new).")],
    name: Annotated[str, typer.Option(help="A label for the key.")] = "",
) -> None:
    """Create an API key; it is printed once and stored only hashed."""
    with _clean_errors(), _control(ctx) as control:
        info, secret = control.create_key(project, name=name)
    err_console.print(f"key {info.id} for project {project!r} (shown once, keep it safe):")
    console.print(secret, markup=False, highlight=False)


@keys_app.command("list")
def keys_list(
    ctx: typer.Context,
    project: Annotated[str | None, typer.Option(help="Only this project's keys.")] = None,
) -> None:
    """List API keys (ids and labels; secrets are never stored)."""
    with _clean_errors(), _control(ctx) as control:
        projects = {p.id: p.name for p in control.list_projects()}
        keys = control.list_keys(project)
    table = Table("id", "project", "name", "created", "revoked")
    for key in keys:
        revoked = key.revoked_at.isoformat(timespec="seconds") if key.revoked_at else ""
        table.add_row(key.id, projects.get(key.project_id, "?"), key.name,
                      key.created_at.isoformat(timespec="seconds"), revoked)
    console.print(table)


@keys_app.command("revoke")
def keys_revoke(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(help="The key's id (from 'keys list').")],
) -> None:
    """Revoke an API key: requests with it get 401 from then on."""
    with _clean_errors(), _control(ctx) as control:
        control.revoke_key(key_id)
    console.print(f"revoked {key_id}")


# -- a project's ontology and mappings ---------------------------------------------------------------

ProjectOption = Annotated[str, typer.Option(help="The project (as in 'keys create --project').")]
FileArgument = Annotated[Path, typer.Argument(help="A TOML or JSON file (see docs/configuration.md).",
                                              exists=True, dir_okay=False)]


def _project_id(control: ControlPlane, name: str) -> str:
    return control.get_project(name).id


def _print_json(value: Any) -> None:
    console.print_json(json.dumps(value))


@ontology_app.command("show")
def ontology_show(ctx: typer.Context, project: ProjectOption) -> None:
    """Print the ontology the project's episodes are extracted with (its own, else the server's)."""
    from chronomem.app import project_config

    settings = _settings(ctx)
    with _clean_errors(), _control(ctx) as control:
        from chronomem.ingest.ontology import Ontology

        found = project_config.ontology_in_force(control, _project_id(control, project),
                                                 settings.ontology or Ontology())
    err_console.print(f"source: {found.source}")
    _print_json(found.value.model_dump(mode="json"))


@ontology_app.command("set")
def ontology_set(ctx: typer.Context, file: FileArgument, project: ProjectOption) -> None:
    """Replace the project's ontology with the one in FILE (checked first: a bad one changes nothing)."""
    from chronomem.app import project_config
    from chronomem.config.sources import load_ontology
    from chronomem.ingest.ontology_spec import OntologySpec

    with _clean_errors(), _control(ctx) as control:
        spec = OntologySpec.from_ontology(load_ontology(str(file), str(file)))
        project_config.set_ontology(control, _project_id(control, project), spec)
    console.print(f"ontology of {project!r}: {len(spec.entity_types)} entity type(s), "
                  f"{len(spec.edge_types)} edge type(s)")


@ontology_app.command("reset")
def ontology_reset(ctx: typer.Context, project: ProjectOption) -> None:
    """Forget the project's ontology: the server's applies again."""
    from chronomem.app import project_config

    with _clean_errors(), _control(ctx) as control:
        project_config.reset_ontology(control, _project_id(control, project))
    console.print(f"ontology of {project!r}: the server's")


@mappings_app.command("show")
def mappings_show(ctx: typer.Context, project: ProjectOption) -> None:
    """Print the project's JSON mappings (its own, else the server's)."""
    from chronomem.app import project_config

    settings = _settings(ctx)
    with _clean_errors(), _control(ctx) as control:
        found = project_config.json_mappings_in_force(control, _project_id(control, project),
                                                      settings.json_mappings)
    err_console.print(f"source: {found.source}")
    _print_json([m.model_dump(mode="json") for m in found.value])


@mappings_app.command("set")
def mappings_set(ctx: typer.Context, file: FileArgument, project: ProjectOption) -> None:
    """Replace the project's JSON mappings with those in FILE (checked first)."""
    from chronomem.app import project_config
    from chronomem.config.sources import load_json_mappings

    with _clean_errors(), _control(ctx) as control:
        mappings = load_json_mappings(str(file), str(file))
        project_config.set_json_mappings(control, _project_id(control, project), list(mappings))
    console.print(f"JSON mappings of {project!r}: {', '.join(m.name for m in mappings) or 'none'}")


@mappings_app.command("reset")
def mappings_reset(ctx: typer.Context, project: ProjectOption) -> None:
    """Forget the project's JSON mappings: the server's apply again."""
    from chronomem.app import project_config

    with _clean_errors(), _control(ctx) as control:
        project_config.reset_json_mappings(control, _project_id(control, project))
    console.print(f"JSON mappings of {project!r}: the server's")


# -- reference ---------------------------------------------------------------------------------------


def reference_markdown() -> str:
    """The CLI reference page, generated from the commands themselves (``docs/cli.md``)."""
    root = typer.main.get_command(app)
    lines = ["# `chronomem` command reference", "",
             "Generated by `chronomem docs-cli` from the CLI itself; a test fails when it drifts.", "",
             "## Global options", "", "Given before the command, e.g. `chronomem --data-dir ./mem search ...`.",
             "Environment variables (`CHRONOMEM_*`, see `chronomem.config.settings`) apply first.", ""]
    lines += _options_markdown(root.params)

    def walk(command: Command, path: list[str]) -> None:
        if isinstance(command, typer.core.TyperGroup):
            for name in sorted(command.commands):
                walk(command.commands[name], [*path, name])
            return
        usage = " ".join(["chronomem", *path, "[OPTIONS]", *(p.name.upper() for p in command.params
                                                               if p.param_type_name == "argument")])
        lines.extend([f"## `chronomem {' '.join(path)}`", "", (command.help or "").strip(), "", "```",
                      usage, "```", ""])
        lines.extend(_options_markdown(command.params))

    walk(root, [])
    return "\n".join(lines).rstrip() + "\n"


def _options_markdown(params: list[Parameter]) -> list[str]:
    rows = []
    for param in params:
        if param.name in ("help", "ctx"):
            continue
        names = ", ".join(f"`{o}`" for o in (*param.opts, *param.secondary_opts))
        kind = "argument" if param.param_type_name == "argument" else "option"
        default = "" if param.required or param.default in (None, (), "") else f" (default: `{param.default}`)"
        text = (getattr(param, "help", None) or "").replace("|", "\\|")
        rows.append(f"| {names} | {kind} | {text}{default} |")
    if not rows:
        return []
    return ["| name | kind | description |", "|---|---|---|", *rows, ""]


@app.command("docs-cli")
def docs_cli(
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")] = None,
    check: Annotated[bool, typer.Option(help="Exit 1 if the file differs from the generated page.")] = False,
) -> None:
    """Generate the CLI reference page (docs/cli.md) from the commands themselves."""
    _write_page(reference_markdown(), output, check=check, command="docs-cli")


@app.command("docs-config")
def docs_config(
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")] = None,
    check: Annotated[bool, typer.Option(help="Exit 1 if the file differs from the generated page.")] = False,
) -> None:
    """Generate the configuration reference (docs/configuration.md) from the settings catalogue."""
    from chronomem.config.reference import render_configuration_markdown

    _write_page(render_configuration_markdown(), output, check=check, command="docs-config")


def _write_page(page: str, output: Path | None, *, check: bool, command: str) -> None:
    if check:
        if output is None or not output.exists() or output.read_text(encoding="utf-8") != page:
            err_console.print(f"{output} is out of date; run: chronomem {command} -o {output}")
            raise typer.Exit(1)
        return
    if output is None:
        sys.stdout.write(page)
    else:
        output.write_text(page, encoding="utf-8")


def main() -> None:
    """Entry point of the ``chronomem`` console script."""
    app()

