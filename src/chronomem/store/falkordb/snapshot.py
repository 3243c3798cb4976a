"""Persistence snapshots of a FalkorDB deployment, shard by shard, and data directories made from them.

:func:`fetch_snapshot` asks a server for its RDB the way a replica does (``REPLCONF rdb-only 1``,
then ``SYNC``): the server forks, writes the dataset as of that instant — graphs (FalkorDB's module
type) and plain keys alike — and streams it; nothing is read from the server's disk, so it works
against a remote server. :func:`shards` lists a deployment's primaries with their slot ranges
(one server: one shard with every slot) and says which holds the control plane.

:func:`data_dirs_from_snapshots` turns snapshots back into servers' data directories: a server
started on each with AOF off loads the RDB, is switched to AOF (which rewrites the dataset into a
fresh AOF) and, in a cluster, is given the slot ranges its shard owned and introduced to the other
nodes; then they are shut down. The directories start like any other
(``chronomem.store.falkordb.server``, ``scripts/falkordb-server``, ``scripts/falkordb-cluster``).
RESTORE of a graph key's DUMP was tried first: it crashed FalkorDB 4.16.3.
"""

from __future__ import annotations

import hashlib
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from chronomem.errors import StoreError, StoreUnavailableError
from chronomem.store.falkordb.connection import ConnectionSettings, parse_url
from chronomem.store.falkordb.server import CLUSTER_SLOTS, ServerProcess, free_port

__all__ = ["Shard", "data_dirs_from_snapshots", "fetch_snapshot", "shards"]

_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class Shard:
    """A primary: where it listens, the slot ranges it owns, whether it holds the control plane."""

    host: str
    port: int
    slots: tuple[tuple[int, int], ...]
    control: bool


def shards(url: str) -> list[Shard]:
    """The deployment's primaries, the one holding the control plane last."""
    import redis

    settings = parse_url(url)
    client = redis.Redis(
        host=settings.host,
        port=settings.port,
        username=settings.username,
        password=settings.password,
        socket_timeout=settings.socket_timeout,
        decode_responses=True,
    )
    try:
        if not settings.cluster:
            found = [Shard(settings.host, settings.port, ((0, CLUSTER_SLOTS - 1),), True)]
        else:
            control_slot = int(client.execute_command("CLUSTER", "KEYSLOT", "{control}"))  # type: ignore[no-untyped-call]
            owners: dict[tuple[str, int], list[tuple[int, int]]] = {}
            for first, last, primary, *_ in client.execute_command("CLUSTER", "SLOTS"):  # type: ignore[no-untyped-call]
                host = primary[0] or settings.host
                owners.setdefault((host, int(primary[1])), []).append((int(first), int(last)))
            found = [
                Shard(host, port, tuple(sorted(ranges)), any(a <= control_slot <= b for a, b in ranges))
                for (host, port), ranges in sorted(owners.items())
            ]
    except redis.RedisError as exc:
        raise StoreUnavailableError(f"could not list the shards of {url}: {exc}") from exc
    finally:
        client.close()
    return sorted(found, key=lambda s: s.control)


def _command(*parts: str) -> bytes:
    encoded = [p.encode() for p in parts]
    return b"*%d\r\n" % len(encoded) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in encoded)


def fetch_snapshot(shard: Shard, settings: ConnectionSettings, destination: Path, timeout_s: float = 600.0) -> str:
    """Write the shard's RDB to ``destination``; returns its SHA-256."""
    digest = hashlib.sha256()
    try:
        with socket.create_connection((shard.host, shard.port), timeout=timeout_s) as sock:
            reader = sock.makefile("rb")
            if settings.password:
                auth = (
                    ["AUTH", settings.username, settings.password] if settings.username else ["AUTH", settings.password]
                )
                sock.sendall(_command(*auth))
                _expect_ok(reader.readline(), "AUTH")
            sock.sendall(_command("REPLCONF", "rdb-only", "1"))
            _expect_ok(reader.readline(), "REPLCONF rdb-only")
            sock.sendall(_command("SYNC"))
            header = reader.readline()
            while header in (b"\n", b"\r\n"):  # keep-alives while the server forks and writes
                header = reader.readline()
            if not header.startswith(b"$"):
                raise StoreError(f"{shard.host}:{shard.port} refused a snapshot: {header[:200]!r}")
            with open(destination, "wb") as out:
                _copy_payload(reader, out, header[1:].strip(), digest)
    except OSError as exc:
        raise StoreUnavailableError(f"snapshot of {shard.host}:{shard.port} failed: {exc}") from exc
    return digest.hexdigest()


def _expect_ok(line: bytes, what: str) -> None:
    if not line.startswith(b"+"):
        raise StoreError(f"{what} was refused: {line[:200]!r}")


