"""Seed 004's charts (database cells: /db, /queries, /db/kv, /db/slow): the article's table as a chart, per
group (p50 and p99 per stack, sorted by p99, with req/s beside), where a worker sweep counts only its best step;
the same stacks' CPU split between server, proxy, pooler and database; their pools' waiting requests over time;
and req/s against the process count of each worker sweep, the best step marked."""

from __future__ import annotations

from pathlib import Path

from crossbench import known_servers
from crossbench.endpoints import SEED004
from crossbench.servers import proxy
from crossbench_analysis.judge.decisions import best_of_sweeps, tied_steps
from crossbench_analysis.read.runinfo import Run, get, is_valid, num, offered_rate, server_rank

from .kit import ChartJob, with_headings
from .kit_files import write_blocks
from .kit_intervals import interval_key, interval_of, point_interval, same_point, tail
from .kit_labels import palette, shades_in_order

HEADINGS = {
    "seed004_workers": "Seed 004: throughput against worker processes",
    "seed004_pool_waiting": "Seed 004: requests waiting for a database connection",
}
TABLE_HEADING = "Seed 004: p50, p99 and req/s per stack"
CPU_HEADING = "Seed 004: where the CPU goes"
TABLE_MAX_LEVELS = 2  # groups with more concurrency levels than this get no table
# the parts of a stack's CPU, stacked bottom up: (record field, data column, legend, colour); the server's colour
# is its palette's
CPU_PARTS = (
    ("cpu_percent", "server", "server", None),
    ("proxy_cpu_percent", "proxy", proxy().name, "#969696"),
    ("pooler_cpu_percent", "pooler", "PgBouncer", "#e7d4a0"),
    ("db_cpu_percent", "db", "PostgreSQL", "#5b7fa6"),
)
POOL_MAX_PANELS = 6
TABLE_FIGURES = ("latency_ms.p50", "latency_ms.p99", "rps")


def db_cells(run: Run) -> list[dict]:
    return [c for c in run.cells if c.get("endpoint") in SEED004 and c.get("status") == "ok" and not offered_rate(c)]


def stack_label(cell: dict) -> str:
    """The stack in words: the server's setting, its pool, and what stood around it."""
    parts = [str(cell.get("setting") or cell.get("server"))]
    if cell.get("db_connections_total"):
        parts.append(f"pool {cell['db_connections_total']}")
    if cell.get("proxy"):
        parts.append("via nginx")
    if cell.get("pooler"):
        parts.append("via pgbouncer")
    return ", ".join(parts)


def table_chart(run: Run, data_dir: Path, group: str, cells: list[dict], best: dict[str, dict]) -> ChartJob:
    rows_of = by_p99(cells)
    rows, colors = [], []
    for x, c in enumerate(rows_of, 1):
        label = stack_label(c)
        if c.get("sweep"):
            steps = len({o.get("sweep_step") for o in run.cells if o.get("sweep") == c["sweep"]})
            tied = tied_steps(run.cells, c["sweep"])
            label += f" (best of {steps}" + (f"; a tie with {', '.join(map(str, tied))} processes)" if tied else ")")
        rows.append(
            [x, label, num(get(c, "latency_ms.p50")), num(get(c, "latency_ms.p99")), num(c.get("rps"))]
            + tail(c)
            + [
                v
                for f in TABLE_FIGURES
                for v in point_interval(db_cells(run), c, lambda o, f=f: get(o, f), run.launch_rule)
            ]
        )
        colors.append(palette(c.get("server"))[0])
    name = f"seed004_table_{group}"
    write_blocks(
        data_dir / f"{name}.dat",
        f"seed 004 table, group {group} (run {run.run_id}): one row per stack, "
        "sorted by p99; <figure>_mean, _lo, _hi: the point's mean over its launches and 95 % interval",
        [
            "x",
            "label",
            "p50_ms",
            "p99_ms",
            "rps",
            "valid",
            "repetition",
            "cell_id",
            *[f"{n}_{part}" for n in ("p50_ms", "p99_ms", "rps") for part in ("mean", "lo", "hi")],
        ],
        [("stacks", rows)],
    )
    c0 = rows_of[0]
    how = f"{c0.get('loadgen')}, C={c0.get('concurrency')}, {c0.get('endpoint')}"
    return ChartJob(
        name,
        "seed004_table.gp",
        f"Seed 004, {group}: p50 and p99 per stack (sorted by p99), and req/s",
        f"Group {group} ({how}): each stack's median and 99th-percentile latency (left, log scale) and its "
        "requests per second (right), one row per stack sorted by p99 as the article's table is. A worker sweep "
        "counts with its best step (most req/s; the sweeps chart shows every step). A row per launch; black "
        "bars: the point's 95 % interval over its launches (none with one launch). Hollow circle: a flagged cell.",
        {
            "panels": 1,
            "file_1": f"{name}.dat",
            "nstacks": len(rows),
            "colors_1": " ".join(colors),
            **interval_key([o for c in cells for o in same_point(db_cells(run), c)]),
            **{f"label_{row[0]}": row[1] for row in rows},
            "nflagged": sum(1 for c in cells if not is_valid(c)),
            "values_1": sum(1 for c in cells if num(get(c, "latency_ms.p99")) is not None),
        },
        [f"{name}.dat"],
        heading=f"{TABLE_HEADING}: {group}",
    )


