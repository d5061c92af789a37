"""Charts of seeds 000 and 001 (cells of kind fixed_count, hol_probe, pipelined): data files and chart jobs.

seed000_ab: ab's req/s and time per request beside the article's and the figure without ab's start-up
artifact; seed000_hol: /now latency while a delay endpoint is busy; seed001_pipelined: pipelined hello-world
throughput and latency. One row per cell, in a fixed reading order (x = 1, 2, ...)."""

from __future__ import annotations

import math
from pathlib import Path

from crossbench.figures.points import LaunchRule
from crossbench_analysis.read.runinfo import Run, get, is_valid, num, server_rank

from .kit import ChartJob, with_headings
from .kit_files import write_blocks
from .kit_intervals import interval_columns, interval_key, with_intervals

ENDPOINT_ORDER = {"/delay/sync": 0, "/delay/async": 1, "/hello": 2}
HEADINGS = {
    "seed000_ab": "Seed 000: ab -n -c, beside the article",
    "seed000_hol": "Seed 000: head-of-line blocking",
    "seed001_pipelined": "Seed 001: pipelined hello world",
}


# The drivers whose cells these charts are (crossbench.drivers), one constant each: findings_seeds.py reads them too.
AB_KIND, HOL_KIND, PIPELINED_KIND = "fixed_count", "hol_probe", "pipelined"


def _ordered(cells: list[dict], kind: str) -> list[dict]:
    mine = [
        c
        for c in cells
        if c.get("kind") == kind
        and c.get("status") == "ok"
        and (kind != AB_KIND or c.get("endpoint") in ENDPOINT_ORDER)
    ]  # seed 004's ab cells: seed004.py
    return sorted(
        mine,
        key=lambda c: (
            server_rank(c.get("server")) if kind == PIPELINED_KIND else -server_rank(c.get("server")),
            ENDPOINT_ORDER.get(c.get("endpoint"), 9),
            num(c.get("processes")) or 0,
            num(c.get("repetition")) or 0,
        ),
    )


def _name(cell: dict) -> str:
    server = str(cell.get("server") or "?").capitalize()
    if (num(cell.get("processes")) or 1) > 1:
        server += f" x{int(num(cell['processes']))}"
    return server


def _short(cell: dict) -> str:
    """/delay/sync -> sync: the axis labels stay short."""
    return str(cell.get("endpoint") or "").rsplit("/", 1)[-1]


def params(file: str, rows: list[list], here: list[dict], *figures: str) -> dict:
    """The chart's parameters: its file, the x axis's labels (ncells, label_1 .. label_N, spaces intact),
    how many cells are flagged and how many have a value to draw."""
    return {
        "panels": 1,
        "file_1": file,
        "ncells": len(rows),
        **{f"label_{row[0]}": row[1] for row in rows},
        **interval_key(here),
        "nflagged": sum(1 for c in here if not is_valid(c)),
        "values_1": sum(1 for c in here if any(num(get(c, f)) is not None for f in figures)),
    }


def log_range(name: str, values: list) -> dict:
    """A log axis that follows the data: from a power of ten under the smallest value to room above the
    largest for its label ({name}_lo, {name}_hi; 1..10 when there is no value)."""
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return {f"{name}_lo": 1.0, f"{name}_hi": 10.0}
    return {f"{name}_lo": float(10 ** math.floor(math.log10(min(values)))), f"{name}_hi": max(values) * 4.0}


def ab_chart(cells: list[dict], data_dir: Path, run_id: str, rule: LaunchRule) -> ChartJob | None:
    here = _ordered(cells, AB_KIND)
    if not here:
        return None
    x_of = {c["cell_id"]: x for x, c in enumerate(here, 1)}

    def row_of(c):
        ref = get(c, "ab.reference") or {}
        return [
            x_of[c["cell_id"]],
            f"{_name(c)} {_short(c)}",
            num(ref.get("rps")),
            num(get(c, "ab.reported.rps")),
            num(c.get("rps_startup_free")),
            num(ref.get("mean_ms")),
            num(get(c, "ab.reported.time_per_request_ms")),
            num(get(c, "ab.startup_free.time_per_request_ms")),
        ]

    rows = with_intervals(here, row_of, rule, first=2)
    columns = [
        "x",
        "label",
        "article_rps",
        "ab_rps",
        "startup_free_rps",
        "article_tpr_ms",
        "ab_tpr_ms",
        "startup_free_tpr_ms",
        "valid",
        "repetition",
        "cell_id",
    ]
    columns += interval_columns(columns, row_of, first=2)
    c0 = here[0]
    scales = {
        **log_range("rps", [v for row in rows for v in row[2:5]]),
        **log_range("tpr", [v for row in rows for v in row[5:8]]),
    }
    write_blocks(
        data_dir / "seed000_ab.dat",
        f"seed 000, ab per cell (run {run_id})",
        columns,
        [(f"ab -n {get(c0, 'requests_planned')} -c {c0.get('concurrency')}", rows)],
    )
    return ChartJob(
        "seed000_ab",
        "seed000_ab.gp",
        f"Seed 000: ab -n {get(c0, 'requests_planned')} -c {c0.get('concurrency')}, {c0.get('delay_ms')} ms delay "
        "- the article, ab here, and ab without its start-up artifact",
        "Requests per second and ab's 'Time per request (mean)' (C x time taken / n) per server and endpoint. "
        "Grey: the article's figures (Tornado 4.2.1, one process). Coloured: ab here. Hatched: the same run "
        "without ab's lone first request (Debian's ab sends it alone and opens the other C-1 connections only "
        "when it is answered: one extra round of the delay wherever the server answers C at once). A group per "
        "launch; the black bar on each of ab's figures is its point's 95 % interval over launches (none with one "
        "launch).",
        {**params("seed000_ab.dat", rows, here, "rps"), **scales},
        ["seed000_ab.dat"],
    )


