"""One consumer per file for the episode queue.

Any number of processes may read and write one database file (see changefeed.py), but only one may
consume its episode queue: the consumer returns every ``processing`` episode to ``pending`` when it
starts, which is crash recovery only if no other process is working on one. The consumer holds an
exclusive advisory lock on ``<file>-queue.lock``; the operating system releases it when the process
ends, however it ends, so a server killed with SIGKILL is replaced without manual clean-up.
"""

from __future__ import annotations

import os
from typing import IO

from chronomem.errors import StoreError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks here; run one consumer per file by hand
    fcntl = None  # type: ignore[assignment]

__all__ = ["QueueLock"]


class QueueLock:
    def __init__(self, database_path: str) -> None:
        self._database = database_path
        self.path = f"{database_path}-queue.lock"
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock for this process, or raise ``StoreError`` naming the process that holds it."""
        if self._file is not None or fcntl is None:
            return
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 (held open while the lock is)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise StoreError(
                f"{holder} is already processing the episode queue of {self._database}; a SQLite file has one "
                "ingestion process: run the server with --no-workers beside one `chronomem worker`, or "
                "the server alone"
            ) from None
        handle.truncate(0)
        handle.write(f"process {os.getpid()}\n")
        handle.flush()
        self._file = handle

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing the descriptor releases the lock
            self._file = None
