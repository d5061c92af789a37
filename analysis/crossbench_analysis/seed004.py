"""Seed 004's charts (database cells: /db, /queries, /db/kv, /db/slow): the article's table as a chart, per
group (p50 and p99 per stack, sorted by p99, with req/s beside), where a worker sweep counts only its best step;
and req/s against the process count of each worker sweep, the best step marked."""
from __future__ import annotations

from pathlib import Path

from .kit import PALETTES, ChartJob, shade, tail, with_headings, write_blocks
from .runinfo import SERVER_ORDER, Run, get, is_valid, num

DB_ENDPOINTS = ("/db", "/queries", "/db/kv", "/db/slow")
HEADINGS = {"seed004_workers": "Seed 004: throughput against worker processes"}
TABLE_HEADING = "Seed 004: p50, p99 and req/s per stack"
TABLE_MAX_LEVELS = 2          # groups with more concurrency levels than this get no table


def db_cells(run: Run) -> list[dict]:
    return [c for c in run.cells if c.get("endpoint") in DB_ENDPOINTS and c.get("status") == "ok"
            and c.get("kind") != "open_loop"]


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


def best_of_sweeps(cells: list[dict]) -> tuple[list[dict], dict[str, dict]]:
    """The cells with each worker sweep reduced to its best step (most req/s), and {sweep: best cell}."""
    best: dict[str, dict] = {}
    for c in cells:
        if c.get("sweep") and (num(c.get("rps")) or 0) > (num(best.get(c["sweep"], {}).get("rps")) or -1):
            best[c["sweep"]] = c
    return [c for c in cells if not c.get("sweep") or best[c["sweep"]] is c], best


def table_chart(run: Run, data_dir: Path, group: str, cells: list[dict], best: dict[str, dict]) -> ChartJob:
    rows_of = sorted(cells, key=lambda c: (num(get(c, "latency_ms.p99")) is None,
                                           num(get(c, "latency_ms.p99")) or 0))
    rows, colors = [], []
    for x, c in enumerate(rows_of, 1):
        label = stack_label(c)
        if c.get("sweep"):
            label += f" (best of {sum(1 for o in run.cells if o.get('sweep') == c['sweep'])})"
        rows.append([x, label, num(get(c, "latency_ms.p50")), num(get(c, "latency_ms.p99")), num(c.get("rps"))]
                    + tail(c))
        colors.append(PALETTES.get(c.get("server"), PALETTES[None])[0])
    name = f"seed004_table_{group}"
    write_blocks(data_dir / f"{name}.dat", f"seed 004 table, group {group} (run {run.run_id}): one row per stack, "
                 "sorted by p99", ["x", "label", "p50_ms", "p99_ms", "rps", "valid", "repetition", "cell_id"],
                 [("stacks", rows)])
    c0 = rows_of[0]
    how = f"{c0.get('loadgen')}, C={c0.get('concurrency')}, {c0.get('endpoint')}"
    return ChartJob(
        name, "seed004_table.gp", f"Seed 004, {group}: p50 and p99 per stack (sorted by p99), and req/s",
        f"Group {group} ({how}): each stack's median and 99th-percentile latency (left, log scale) and its "
        "requests per second (right), one row per stack sorted by p99 as the article's table is. A worker sweep "
        "counts with its best step (most req/s; the sweeps chart shows every step). Hollow circle: a flagged "
        "cell.",
        {"panels": 1, "file_1": f"{name}.dat", "nstacks": len(rows), "colors_1": " ".join(colors),
         **{f"label_{row[0]}": row[1] for row in rows}, "nflagged": sum(1 for c in cells if not is_valid(c)),
         "values_1": sum(1 for c in cells if num(get(c, "latency_ms.p99")) is not None)},
        [f"{name}.dat"], heading=f"{TABLE_HEADING}: {group}")


def workers_chart(run: Run, data_dir: Path, cells: list[dict], best: dict[str, dict]) -> ChartJob | None:
    sweeps = sorted({c["sweep"] for c in cells if c.get("sweep")},
                    key=lambda s: (SERVER_ORDER.get(best[s].get("server"), 9), s))
    if not sweeps:
        return None
    blocks, colors, counters = [], [], {}
    for sweep in sweeps:
        steps = sorted((c for c in cells if c.get("sweep") == sweep), key=lambda c: num(c.get("sweep_step")) or 0)
        blocks.append((f"{sweep} (best: {best[sweep].get('sweep_step')})",
                       [[num(c.get("sweep_step")), num(c.get("rps")), 1 if c is best[sweep] else 0] + tail(c)
                        for c in steps]))
        colors.append(shade(best[sweep].get("server"), counters)[0])
    name = "seed004_workers"
    write_blocks(data_dir / f"{name}.dat", f"seed 004 worker sweeps (run {run.run_id}): req/s per process count",
                 ["processes", "rps", "best", "valid", "repetition", "cell_id"], blocks)
    return ChartJob(
        name, "seed004_workers.gp", "Seed 004: requests per second against worker processes, each sweep",
        "Each worker sweep (worker_sweep = true): 1, 2, 3, ... processes up to 2 x the server's cores + 1, in "
        "order, stopped once throughput dropped two steps in a row (the article's rule; steps not run are not "
        "drawn). Large circle: the best step, the one the table uses.",
        {"panels": 1, "file_1": f"{name}.dat", "nseries_1": len(blocks), "colors_1": " ".join(colors),
         "nflagged": sum(1 for c in cells if c.get("sweep") and not is_valid(c)),
         "values_1": sum(1 for c in cells if c.get("sweep") and num(c.get("rps")) is not None)},
        [f"{name}.dat"])


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    cells = db_cells(run)
    if not cells:
        return []
    reduced, best = best_of_sweeps(cells)
    tables = []
    for group in dict.fromkeys(c.get("group") for c in cells):
        here = [c for c in reduced if c.get("group") == group]
        levels = sorted({num(c.get("concurrency")) or 0 for c in here})
        if len(levels) > TABLE_MAX_LEVELS:
            continue          # a concurrency sweep: the charts against concurrency show it
        for level in levels:
            key = group if len(levels) == 1 else f"{group}_c{int(level)}"
            tables.append(table_chart(run, data_dir, key, [c for c in here if num(c.get("concurrency")) == level],
                                      best))
    return tables + with_headings([workers_chart(run, data_dir, cells, best)], HEADINGS)
