"""The server's database pool over time, one series per cell (`db-pool.csv`: t_epoch, active, waiting, size,
summed over the server's processes), whatever the server: Tomcat's from the JVM probe's HikariCP lines, the
Python servers' from the files their processes append (crossbench_contract.pool_gauge: `<dir>/<pid>.csv`).
The record's db_pool_active_peak and db_pool_waiting_peak are this series' peaks inside the window."""
from __future__ import annotations

import csv
import time
from pathlib import Path

SERIES_FILE = "db-pool.csv"
LOG_DIR = "db-pool"           # where the Python servers' processes write, inside the cell directory
COLUMNS = ["t_epoch", "active", "waiting", "size"]
STALE_S = 1.0                 # a process's last line older than this no longer counts (the process is gone)

Row = tuple[float, int | None, int | None, int | None]


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def read_rows(path: Path) -> list[Row]:
    """One file of t_epoch,active,waiting,size lines; a line cut short (a process killed mid-write) is skipped."""
    rows = []
    with open(path, newline="") as f:
        for line in csv.DictReader(f):
            try:
                rows.append((float(line["t_epoch"]), _int(line["active"]), _int(line["waiting"]),
                             _int(line["size"] or "")))
            except (TypeError, ValueError, KeyError):
                continue
    return rows


def summed(per_process: list[list[Row]], stale_s: float = STALE_S) -> list[Row]:
    """At each line any process wrote, the sum over every process's latest line (those not older than stale_s)."""
    events = sorted((row[0], n, row) for n, rows in enumerate(per_process) for row in rows)
    latest: dict[int, Row] = {}
    series = []
    for t, n, row in events:
        latest[n] = row
        live = [r for r in latest.values() if t - r[0] <= stale_s]
        series.append((t, *(sum(r[i] or 0 for r in live) for i in (1, 2, 3))))
    return series


def write_series(path: Path, rows: list[Row]) -> None:
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        out.writerows([f"{t:.3f}", *("" if v is None else v for v in rest)] for t, *rest in rows)


def peaks(rows: list[Row], t0: float, t1: float) -> dict:
    """Most connections lent out at once and most requests waiting for one, inside [t0, t1]; None without rows."""
    window = [r for r in rows if t0 <= r[0] <= t1]
    return {"db_pool_active_peak": max((r[1] for r in window if r[1] is not None), default=None),
            "db_pool_waiting_peak": max((r[2] for r in window if r[2] is not None), default=None)}


class ProcessLogProbe:
    """The Python servers' pool files, read once the server has stopped (a server on another host: once its files
    are back; their times then move onto this machine's clock): no live reading (the sampler's pool columns are
    Tomcat's connector threads); the cell's series is written, its peaks are the record's figures."""

    def __init__(self, log_dir: Path, cell_dir: Path, clock_offset_s: float = 0.0):
        self.log_dir, self.cell_dir, self.clock_offset_s = log_dir, cell_dir, clock_offset_s
        self.rows: list[Row] | None = None

    def latest(self):
        return None

    def wait_attached(self, timeout_s: float) -> None:
        """Nothing to attach: the files are read when asked."""

    def stop(self) -> None:
        """Nothing to stop: the server's processes write the files."""

    def waiting_now(self) -> int | None:
        """Requests waiting for a connection now, over the processes that wrote in the last STALE_S (their last
        lines); None without any file (not a database cell, or a server on another host)."""
        files = sorted(self.log_dir.glob("*.csv")) if self.log_dir.is_dir() else []
        lasts = [rows[-1] for rows in map(read_rows, files) if rows]
        now = time.time() + self.clock_offset_s
        fresh = [row for row in lasts if now - row[0] <= STALE_S]
        return sum(row[2] or 0 for row in fresh) if lasts else None

    def collect(self) -> list[Row]:
        files = sorted(self.log_dir.glob("*.csv")) if self.log_dir.is_dir() else []
        shifted = [[(t - self.clock_offset_s, *rest) for t, *rest in read_rows(f)] for f in files]
        self.rows = summed(shifted)
        if files:
            write_series(self.cell_dir / SERIES_FILE, self.rows)
        return self.rows

    def figures(self, t0: float, t1: float) -> dict:
        rows = self.rows if self.rows is not None else self.collect()
        return peaks(rows, t0, t1)