def hol_chart(cells: list[dict], data_dir: Path, run_id: str, rule: LaunchRule) -> ChartJob | None:
    here = _ordered(cells, HOL_KIND)
    if not here:
        return None
    x_of = {c["cell_id"]: x for x, c in enumerate(here, 1)}

    def row_of(c):
        return [
            x_of[c["cell_id"]],
            f"{_name(c)}, {_short(c)} busy",
            num(get(c, "latency_ms.p50")),
            num(get(c, "latency_ms.p99")),
            num(get(c, "latency_ms.max")),
            c.get("probes_sent"),
        ]

    rows = with_intervals(here, row_of, rule, first=2)
    columns = ["x", "label", "p50_ms", "p99_ms", "max_ms", "probes", "valid", "repetition", "cell_id"]
    write_blocks(
        data_dir / "seed000_hol.dat",
        f"seed 000, /now probe per cell (run {run_id})",
        columns + interval_columns(columns, row_of, first=2),
        [("/now latency", rows)],
    )
    c0 = here[0]
    return ChartJob(
        "seed000_hol",
        "seed000_hol.gp",
        f"Seed 000, A then C: {c0.get('probe_path', '/now')} latency while {c0.get('concurrency')} connections "
        f"keep a {c0.get('delay_ms')} ms delay busy",
        "Sequential probes (one new connection each, one every "
        f"{num(c0.get('probe_interval_ms')) or 0:g} ms or at once after a late answer): p50, p99 and max of "
        "the probe's latency, log scale; the number above each group is how many probes were answered (a "
        "blocked event loop lets few through). A group per launch; black bars: the point's 95 % interval of p50 "
        "and p99 over launches (none with one launch).",
        params("seed000_hol.dat", rows, here, "latency_ms.p50"),
        ["seed000_hol.dat"],
    )


def pipelined_chart(cells: list[dict], data_dir: Path, run_id: str, rule: LaunchRule) -> ChartJob | None:
    here = _ordered(cells, PIPELINED_KIND)
    if not here:
        return None
    x_of = {c["cell_id"]: x for x, c in enumerate(here, 1)}

    def row_of(c):
        return [
            x_of[c["cell_id"]],
            _name(c),
            num(c.get("rps")),
            num(c.get("batch_latency_mean_ms")),
            num(get(c, "latency_ms.max")),
            num(c.get("cpu_percent")),
        ]

    rows = with_intervals(here, row_of, rule, first=2)
    columns = [
        "x",
        "label",
        "rps",
        "batch_latency_mean_ms",
        "wrk_max_ms",
        "cpu_percent",
        "valid",
        "repetition",
        "cell_id",
    ]
    write_blocks(
        data_dir / "seed001_pipelined.dat",
        f"seed 001, pipelined hello world per cell (run {run_id})",
        columns + interval_columns(columns, row_of, first=2),
        [("pipelined /hello", rows)],
    )
    c0 = here[0]
    return ChartJob(
        "seed001_pipelined",
        "seed001_pipelined.gp",
        f"Seed 001: /hello, wrk {c0.get('concurrency')} connections x {c0.get('pipeline')} pipelined",
        "Left: responses per second. Right: mean latency of a pipelined batch by Little's law (C x depth / rps; "
        "wrk 4.1.0's own pipelined percentiles are wrong) and wrk's max. The servers are pinned to "
        f"cores {c0.get('server_cpus')}: N Tornado processes share them. A bar per launch; black bars: the "
        "point's 95 % interval over launches (none with one launch).",
        {**params("seed001_pipelined.dat", rows, here, "rps"), **log_range("lat", [v for r in rows for v in r[3:5]])},
        ["seed001_pipelined.dat"],
    )


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    """The charts of whichever of these cells the run holds (none for a run without them)."""
    charts = (ab_chart, hol_chart, pipelined_chart)
    return with_headings([chart(run.cells, data_dir, run.run_id, run.launch_rule) for chart in charts], HEADINGS)
