"""Backup and restore of a deployment (``chronomem backup DEST``, ``chronomem restore SRC``;
docs/operations.md): the embedded store's two SQLite files, or a FalkorDB deployment's shards.

A backup is a directory: one consistent copy of each SQLite file, made with SQLite's online backup
API while servers and workers keep writing, and ``manifest.json`` naming each file with its size,
its SHA-256 and its tables' row counts. :func:`restore` checks all of it before it writes anything,
and refuses a damaged or incomplete backup with a message naming the file and what is wrong.

**Consistency across the two files.** Each copy is one snapshot (a single backup step reads the
database as of one transaction). The two are taken one after the other, the graph store first and
the control plane second, which is the order the service commits in reverse: a message's id and
task reach the control plane *before* its episode reaches the graph store, and an id counts as a
message only once its episode exists (docs/service.md, "Ingestion"). So every message acknowledged
before the backup started is in both copies; one acknowledged while it ran is either whole in both,
or an id in the control plane whose episode the graph copy lacks, which no read shows (the request
that sent it was answered after the graph copy was taken, and a client resending it with its ids
gets it stored). The other order could leave an episode outside its thread.

**FalkorDB.** The control plane lives on the store's servers, in one slot. A backup is one
persistence snapshot (RDB) per primary, fetched over the replication protocol
(:mod:`chronomem.store.falkordb.snapshot`): each is its shard as of one instant; the shards are
taken one after another, the one holding the control plane last, so the same argument holds across
shards. Restore makes server data directories from them (``--falkordb-dir``; a cluster's nodes get
the slots their shard owned), which servers then start on.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from chronomem.errors import ConfigurationError, ConflictError, InvalidInputError
from chronomem.store.factory import sqlite_file
from chronomem.timeutil import utc_now

__all__ = ["BACKUP_FORMAT", "MANIFEST", "BackupFile", "BackupReport", "backup", "restore", "verify"]

BACKUP_FORMAT = "chronomem.backup/1"
MANIFEST = "manifest.json"
_CHUNK = 1 << 20


class Deployment(Protocol):
    """What a backup needs of the settings (``chronomem.config.Settings`` is one)."""

    @property
    def resolved_store_url(self) -> str: ...

    @property
    def resolved_control_db(self) -> Path: ...


@dataclass(frozen=True, slots=True)
class BackupFile:
    """One file of a backup: its ``role`` (``graph``, ``control``, or a FalkorDB ``shard``), name in
    the backup, size, digest, and row count per table (SQLite) or slot ranges and whether it holds the
    control plane (a shard)."""

    role: str
    name: str
    bytes: int
    sha256: str
    tables: dict[str, int] = field(default_factory=dict)
    slots: tuple[tuple[int, int], ...] = ()
    control: bool = False


@dataclass(frozen=True, slots=True)
class BackupReport:
    """What :func:`backup` wrote or :func:`restore` read."""

    directory: Path
    created_at: datetime
    files: tuple[BackupFile, ...]
    seconds: float
    store: str = "sqlite"  # or "falkordb"
    cluster: bool = False

    @property
    def total_bytes(self) -> int:
        return sum(f.bytes for f in self.files)


def _sources(settings: Deployment) -> list[tuple[str, str, Path]]:
    """``(role, name in the backup, live file)``, in the order they must be copied (graph first)."""
    graph = sqlite_file(settings.resolved_store_url)
    if graph is None:
        raise ConfigurationError(
            f"chronomem backup copies an embedded SQLite store; {settings.resolved_store_url!r} is a server store "
            "(back up FalkorDB with its own snapshots: docs/operations.md)"
        )
    return [("graph", "chronomem.db", graph), ("control", "control.db", Path(settings.resolved_control_db))]


def backup(settings: Deployment, destination: str | Path) -> BackupReport:
    """Copy the live store and control plane into ``destination`` (a new or empty directory)."""
    started = time.perf_counter()
    target = Path(destination)
    if target.exists() and any(target.iterdir()):
        raise ConflictError(f"backup destination {target} is not empty; name a new directory")
    if sqlite_file(settings.resolved_store_url) is None:
        return _backup_falkordb(settings.resolved_store_url, target, started)
    sources = _sources(settings)
    for _, _, live in sources:
        if not live.is_file():
            raise InvalidInputError(f"nothing to back up: {live} does not exist")
    target.mkdir(parents=True, exist_ok=True)
    created_at = utc_now()
    files = []
    for role, name, live in sources:
        _snapshot(live, target / name)
        files.append(_describe(role, name, target / name))
    manifest = {
        "format": BACKUP_FORMAT,
        "created_at": created_at.isoformat(),
        "store": "sqlite",
        "files": [_as_dict(f) for f in files],
    }
    _write_durably(target / MANIFEST, json.dumps(manifest, indent=2).encode())
    return BackupReport(target, created_at, tuple(files), time.perf_counter() - started)


def _as_dict(file: BackupFile) -> dict[str, Any]:
    return {
        "role": file.role,
        "name": file.name,
        "bytes": file.bytes,
        "sha256": file.sha256,
        "tables": file.tables,
        "slots": [list(r) for r in file.slots],
        "control": file.control,
    }


def _backup_falkordb(url: str, target: Path, started: float) -> BackupReport:
    from chronomem.store.falkordb.connection import parse_url
    from chronomem.store.falkordb.snapshot import fetch_snapshot, shards

    connection = parse_url(url)
    primaries = shards(url)  # the control plane's shard last
    target.mkdir(parents=True, exist_ok=True)
    created_at = utc_now()
    files = []
    for index, shard in enumerate(primaries):
        name = f"shard-{index}.rdb"
        digest = fetch_snapshot(shard, connection, target / name)
        with open(target / name, "rb+") as handle:
            os.fsync(handle.fileno())
        files.append(
            BackupFile("shard", name, (target / name).stat().st_size, digest, slots=shard.slots, control=shard.control)
        )
    manifest = {
        "format": BACKUP_FORMAT,
        "created_at": created_at.isoformat(),
        "store": "falkordb",
        "cluster": connection.cluster,
        "namespace": connection.namespace,
        "files": [_as_dict(f) for f in files],
    }
    _write_durably(target / MANIFEST, json.dumps(manifest, indent=2).encode())
    return BackupReport(target, created_at, tuple(files), time.perf_counter() - started, "falkordb", connection.cluster)


def _snapshot(live: Path, copy: Path) -> None:
    """One consistent copy of a live SQLite file (WAL readers do not block its writers)."""
    source = sqlite3.connect(f"file:{live}?mode=ro", uri=True, timeout=30)
    target = sqlite3.connect(copy)
    try:
        source.backup(target)  # pages=-1: the whole file in one step, so one snapshot
        target.execute("PRAGMA journal_mode=DELETE")  # a self-contained file, no -wal beside it
        target.commit()
    finally:
        target.close()
        source.close()
    with open(copy, "rb+") as handle:
        os.fsync(handle.fileno())


def _describe(role: str, name: str, path: Path) -> BackupFile:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        tables = {n: db.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
    db.close()
    return BackupFile(role, name, path.stat().st_size, _sha256(path), tables)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _write_durably(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def verify(source: str | Path) -> BackupReport:
    """Check a backup without restoring it: its manifest, and each file's size, SHA-256 and
    integrity. Raises ``InvalidInputError`` naming what is wrong."""
    started = time.perf_counter()
    directory = Path(source)
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInputError(f"{directory} is not a chronomem backup: it has no {MANIFEST}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"backup {directory} is damaged: {MANIFEST} does not parse ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != BACKUP_FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise InvalidInputError(f"backup {directory}: format {found!r}; this version reads {BACKUP_FORMAT}")
    try:
        files = tuple(
            BackupFile(**{**entry, "slots": tuple(tuple(r) for r in entry.get("slots", ()))})
            for entry in manifest["files"]
        )
        created_at = datetime.fromisoformat(manifest["created_at"])
        store, cluster = manifest.get("store", "sqlite"), bool(manifest.get("cluster", False))
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"backup {directory} is damaged: its manifest is incomplete ({exc})") from None
    expected = ["control", "graph"] if store == "sqlite" else ["shard"] * len(files)
    if sorted(f.role for f in files) != expected or (store == "falkordb" and sum(f.control for f in files) != 1):
        raise InvalidInputError(
            f"backup {directory} is damaged: its manifest does not list the files a {store} backup holds"
        )
    for file in files:
        _check(directory, file, sqlite=store == "sqlite")
    return BackupReport(directory, created_at, files, time.perf_counter() - started, store, cluster)


def _check(directory: Path, file: BackupFile, *, sqlite: bool) -> None:
    path = directory / file.name
    if Path(file.name).name != file.name or not path.is_file():
        raise InvalidInputError(f"backup {directory} is damaged: {file.name} is missing")
    size = path.stat().st_size
    if size != file.bytes:
        raise InvalidInputError(
            f"backup {directory} is damaged: {file.name} has {size} bytes, the manifest says {file.bytes}"
        )
    digest = _sha256(path)
    if digest != file.sha256:
        raise InvalidInputError(
            f"backup {directory} is damaged: {file.name}'s SHA-256 is {digest}, the manifest says {file.sha256}"
        )
    if not sqlite:
        with open(path, "rb") as handle:
            if handle.read(5) != b"REDIS":
                raise InvalidInputError(f"backup {directory} is damaged: {file.name} is not a Redis snapshot")
        return
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            result = db.execute("PRAGMA integrity_check").fetchone()[0]
        db.close()
    except sqlite3.DatabaseError as exc:
        raise InvalidInputError(
            f"backup {directory} is damaged: {file.name} is not a readable database ({exc})"
        ) from None
    if result != "ok":
        raise InvalidInputError(f"backup {directory} is damaged: {file.name} fails SQLite's integrity check ({result})")


def restore(
    source: str | Path, settings: Deployment, *, falkordb_dir: str | Path | None = None, first_port: int | None = None
) -> BackupReport:
    """Restore a backup into the settings' data files, which must not exist yet (a fresh data
    directory; no server may be running on it). Everything is checked before anything is written.

    A FalkorDB backup becomes server data directories under ``falkordb_dir`` (new or empty): the
    directory itself for one server, ``node-<port>`` for each cluster node on ports ``first_port``,
    ``first_port + 1``, … (see :func:`chronomem.store.falkordb.snapshot.data_dirs_from_snapshots`)."""
    report = verify(source)
    if report.store == "falkordb":
        return _restore_falkordb(report, falkordb_dir, first_port)
    by_role = {file.role: file for file in report.files}
    targets = {role: live for role, _, live in _sources(settings)}
    present = [str(path) for path in targets.values() if path.exists()]
    if present:
        raise ConflictError(f"restore would overwrite {', '.join(present)}: restore into a fresh data directory")
    written: list[Path] = []
    try:
        for role, live in targets.items():
            live.parent.mkdir(parents=True, exist_ok=True)
            partial = live.with_name(f".{live.name}.restoring")
            written.append(partial)
            if _copy(report.directory / by_role[role].name, partial) != by_role[role].sha256:
                raise InvalidInputError(f"backup {report.directory}: {by_role[role].name} changed while it was read")
        for live in targets.values():
            live.with_name(f".{live.name}.restoring").replace(live)
    except BaseException:
        for partial in written:
            partial.unlink(missing_ok=True)
        raise
    return report


def _copy(source: Path, destination: Path) -> str:
    """Copy durably; returns the SHA-256 of what was copied."""
    digest = hashlib.sha256()
    with open(source, "rb") as reader, open(destination, "wb") as writer:
        while chunk := reader.read(_CHUNK):
            digest.update(chunk)
            writer.write(chunk)
        writer.flush()
        os.fsync(writer.fileno())
    return digest.hexdigest()


def _restore_falkordb(report: BackupReport, falkordb_dir: str | Path | None, first_port: int | None) -> BackupReport:
    from chronomem.store.falkordb.snapshot import data_dirs_from_snapshots

    if falkordb_dir is None:
        raise InvalidInputError("a FalkorDB backup is restored into server data directories: pass --falkordb-dir")
    if report.cluster and first_port is None:
        raise InvalidInputError("a cluster backup needs the ports its restored nodes will listen on: pass --port")
    directory = Path(falkordb_dir)
    if directory.exists() and any(directory.iterdir()):
        raise ConflictError(f"restore would write into {directory}, which is not empty: name a new directory")
    shards = sorted(report.files, key=lambda f: f.slots)  # the cluster's nodes in slot order, as it was formed
    data_dirs_from_snapshots(
        [(report.directory / f.name, f.slots) for f in shards], directory, cluster=report.cluster, first_port=first_port
    )
    return report