def sweep_label(best: dict) -> str:
    """A worker sweep in words: 'tornado processes, /db (group db); best: 3' (not its sweep id)."""
    facts = known_servers.get(best.get("server"))
    unit = (facts.process_knob if facts and facts.process_knob else "processes").replace("_", " ")
    via = "".join(f", via {v}" for v in (best.get("proxy"), best.get("pooler")) if v)
    return (
        f"{best.get('server')} {unit}, {best.get('endpoint')}{via} (group {best.get('group')}); "
        f"best: {best.get('sweep_step')}"
    )


def workers_chart(run: Run, data_dir: Path, cells: list[dict], best: dict[str, dict]) -> ChartJob | None:
    sweeps = sorted(
        {c["sweep"] for c in cells if c.get("sweep")}, key=lambda s: (server_rank(best[s].get("server")), s)
    )
    if not sweeps:
        return None
    blocks = []
    colors = [color for color, _ in shades_in_order([best[sweep].get("server") for sweep in sweeps])]
    for sweep in sweeps:
        steps = sorted((c for c in cells if c.get("sweep") == sweep), key=lambda c: num(c.get("sweep_step")) or 0)
        blocks.append(
            (
                sweep_label(best[sweep]),
                [
                    [num(c.get("sweep_step")), num(c.get("rps")), 1 if c is best[sweep] else 0]
                    + tail(c)
                    + point_interval(steps, c, lambda o: o.get("rps"), run.launch_rule)
                    for c in steps
                ],
            )
        )
    name = "seed004_workers"
    write_blocks(
        data_dir / f"{name}.dat",
        f"seed 004 worker sweeps (run {run.run_id}): req/s per process count",
        ["processes", "rps", "best", "valid", "repetition", "cell_id", "rps_mean", "rps_lo", "rps_hi"],
        blocks,
    )
    return ChartJob(
        name,
        "seed004_workers.gp",
        "Seed 004: requests per second against worker processes, each sweep",
        "Each worker sweep (worker_sweep = true): 1, 2, 3, ... processes up to 2 x the server's cores + 1, in "
        "order, stopped once throughput dropped two steps in a row, beyond the steps' intervals when they have "
        "launches (the article's rule; steps not run are not drawn). The line joins the steps' means over launches, the bars are their 95 % intervals (none with one "
        "launch). Large circle: the best step, the one the table uses.",
        {
            "panels": 1,
            "file_1": f"{name}.dat",
            "nseries_1": len(blocks),
            "colors_1": " ".join(colors),
            **interval_key([c for c in cells if c.get("sweep")]),
            "nflagged": sum(1 for c in cells if c.get("sweep") and not is_valid(c)),
            "values_1": sum(1 for c in cells if c.get("sweep") and num(c.get("rps")) is not None),
        },
        [f"{name}.dat"],
    )


