"""The server's database pool over time, one series per cell (`db-pool.csv`: t_epoch, active, waiting, size,
summed over the server's processes), whatever the server: Tomcat's from the JVM probe's HikariCP lines, the
Python servers' from the files their processes append (crossbench_contract.pool_gauge: `<dir>/<pid>.csv`).
The Python servers' lines also carry active_most and waiting_most, the most at once since the process's previous
line, so their peaks do not depend on where a line's instant fell (summed over processes, the most of each: an
upper bound when they peaked at different moments); Tomcat's are the probe's instants.
The record's db_pool_active_peak and db_pool_waiting_peak are this series' peaks inside the window."""

from __future__ import annotations

import csv
import time
from pathlib import Path

from crossbench_contract.pool_gauge import INTERVAL_S as LINE_SPAN_S  # the time a line's "most" columns cover

SERIES_FILE = "db-pool.csv"
LOG_DIR = "db-pool"  # where the Python servers' processes write, inside the cell directory
COLUMNS = ["t_epoch", "active", "waiting", "size"]
MOST_COLUMNS = ["active_most", "waiting_most"]
MOST_OF = {1: 4, 2: 5}  # a row's index of active and of waiting -> that of their "most" columns
STALE_S = 1.0  # a process's last line older than this no longer counts (the process is gone)

# (t_epoch, active, waiting, size) or, from the Python servers' files, (..., active_most, waiting_most)
Row = tuple


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def read_rows(path: Path) -> list[Row]:
    """One file of t_epoch,active,waiting,size[,active_most,waiting_most] lines (a file without the last two: they
    are the counts of the line); a line cut short (a process killed mid-write) is skipped."""
    rows = []
    with open(path, newline="") as f:
        for line in csv.DictReader(f):
            try:
                active, waiting = _int(line["active"]), _int(line["waiting"])
                most = [line.get(name) for name in MOST_COLUMNS]
                rows.append(
                    (
                        float(line["t_epoch"]),
                        active,
                        waiting,
                        _int(line["size"] or ""),
                        active if most[0] is None else _int(most[0]),
                        waiting if most[1] is None else _int(most[1]),
                    )
                )
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
        series.append((t, *(sum(r[i] or 0 for r in live) for i in range(1, len(row)))))
    return series


def write_series(path: Path, rows: list[Row]) -> None:
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS + (MOST_COLUMNS if rows and len(rows[0]) > len(COLUMNS) else []))
        out.writerows([f"{t:.3f}", *("" if v is None else v for v in rest)] for t, *rest in rows)


def peaks(rows: list[Row], t0: float, t1: float) -> dict:
    """Most connections lent out at once and most requests waiting for one, inside [t0, t1]; None without rows.
    A line's "most" columns count once the time they cover lies inside the window; before that, its counts."""
    window = [r for r in rows if t0 <= r[0] <= t1]

    def most(row: Row, column: int):
        whole = len(row) > len(COLUMNS) and row[0] - LINE_SPAN_S >= t0
        return row[MOST_OF[column]] if whole else row[column]

    return {
        "db_pool_active_peak": max((v for r in window if (v := most(r, 1)) is not None), default=None),
        "db_pool_waiting_peak": max((v for r in window if (v := most(r, 2)) is not None), default=None),
    }


class ProcessLogProbe:
    """The Python servers' pool files, read once the server has stopped (a server on another host: once its files
    are back; their times then move onto this machine's clock): no live reading (the sampler's pool columns are
    Tomcat's connector threads); the cell's series is written, its peaks are the record's figures."""

    def __init__(self, log_dir: Path, cell_dir: Path, clock_offset_s: float = 0.0):
        self.log_dir, self.cell_dir, self.clock_offset_s = log_dir, cell_dir, clock_offset_s
        self.rows: list[Row] | None = None

    def latest(self):
        return None

    def server_ready(self) -> None:
        """Nothing to tell: the files are read when asked."""

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
