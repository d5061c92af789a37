"""Seed 003's charts (cells of kind "hold_connections"): the server's samples.csv joined on time with the
holder's holder.csv (connections held), and the kernel's sockets.csv. One series per cell: every launch its own
line (a time series has no launches to average; HOW_LAUNCHES says so in each caption)."""

from __future__ import annotations

import bisect
import csv
from pathlib import Path

from crossbench_analysis.read.runinfo import Run, is_valid, num

from .kit import ChartJob, with_headings
from .kit_files import fmt, write_blocks
from .kit_labels import palette

KIND = "hold_connections"
HOW_LAUNCHES = (
    " A line per launch, each labelled with it when a point has more than one: a timeline has no "
    "launches to average (their clocks do not align), so it has no interval; where a point's launches "
    "differ, their lines show by how much."
)
HEADINGS = {
    "hold_server": "Seed 003: cost of holding connections",
    "hold_limit": "Seed 003: what the client sees when the server stops accepting",
    "hold_client": "Seed 003: the client's own cost",
}


def read_csv(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return [{k: (v if k == "phase" else num(v)) for k, v in row.items()} for row in csv.DictReader(f)]


def interpolate(rows: list[dict], t: float, column: str) -> float | None:
    times = [r["t_epoch"] for r in rows]
    i = bisect.bisect_left(times, t)
    if not rows or i == len(times) or (i == 0 and t < times[0]):
        return None
    if i == 0 or times[i] == t:
        return rows[i][column]
    a, b = rows[i - 1], rows[i]
    return a[column] + (t - a["t_epoch"]) / (b["t_epoch"] - a["t_epoch"]) * (b[column] - a[column])


def label(cell: dict, launches: bool = False) -> str:
    text = str(cell.get("server"))
    if cell.get("max_connections"):  # a server with a connection limit: say which
        text += f" maxConnections={cell.get('max_connections')}"
    if launches:  # a line per launch: say which
        text += f", launch {cell.get('repetition')}"
    if not is_valid(cell):
        text += " (flagged)"
    return text


def colors(cells: list[dict]) -> str:
    used: dict = {}
    out = []
    for c in cells:
        shades = palette(c.get("server"))
        n = used.get(c.get("server"), 0)
        used[c.get("server")] = n + 1
        out.append(shades[n % len(shades)])
    return " ".join(out)


class HoldCharts:
    def __init__(self, run: Run, data_dir: Path):
        self.run, self.data_dir = run, data_dir
        self.cells = [c for c in run.cells if c.get("kind") == KIND and c.get("status") == "ok"]

    def series(self, cell: dict, name: str) -> list[dict]:
        return read_csv(self.run.path / "cells" / cell["cell_id"] / name)

    def t0(self, cell: dict, holder: list[dict]) -> float:
        return holder[0]["t_epoch"] if holder else 0.0

    def server_rows(self, cell: dict) -> list[list]:
        """Samples while connections are opened and held (not while they are being closed)."""
        holder = self.series(cell, "holder.csv")
        t0 = self.t0(cell, holder)
        t1 = max((r["t_epoch"] for r in holder if r.get("phase") in ("ramp", "hold")), default=t0)
        rows = []
        for s in self.run.samples(cell):
            if not t0 <= s["t_epoch"] <= t1:
                continue
            held = interpolate(holder, s["t_epoch"], "connections_held")
            if held is not None:
                rows.append(
                    [
                        round(s["t_epoch"] - t0, 3),
                        held,
                        s.get("rss_mb"),
                        s.get("cpu_percent"),
                        s.get("threads"),
                        cell["cell_id"],
                    ]
                )
        return rows

    def client_rows(self, cell: dict) -> list[list]:
        holder = self.series(cell, "holder.csv")
        t0 = self.t0(cell, holder)
        rows, prev = [], None
        for r in (r for r in holder if r.get("phase") in ("ramp", "hold")):
            cpu = None
            if prev and r["t_epoch"] > prev["t_epoch"]:
                cpu = 100 * (r["client_cpu_s"] - prev["client_cpu_s"]) / (r["t_epoch"] - prev["t_epoch"])
            rows.append(
                [
                    round(r["t_epoch"] - t0, 3),
                    r["connections_open"],
                    r["connections_held"],
                    cpu,
                    r["client_rss_mb"],
                    r["failures"],
                    r["connect_timeout"],
                    r["read_timeout"],
                    cell["cell_id"],
                ]
            )
            prev = r
        return rows

    def queue_rows(self, cell: dict) -> list[list]:
        """The kernel's view while the holder ran (sockets.csv also covers the idle settle before it)."""
        holder = self.series(cell, "holder.csv")
        t0 = self.t0(cell, holder)
        t1 = holder[-1]["t_epoch"] if holder else t0
        return [
            [round(r["t_epoch"] - t0, 3), r["server_established"], r["accept_queue"], cell["cell_id"]]
            for r in self.series(cell, "sockets.csv")
            if t0 <= r["t_epoch"] <= t1
        ]

    def write(self, name: str, what: str, columns: list[str], rows_of) -> str:
        launches = any((num(c.get("repetition")) or 1) > 1 for c in self.cells)
        blocks = [
            (label(c, launches), rows_of(c) or [[float("nan")] * (len(columns) - 1) + [c["cell_id"]]])
            for c in self.cells
        ]
        write_blocks(self.data_dir / f"{name}.dat", f"{what} (run {self.run.run_id})", columns, blocks)
        return f"{name}.dat"

    def loops(self) -> str:
        return ", ".join(sorted({str(c.get("client_event_loop") or "?") for c in self.cells}))

    def jobs(self) -> list[ChartJob]:
        if not self.cells:
            return []
        common = {
            "nseries_1": len(self.cells),
            "colors_1": colors(self.cells),
            "panels": 1,
            "slopes": " ".join(fmt(num(c.get("rss_per_connection_kb"))) for c in self.cells),
            "intercepts": " ".join(fmt(num(c.get("rss_fit_intercept_mb"))) for c in self.cells),
            "targets": " ".join(fmt(num(c.get("connections_target"))) for c in self.cells),
            "limits": " ".join(str(c.get("max_connections")) for c in self.cells if c.get("max_connections")),
        }
        server = self.write(
            "hold_server",
            "seed 003: server samples against connections held",
            ["t_s", "connections_held", "rss_mb", "cpu_percent", "threads", "cell_id"],
            self.server_rows,
        )
        client = self.write(
            "hold_client",
            "seed 003: the holder's own timeline",
            [
                "t_s",
                "connections_open",
                "connections_held",
                "client_cpu_percent",
                "client_rss_mb",
                "failures",
                "connect_timeout",
                "read_timeout",
                "cell_id",
            ],
            self.client_rows,
        )
        queue = self.write(
            "hold_queue",
            "seed 003: the kernel's view of the server port",
            ["t_s", "server_established", "accept_queue", "cell_id"],
            self.queue_rows,
        )
        return [
            ChartJob(
                "hold_server",
                "hold_server.gp",
                "Seed 003: server memory, CPU and threads against keep-alive connections held",
                "Each point is one server sample (4 a second) placed at the number of connections the "
                "holder had held at that moment (first HEAD answered). RSS: the slope is the memory per "
                "connection (rss_per_connection_kb in the record, least squares while the count rises). "
                "CPU: while connections are being opened (10 every 10 ms) and each sends a HEAD every "
                "10 s. Threads: the process tree's threads (an event loop stays at one)." + HOW_LAUNCHES,
                {**common, "file_1": server},
                [server],
            ),
            ChartJob(
                "hold_limit",
                "hold_limit.gp",
                "Seed 003: connections held and failures over time (Tomcat's maxConnections biting)",
                "Top: connections the client holds (solid: a HEAD answered) and has open (dashed: TCP "
                "connected, including those waiting unaccepted in the server's accept queue); dotted grey: "
                "Tomcat's maxConnections. Bottom: the client's failures so far (solid: connect timeouts, "
                "dashed: HEADs never answered) and the accept queue as the kernel sees it (thin)." + HOW_LAUNCHES,
                {**common, "file_1": client, "queuefile": queue},
                [client, queue],
            ),
            ChartJob(
                "hold_client",
                "hold_client.gp",
                f"Seed 003: the client's own CPU and memory (the holder: {self.loops()}, one core)",
                "The holder's CPU (percent of one core, from its own cpu_times) over time, and its resident "
                "memory against the connections it has open." + HOW_LAUNCHES,
                {**common, "file_1": client},
                [client],
            ),
        ]


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    return with_headings(HoldCharts(run, data_dir).jobs(), HEADINGS)
