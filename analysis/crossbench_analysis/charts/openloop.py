"""Open-loop charts (cells of kind "open_loop"): latency percentiles against the offered rate per server (the
hockey stick), with each server's predicted capacity; achieved against offered rate; and, where a closed-loop
peak cell set the rate (rates = "auto"), closed-loop and open-loop latency distributions side by side."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from crossbench import loadgen, stats
from crossbench.loadgen.base import LoadgenError
from crossbench_analysis.judge import capacity_marks
from crossbench_analysis.read.runinfo import Run, is_valid, num

from .kit import ChartJob, flagged, missing_note, with_headings
from .kit_files import write_blocks
from .kit_intervals import interval_columns, interval_key, with_intervals
from .kit_labels import panel_style, series_of, shades_in_order

KIND = "open_loop"
HEADINGS = {
    "openloop_latency": "Open loop: latency against offered rate",
    "openloop_achieved": "Open loop: achieved against offered rate",
    "openloop_distribution": "Open loop against closed loop at the same throughput",
}
# Percentiles drawn for a full distribution (open loop keeps every request): dense where the tail bends.
CURVE_PERCENTILES = (*range(1, 90), *(90 + i / 2 for i in range(19)), 99.5, 99.7, 99.8, 99.9, 99.95, 99.99)
TOOL_PERCENTILES = ("50", "75", "90", "99", "99.9")  # of a closed-loop tool's own histogram
SCHEDULES = {"oha": "oha -q RATE --latency-correction", "k6": "k6's constant-arrival-rate executor"}


def open_cells(run: Run) -> list[dict]:
    return [c for c in run.cells if c.get("kind") == KIND]


def panel_of(cell: dict) -> str:
    delay = num(cell.get("delay_ms")) or 0
    return f"{cell.get('group')}" + (f"_d{int(delay)}" if delay else "")


def panels(cells: list[dict]) -> list[tuple[str, str]]:
    """[(key, title)] in run order: one panel per group and delay."""
    found: dict[str, str] = {}
    for c in sorted(cells, key=lambda c: num(c.get("index")) or 0):
        delay = num(c.get("delay_ms")) or 0
        found.setdefault(
            panel_of(c), f"{c.get('group')}: {c.get('endpoint')}" + (f", delay {delay / 1000:g} s" if delay else "")
        )
    return list(found.items())


def capacity(cell: dict) -> float | None:
    """What the server's parallel limit predicts it answers per second: limit / delay (Tomcat sync: maxThreads /
    delay, gunicorn: workers / delay); None where waiting holds nothing or there is no delay."""
    limit, delay = num(cell.get("parallel_limit")), num(cell.get("delay_ms"))
    return limit * 1000 / delay if limit and delay else None


def by_rate(cells: list[dict]) -> list[dict]:
    return sorted(cells, key=lambda c: (num(c.get("rate")) or 0, num(c.get("repetition")) or 0))


def per_panel(
    run: Run, data_dir: Path, chart: str, cells: list[dict], columns: list[str], row_of, marks=None
) -> tuple[dict, list]:
    """One data file per panel, a block per series (server setting), rows in offered-rate order. `marks`, given
    each series' cells of a panel, returns more of the panel's parameters (a capacity search's target and
    brackets: capacity_marks.marks)."""
    series, of_cell = series_of(cells, panel_of)
    params: dict = interval_key(cells)
    files, keyed = [], {}
    for p, (key, title) in enumerate(panels(cells), 1):
        here = [c for c in cells if panel_of(c) == key]
        present = [s for s in series if any(of_cell[c["cell_id"]] is s for c in here)]
        name = f"{chart}_{key}.dat"
        write_blocks(
            data_dir / name,
            f"{chart}, panel '{title}' (run {run.run_id}); <figure>_mean, _lo, _hi: "
            "the point's mean over its launches and its 95 % interval (NaN with one launch)",
            columns + interval_columns(columns, row_of),
            [
                (
                    s.label,
                    with_intervals([c for c in by_rate(here) if of_cell[c["cell_id"]] is s], row_of, run.launch_rule),
                )
                for s in present
            ],
        )
        files.append(name)
        capacities = [next((capacity(c) for c in here if of_cell[c["cell_id"]] is s), None) for s in present]
        params.update(
            {
                f"file_{p}": name,
                f"title_{p}": title,
                **panel_style(p, present, keyed),
                f"capacity_{p}": " ".join(f"{v:g}" if v else "NaN" for v in capacities),
                f"values_{p}": sum(1 for c in here if num(c.get("rate_achieved")) is not None),
            }
        )
        if marks:
            series_cells = [[c for c in here if of_cell[c["cell_id"]] is s] for s in present]
            params.update({f"{key}_{p}": value for key, value in marks(series_cells).items()})
    params["panels"] = len(files)
    return params, files


def schedules(cells: list[dict]) -> str:
    """How the cells' generators keep their schedule, each tool once: 'oha -q RATE --latency-correction'."""
    tools = dict.fromkeys(str(c.get("loadgen")) for c in cells)
    return ", ".join(SCHEDULES.get(tool, tool) for tool in tools)


