"""How many of a process's pooled database connections are lent out, and how many requests wait for one: the
Python stacks' counterpart of HikariCP's MBean, which the runner's JVM probe reads for Tomcat.

Each server process counts for itself (requests are counted as they enter and leave the pool's wait and the
connection's use) and, when CROSSBENCH_DB_POOL_LOG names a directory, a daemon thread appends a line every quarter
second to `<dir>/<pid>.csv` (t_epoch,active,waiting,size,active_most,waiting_most: the counts now, the pool's size,
and the most at once since the previous line); the runner sums the processes' files into the cell's series.
Counting is ours rather than the drivers' so that asyncpg and psycopg_pool mean the same thing.

The "most at once" columns are why a peak is never missed: a line's instant lands wherever the writer thread gets
the GIL, which in an event loop is mostly between a connection's release and its next lending (seed004-quick's
uvicorn with 2 connections lent to 16 clients read an active peak of 1 in all four lines of a 1 s window).
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

INTERVAL_S = 0.25
HEADER = "t_epoch,active,waiting,size,active_most,waiting_most\n"


class PoolGauge:
    """One process's pool: `waiting()` around taking a connection, `lent()` around using it."""

    def __init__(self, size: int, log_dir: str | None = None):
        self.size = size
        self.active = 0
        self.waiting_now = 0
        self.active_most = 0  # the most at once since the last line was written
        self.waiting_most = 0
        self._lock = threading.Lock()  # gunicorn's threaded workers count from several threads
        self._log_dir = Path(log_dir) if log_dir else None
        self._writer_pid: int | None = None

    def waiting(self):
        """A request waiting for a connection, while the block runs."""
        return self._counted(waiting=1)

    def lent(self):
        """A connection lent out, while the block runs."""
        return self._counted(active=1)

    @contextmanager
    def _counted(self, active: int = 0, waiting: int = 0):
        self._add(active, waiting)
        try:
            yield
        finally:
            self._add(-active, -waiting)

    def _add(self, active: int = 0, waiting: int = 0) -> None:
        with self._lock:
            self.active += active
            self.waiting_now += waiting
            self.active_most = max(self.active_most, self.active)
            self.waiting_most = max(self.waiting_most, self._waiting_for_one())

    def _waiting_for_one(self) -> int:
        """Requests waiting while every connection is lent out: with one free, a request passes through `waiting`
        on its way to it (a sync worker does so at every request) and has waited for nothing."""
        return self.waiting_now if self.active >= self.size else 0

    def line(self) -> str:
        """The counts now, the size, and the most at once since the previous line (those then start again from now)."""
        with self._lock:
            text = (
                f"{time.time():.3f},{self.active},{self.waiting_now},{self.size},"
                f"{self.active_most},{self.waiting_most}\n"
            )
            self.active_most, self.waiting_most = self.active, self._waiting_for_one()
        return text

    def start_log(self) -> None:
        """Starts this process's writer once (a forked worker starts its own: the pid is part of the file name)."""
        if self._log_dir is None or self._writer_pid == os.getpid():
            return
        self._writer_pid = os.getpid()
        path = self._log_dir / f"{os.getpid()}.csv"
        threading.Thread(target=self._write_every_interval, args=(path,), name="pool-gauge", daemon=True).start()

    def _write_every_interval(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", buffering=1) as out:
            if out.tell() == 0:
                out.write(HEADER)
            while True:
                out.write(self.line())
                time.sleep(INTERVAL_S)


def from_environment(size: int) -> PoolGauge:
    return PoolGauge(size, os.environ.get("CROSSBENCH_DB_POOL_LOG"))