def _copy_payload(reader: BinaryIO, out: BinaryIO, size: bytes, digest: Any) -> None:
    """A disk-based sync sends ``$<length>``; a diskless one ``$EOF:<40-byte mark>`` and the mark
    after the payload."""

    def write(data: bytes) -> None:
        digest.update(data)
        out.write(data)

    if size.startswith(b"EOF:"):
        mark, held = size[4:], b""
        while True:
            chunk = reader.read1(_CHUNK)  # type: ignore[attr-defined]
            if not chunk:
                raise StoreError("the snapshot stream ended before its end mark")
            held += chunk
            if held.endswith(mark):
                write(held[: -len(mark)])
                return
            write(held[: -len(mark)])
            held = held[-len(mark) :]
    left = int(size)
    while left:
        chunk = reader.read(min(left, _CHUNK))
        if not chunk:
            raise StoreError("the snapshot stream ended early")
        write(chunk)
        left -= len(chunk)


def data_dirs_from_snapshots(
    snapshots: list[tuple[Path, tuple[tuple[int, int], ...]]],
    directory: Path,
    *,
    cluster: bool,
    first_port: int | None = None,
    timeout_s: float = 600.0,
) -> list[Path]:
    """Server data directories holding the snapshots' datasets, in AOF form, returned in order.

    One server: ``directory`` itself (start it with ``--dir directory``). A cluster: one
    ``directory/node-<port>`` per shard on ports ``first_port``, ``first_port + 1``, … (the layout
    ``start_cluster`` and ``scripts/falkordb-cluster --port first_port`` use), each owning the slot
    ranges its shard owned, already introduced to the others: started again on those ports they
    form the same cluster, with the same keys on the same slots."""
    import redis

    if cluster and first_port is None:
        raise ValueError("a cluster's restore needs the ports its nodes will listen on")
    ports = [first_port + i for i in range(len(snapshots))] if cluster and first_port else [free_port()]
    servers: list[ServerProcess] = []
    clients: list[Any] = []
    try:
        for port, (snapshot, _) in zip(ports, snapshots, strict=True):
            data_dir = directory / f"node-{port}" if cluster else directory
            data_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(snapshot, data_dir / "dump.rdb")
            server = ServerProcess(port, data_dir, cluster=cluster)
            command = server.command()
            command[command.index("--appendonly") + 1] = "no"  # AOF on, the server would ignore the RDB
            server.process = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
            )
            servers.append(server)
            server.wait_ready(timeout_s)
            clients.append(redis.Redis(host="127.0.0.1", port=port, decode_responses=True))
        if cluster:
            _form(clients, [slots for _, slots in snapshots], ports, timeout_s)
        for client in clients:
            client.config_set("appendonly", "yes")  # rewrites the loaded dataset into a fresh AOF
        for client, server in zip(clients, servers, strict=True):
            _wait_for_aof(client, server.data_dir, timeout_s)
            if cluster:
                client.execute_command("CLUSTER", "SAVECONFIG")
    finally:
        for client in clients:
            client.close()
        for server in servers:
            server.stop()
    for server in servers:
        (server.data_dir / "dump.rdb").unlink(missing_ok=True)
    return [server.data_dir for server in servers]


def _form(clients: list[Any], slots: list[tuple[tuple[int, int], ...]], ports: list[int], timeout_s: float) -> None:
    for client, ranges in zip(clients, slots, strict=True):
        # a node that loaded keys claims their slots itself (Redis 8): add the others around them
        owned = {
            slot
            for first, last, *_ in client.execute_command("CLUSTER", "SLOTS")
            for slot in range(int(first), int(last) + 1)
        }
        for first, last in _ranges(slot for a, b in ranges for slot in range(a, b + 1) if slot not in owned):
            client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
    for client in clients[1:]:
        client.execute_command("CLUSTER", "MEET", "127.0.0.1", ports[0])
    deadline = time.monotonic() + timeout_s
    while not all(c.cluster("info")["cluster_state"] == "ok" for c in clients):
        if time.monotonic() > deadline:
            raise StoreUnavailableError("the restored cluster did not reach cluster_state:ok")
        time.sleep(0.1)


def _ranges(slots: Any) -> list[tuple[int, int]]:
    """Sorted slots as contiguous ``(first, last)`` ranges."""
    found: list[tuple[int, int]] = []
    for slot in sorted(slots):
        if found and found[-1][1] == slot - 1:
            found[-1] = (found[-1][0], slot)
        else:
            found.append((slot, slot))
    return found


def _wait_for_aof(client: Any, data_dir: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        info = client.info("persistence")
        busy = info.get("aof_rewrite_in_progress") or info.get("aof_rewrite_scheduled")
        if info.get("aof_enabled") == 1 and not busy:
            return
        if time.monotonic() > deadline:
            raise StoreUnavailableError(f"the AOF of {data_dir} was not written in {timeout_s}s")
        time.sleep(0.05)