def latency_chart(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob:
    searches = capacity_marks.outcomes(run)
    params, files = per_panel(
        run,
        data_dir,
        "openloop_latency",
        cells,
        ["rate", "p50_ms", "p99_ms", "p999_ms", "rate_achieved", "valid", "repetition", "cell_id"],
        lambda c: [
            num(c.get("rate")),
            num(c["latency_ms"].get("p50")),
            num(c["latency_ms"].get("p99")),
            num(c["latency_ms"].get("p999")),
            num(c.get("rate_achieved")),
        ],
        capacity_marks.marks(searches) if searches else None,
    )
    search_note = (
        " Capacity searches: the dashed black line is the p99 target, and the thick bar on it in a "
        "series' colour runs from the highest rate shown to hold it to the lowest shown not to."
        if searches
        else ""
    )
    params["nflagged"] = flagged(cells, "latency_ms.p99")
    return ChartJob(
        "openloop_latency",
        "openloop_latency.gp",
        "Open loop: latency p50, p99, p99.9 against the offered rate (latency from each request's scheduled send time)",
        f"Requests sent on a fixed schedule whatever the server does ({schedules(cells)}), "
        "latency counted from each request's scheduled time, so a server that stalls shows its whole "
        "queue (no coordinated omission). Solid: p50; dashed: p99; dotted: p99.9; log scale. Dotted "
        "vertical line in a series' colour: the capacity its parallel limit predicts (Tomcat's "
        "maxThreads / delay, gunicorn's workers / delay); event loops and virtual threads have none. "
        "Hollow points: flagged cells (unsustainable: the server did not keep up, or the generator "
        "fell behind its schedule). Bars: each point's 95 % interval over its launches (none with one "
        "launch)." + search_note,
        params,
        files,
        missing_note(cells, "latency_ms.p99"),
    )


def achieved_chart(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob:
    params, files = per_panel(
        run,
        data_dir,
        "openloop_achieved",
        cells,
        ["rate", "rate_achieved", "valid", "repetition", "cell_id"],
        lambda c: [num(c.get("rate")), num(c.get("rate_achieved"))],
    )
    params["nflagged"] = flagged(cells, "rate_achieved")
    return ChartJob(
        "openloop_achieved",
        "openloop_achieved.gp",
        "Open loop: answers per second against requests offered per second",
        "Answered requests per second over the window against the offered rate. On the dashed "
        "diagonal the server kept up; below it, the rest waited in a queue or were never sent. The "
        "dotted vertical lines are the predicted capacities, as in the latency chart. Bars: each "
        "point's 95 % interval over its launches (none with one launch).",
        params,
        files,
        missing_note(cells, "rate_achieved"),
    )


def adapter(cell: dict):
    """The load generator adapter that measured a cell (crossbench.loadgen), None for one this checkout lacks."""
    try:
        return loadgen.get(str(cell.get("loadgen")))
    except LoadgenError:
        return None


def open_curve(run: Run, cell: dict) -> list[tuple[float, float]]:
    """(percentile, latency ms) over every answered request of a cell whose load generator keeps one row per
    request (its LoadGenerator's requests); the record's own percentiles when the rows are not there (a run directory
    copied without them)."""
    tool = adapter(cell)
    values = []
    if tool is not None and tool.requests is not None:
        try:
            values = sorted(r.latency_ms for r in tool.requests(run.path / "cells" / cell["cell_id"]))
        except (LoadgenError, OSError, ValueError, KeyError, sqlite3.Error):
            values = []
    if values:
        return [(p, stats.nearest_rank(values, p)) for p in CURVE_PERCENTILES]
    names = {"p50": 50, "p90": 90, "p99": 99, "p999": 99.9}
    return [
        (p, num(cell["latency_ms"].get(name)))
        for name, p in names.items()
        if num(cell["latency_ms"].get(name)) is not None
    ]


def tool_percentiles(run: Run, cell: dict) -> dict:
    """The load generator's own latency percentiles (µs by percentile), read back from its raw output by its
    adapter (parse(): the histogram's, `latency_us`); {} when its output has none or is not there."""
    tool = adapter(cell)
    try:
        result = tool.parse(run.path / "cells" / cell["cell_id"]) if tool else None
    except (LoadgenError, OSError, ValueError, KeyError, TypeError):
        return {}
    return ((result.extra.get("latency_us") or {}).get("percentiles") or {}) if result else {}


def closed_curve(run: Run, cell: dict) -> list[tuple[float, float]]:
    """(percentile, latency ms) of a closed-loop cell: its load generator's own percentiles, else the record's."""
    percentiles = tool_percentiles(run, cell)
    if percentiles:
        return [(float(p), percentiles[p] / 1000) for p in TOOL_PERCENTILES if p in percentiles]
    names = {"p50": 50, "p90": 90, "p99": 99}
    return [
        (p, num(cell["latency_ms"].get(name)))
        for name, p in names.items()
        if num(cell["latency_ms"].get(name)) is not None
    ]


def distribution_chart(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    """Each open-loop cell whose rate came from a closed-loop peak cell, beside that cell."""
    peaks = {c["cell_id"]: c for c in run.cells if c.get("status") == "ok"}
    pairs = [(peaks[c["peak_cell"]], c) for c in cells if c.get("peak_cell") in peaks and c.get("status") == "ok"]
    if not pairs:
        return None
    blocks, colors = [], []
    pair_shades = shades_in_order([offered.get("server") for _, offered in pairs])
    for (closed, offered), (color, _) in zip(pairs, pair_shades):  # a pair shares its server's colour
        for cell, label, curve in (
            (
                closed,
                f"closed loop: {closed['loadgen']}, {closed['concurrency']} "
                f"connections, {num(closed['rps']):.1f} req/s",
                closed_curve(run, closed),
            ),
            (
                offered,
                f"open loop: {offered['loadgen']} at {num(offered['rate']):g} req/s "
                f"({100 * num(offered['rate_share']):g}% of it)",
                open_curve(run, offered),
            ),
        ):
            blocks.append(
                (
                    f"{offered.get('setting')}, {label}",
                    [[p, 100 / (100 - p), latency, is_valid(cell), cell["cell_id"]] for p, latency in curve],
                )
            )
            colors.append(color)
    name = "openloop_distribution.dat"
    write_blocks(
        data_dir / name,
        f"latency distributions, closed and open loop at the same throughput (run "
        f"{run.run_id}); x = 100 / (100 - percentile)",
        ["percentile", "x", "latency_ms", "valid", "cell_id"],
        blocks,
    )
    return ChartJob(
        "openloop_distribution",
        "openloop_distribution.gp",
        "Latency distribution: closed loop against open loop at the same throughput",
        "For each open-loop cell whose rate was a share of a closed-loop peak (rates = \"auto\"): the "
        "closed-loop cell's latency percentiles (wrk's own, solid, points) and the open-loop cell's, "
        "from every request it sent (dashed). The closed-loop client stops asking while the server "
        "stalls, so its tail leaves that stall out; the open-loop one keeps sending and counts it. "
        "A distribution is one launch's (a curve per cell, no interval): launches' curves are not "
        "averaged, since a percentile of merged requests is not the mean of the launches' percentiles.",
        {
            "panels": 1,
            "file_1": name,
            "nseries_1": len(blocks),
            "colors_1": " ".join(colors),
            "title_1": "percentile (log of 1 / (1 - p))",
            "key_1": 1,
        },
        [name],
    )


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    cells = open_cells(run)
    if not cells:
        return []
    charts = (latency_chart, achieved_chart, distribution_chart)
    return with_headings([chart(run, data_dir, cells) for chart in charts], HEADINGS)