def cpu_chart(run: Run, data_dir: Path, key: str, cells: list[dict]) -> ChartJob:
    """Stacked per stack: the server's CPU, then nginx's, PgBouncer's and PostgreSQL's (each sampled beside it),
    as percent of one core and as CPU milliseconds per request."""
    rows_of = by_p99(cells)
    rows, colors = [], []
    for x, c in enumerate(rows_of, 1):
        parts, stacked, per_request, rps = cpu_figures(c)
        totals = [cpu_figures(o) for o in same_point(db_cells(run), c)]
        rows.append(
            [x, stack_label(c), *parts, *stacked, *per_request, rps]
            + tail(c)
            + interval_of([t[1][-1] for t in totals], run.launch_rule)
            + interval_of([t[2][-1] for t in totals], run.launch_rule)
        )
        colors.append(palette(c.get("server"))[0])
    names = [column for _, column, _, _ in CPU_PARTS]
    name = f"seed004_cpu_{key}"
    write_blocks(
        data_dir / f"{name}.dat",
        f"seed 004 CPU split, {key} (run {run.run_id}): percent of one core "
        "per part, stacked sums, and the sums as CPU ms per request",
        [
            "x",
            "label",
            *names,
            *(f"upto_{n}" for n in names),
            *(f"ms_upto_{n}" for n in names),
            "rps",
            "valid",
            "repetition",
            "cell_id",
            "upto_db_mean",
            "upto_db_lo",
            "upto_db_hi",
            "ms_upto_db_mean",
            "ms_upto_db_lo",
            "ms_upto_db_hi",
        ],
        [("stacks", rows)],
    )
    return ChartJob(
        name,
        "seed004_cpu.gp",
        f"Seed 004, {key}: CPU per stack, server / nginx / PgBouncer / PostgreSQL",
        "The same stacks as the table beside it, in its order. Left: the mean CPU of each part's process tree "
        "over the measured window, stacked (100 = one core; the server's in its own colour, then nginx, PgBouncer "
        "and PostgreSQL where the cell had them). Right: the same sums per request (CPU ms a request costs the "
        "whole stack). The load generator's CPU is not included. A bar per launch; black bars: the 95 % interval "
        "of the stack's total over its point's launches (none with one launch).",
        {
            "panels": 1,
            "file_1": f"{name}.dat",
            "nstacks": len(rows),
            "colors_1": " ".join(colors),
            **interval_key([o for c in cells for o in same_point(db_cells(run), c)]),
            "part_colors": " ".join(color for *_, color in CPU_PARTS[1:]),
            "part_titles": " ".join(title for _, _, title, _ in CPU_PARTS[1:]),
            **{f"label_{row[0]}": row[1] for row in rows},
            "nflagged": sum(1 for c in cells if not is_valid(c)),
            "values_1": sum(1 for c in cells if num(c.get("cpu_percent")) is not None),
        },
        [f"{name}.dat"],
        heading=f"{CPU_HEADING}: {key}",
    )


def cpu_figures(c: dict) -> tuple[list, list, list, float | None]:
    """A cell's CPU parts (percent of one core), their stacked sums, the sums as CPU ms per request, and rps."""
    parts = [num(c.get(field)) for field, *_ in CPU_PARTS]
    parts = [parts[0]] + [p or 0.0 for p in parts[1:]]  # no proxy or pooler in the cell: none of it
    stacked = [sum(parts[: i + 1]) if parts[0] is not None else None for i in range(len(parts))]
    rps = num(c.get("rps"))
    per_request = [v * 10 / rps if v is not None and rps else None for v in stacked]  # % of a core -> ms
    return parts, stacked, per_request, rps


def first_launches(cells: list[dict]) -> list[dict]:
    """Each point's launch of the lowest repetition: a time series is one launch's (launches' clocks do not align,
    so their samples are not averaged)."""
    return [c for c in cells if c is min(same_point(cells, c), key=lambda o: num(o.get("repetition")) or 0)]


