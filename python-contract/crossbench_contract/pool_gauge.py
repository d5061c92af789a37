"""How many of a process's pooled database connections are lent out, and how many requests wait for one: the
Python stacks' counterpart of HikariCP's MBean, which the runner's JVM probe reads for Tomcat.

Each server process counts for itself (requests are counted as they enter and leave the pool's wait and the
connection's use) and, when CROSSBENCH_DB_POOL_LOG names a directory, a daemon thread appends a line every quarter
second to `<dir>/<pid>.csv` (t_epoch,active,waiting,size); the runner sums the processes' files into the cell's
series. Counting is ours rather than the drivers' so that asyncpg and psycopg_pool mean the same thing.
"""
from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

INTERVAL_S = 0.25
HEADER = "t_epoch,active,waiting,size\n"


class PoolGauge:
    """One process's pool: `waiting()` around taking a connection, `lent()` around using it."""

    def __init__(self, size: int, log_dir: str | None = None):
        self.size = size
        self.active = 0
        self.waiting_now = 0
        self._lock = threading.Lock()      # gunicorn's threaded workers count from several threads
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
                out.write(f"{time.time():.3f},{self.active},{self.waiting_now},{self.size}\n")
                time.sleep(INTERVAL_S)


def from_environment(size: int) -> PoolGauge:
    return PoolGauge(size, os.environ.get("CROSSBENCH_DB_POOL_LOG"))