def pool_waiting_chart(run: Run, data_dir: Path, tables: list[tuple[str, list[dict]]]) -> ChartJob | None:
    """Requests waiting for a pooled connection over the measured window (db-pool.csv), a panel per table,
    a line per stack; thin lines: connections lent out."""
    panels = []
    for key, cells in tables:
        series = [(c, run.cell_table(c, "db-pool.csv"), window_of(run, c)) for c in by_p99(first_launches(cells))]
        series = [(c, rows, window) for c, rows, window in series if rows and window]
        if series:
            panels.append((key, series))
    if not panels:
        return None
    panels = panels[:POOL_MAX_PANELS]
    columns = ["t_s", "waiting", "active", "size", "valid", "repetition", "cell_id"]
    params: dict = {"panels": len(panels), "nflagged": 0}
    files = []
    for p, (key, series) in enumerate(panels, 1):
        blocks = []
        colors = [color for color, _ in shades_in_order([c.get("server") for c, _, _ in series])]
        for c, rows, (t0, t1) in series:
            inside = [r for r in rows if t0 - 0.5 <= r["t_epoch"] <= t1 + 0.5]
            blocks.append(
                (
                    stack_label(c),
                    [[r["t_epoch"] - t0, r.get("waiting"), r.get("active"), r.get("size")] + tail(c) for r in inside],
                )
            )
        name = f"seed004_pool_waiting_{key}.dat"
        write_blocks(
            data_dir / name,
            f"seed 004 pool over time, {key} (run {run.run_id}): t_s from the start of "
            "the measured window; counts summed over the server's processes",
            columns,
            blocks,
        )
        files.append(name)
        params.update(
            {
                f"file_{p}": name,
                f"title_{p}": key,
                f"nseries_{p}": len(blocks),
                f"colors_{p}": " ".join(colors),
                f"key_{p}": 1,
                f"values_{p}": sum(1 for _, rows in blocks for r in rows if r[1] is not None),
            }
        )
        params["nflagged"] += sum(1 for c, _, _ in series if not is_valid(c))
    return ChartJob(
        "seed004_pool_waiting",
        "seed004_pool_waiting.gp",
        "Seed 004: requests waiting for a database connection over the measured window",
        "Each stack of the tables above (one panel per table): thick, requests waiting for a pooled connection; "
        "thin, connections lent out (db-pool.csv, summed over the server's processes, 4 a second: Tomcat's from "
        "HikariCP's MBean, the Python servers' own count). A gunicorn sync worker never waits in its pool: its "
        "requests queue in the listening socket instead, where no pool sees them. A line is one launch, the "
        "point's first: a time series has no launches to average (their clocks and bursts do not align), so it "
        "has no interval.",
        params,
        files,
    )


def window_of(run: Run, cell: dict) -> tuple[float, float] | None:
    """The measured window's first and last sample (samples.csv's measure phase)."""
    measure = [r["t_epoch"] for r in run.samples(cell) if r.get("phase") == "measure"]
    return (measure[0], measure[-1]) if measure else None


def by_p99(cells: list[dict]) -> list[dict]:
    return sorted(cells, key=lambda c: (num(get(c, "latency_ms.p99")) is None, num(get(c, "latency_ms.p99")) or 0))


def table_groups(cells: list[dict]) -> list[tuple[str, list[dict]]]:
    """(key, cells) per table: each group with at most TABLE_MAX_LEVELS concurrency levels, one per level."""
    tables = []
    for group in dict.fromkeys(c.get("group") for c in cells):
        here = [c for c in cells if c.get("group") == group]
        levels = sorted({num(c.get("concurrency")) or 0 for c in here})
        if len(levels) > TABLE_MAX_LEVELS:
            continue  # a concurrency sweep: the charts against concurrency show it
        for level in levels:
            key = group if len(levels) == 1 else f"{group}_c{int(level)}"
            tables.append((key, [c for c in here if num(c.get("concurrency")) == level]))
    return tables


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    cells = db_cells(run)
    if not cells:
        return []
    reduced, best = best_of_sweeps(cells)
    tables = table_groups(reduced)
    per_table = [
        job
        for key, here in tables
        for job in (table_chart(run, data_dir, key, here, best), cpu_chart(run, data_dir, key, here))
    ]
    return per_table + with_headings(
        [pool_waiting_chart(run, data_dir, tables), workers_chart(run, data_dir, cells, best)], HEADINGS
    )
