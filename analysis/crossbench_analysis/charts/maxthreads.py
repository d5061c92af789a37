"""The maxthreads experiment's charts: where each setting's ratio bends (maxthreads_knees.py, kept as knees.jsonl),
peak threads vs maxThreads, what the threads cost (RSS, CPU), the static mix per setting, and what a client sees
beyond the connector's queues. Each function returns a ChartJob, or None when the run has nothing for it."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from crossbench.endpoints import is_static
from crossbench.figures.points import LaunchRule
from crossbench.loadgen.base import ERROR_KINDS
from crossbench_analysis.judge import knees as knee_finder
from crossbench_analysis.read.runinfo import Run, get, is_valid, num
from crossbench_analysis.read.setting import fixed_knobs, pool_size

from .kit import ChartJob, flagged, how, missing_note, with_headings
from .kit_files import write_blocks
from .kit_intervals import interval_key, interval_of, point_interval, same_point
from .kit_pools import by_setting, colors, queue_groups, setting, setting_sort, sweep_cells, tomcat_ok
from .maxthreads_knees import knees_chart

COST_FIGURES = ("threads_peak", "rss_peak_mb", "rps", "cpu_percent")


def peak_point(cells: list[dict], rule: LaunchRule) -> list:
    """[mean, low, high] of threads_peak at the point (concurrency) of the cells whose mean peak is highest."""
    found = [point_interval(cells, c, lambda x: x.get("threads_peak"), rule) for c in cells]
    return max((f for f in found if f[0] is not None), key=lambda f: f[0], default=[None, None, None])


def peak_cells(cells: list[dict]) -> list[tuple[str, dict]]:
    """Per setting, its highest-concurrency cell (lowest repetition): where the pool is used the most."""
    return [
        (name, max(mine, key=lambda c: (num(c.get("concurrency")) or 0, -(num(c.get("repetition")) or 0))))
        for name, mine in by_setting(cells)
    ]


def threads_chart(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    """Peak threads vs maxThreads (the plateau seed 002 saw near 220), virtual threads as their own point."""
    settings = by_setting(sweep_cells(cells))
    if len(settings) < 2:
        return None
    platform, virtual = defaultdict(list), []
    with_jdk = knee_finder.jdks_vary(sweep_cells(cells))
    for name, mine in settings:
        peak = max((num(c.get("threads_peak")) for c in mine if num(c.get("threads_peak")) is not None), default=None)
        top = int(max(num(c.get("concurrency")) or 0 for c in mine))
        interval = peak_point(mine, run.launch_rule)
        if pool_size(mine[0]) is None:
            virtual.append([peak, top, *interval])
        else:
            series = f"platform threads, JDK {knee_finder.jdk_feature(mine[0])}" if with_jdk else "platform threads"
            platform[series].append([int(num(pool_size(mine[0]))), peak, top, *interval])
    write_blocks(
        data_dir / "maxthreads_threads.dat",
        f"peak threads per setting over its sweep "
        f"(run {run.run_id}); threads_peak_mean, _lo, _hi: the point (concurrency) with the highest mean, "
        "its 95 % interval over launches",
        ["max_threads", "threads_peak", "max_concurrency", "threads_peak_mean", "threads_peak_lo", "threads_peak_hi"],
        list(platform.items()) or [("platform threads", [])],
    )
    pools = sorted({row[0] for rows in platform.values() for row in rows})
    write_blocks(
        data_dir / "maxthreads_threads_virtual.dat",
        "virtual threads: peak JVM threads",
        ["threads_peak", "max_concurrency", "threads_peak_mean", "threads_peak_lo", "threads_peak_hi"],
        [("virtual threads", virtual)],
    )
    xmax = max(pools or [100])
    return ChartJob(
        "maxthreads_threads",
        "maxthreads_threads.gp",
        "Peak server threads vs Tomcat maxThreads (highest over each setting's concurrency sweep)",
        "Each point: the most threads the Tomcat JVM had at once in any cell of that setting (JVM "
        "housekeeping included). Dotted: threads = maxThreads; the gap above it is the JVM's and "
        "Tomcat's own threads. Virtual threads (right) need no pool: their count is the carriers and "
        "housekeeping. Bar: the 95 % interval over launches of the setting's point with the highest "
        "mean peak (none with one launch).",
        {
            **interval_key(sweep_cells(cells)),
            "file_1": "maxthreads_threads.dat",
            "virtual_file": "maxthreads_threads_virtual.dat",
            "nvirtual": len(virtual),
            "virtual_x": xmax * 2.5,
            "maxthreads": " ".join(str(x) for x in pools),
            "nplatform": max(1, len(platform)),
        },
        ["maxthreads_threads.dat", "maxthreads_threads_virtual.dat"],
    )


def cost_chart(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    """What the threads cost: RSS vs peak threads, and CPU vs throughput, at each setting's highest C."""
    peaks = peak_cells(sweep_cells(cells))
    if len(peaks) < 2:
        return None
    swept = sweep_cells(cells)
    rows = [
        (
            name,
            [
                [
                    num(c.get("threads_peak")),
                    num(c.get("rss_peak_mb")),
                    num(c.get("rps")),
                    num(c.get("cpu_percent")),
                    c.get("concurrency"),
                    is_valid(c),
                    c["cell_id"],
                    *[
                        v
                        for f in COST_FIGURES
                        for v in point_interval(swept, c, lambda x, f=f: x.get(f), run.launch_rule)
                    ],
                ]
            ],
        )
        for name, c in peaks
    ]
    write_blocks(
        data_dir / "maxthreads_cost.dat",
        f"per setting, its highest-concurrency cell "
        f"(run {run.run_id}); <figure>_mean, _lo, _hi: that point's mean over its launches and 95 % "
        "interval",
        [
            "threads_peak",
            "rss_peak_mb",
            "rps",
            "cpu_percent",
            "concurrency",
            "valid",
            "cell_id",
            *[f"{f}_{part}" for f in COST_FIGURES for part in ("mean", "lo", "hi")],
        ],
        rows,
    )
    heaps = {str(get(c, "server_settings.heap") or "the JVM's default") for _, c in peaks}
    return ChartJob(
        "maxthreads_cost",
        "maxthreads_cost.gp",
        "What the threads cost: memory and CPU per Tomcat setting at its highest concurrency",
        "Left: peak resident memory vs peak threads, one point per setting (the slope is what a "
        "thread costs in memory). Right: the server's CPU (100 = one core) vs responses per second. "
        "Each point is the setting's highest-concurrency cell of the sweep; the cross, its point's 95 % "
        "interval over launches in both figures (none with one launch). Heap: "
        f"{', '.join(sorted(heaps))}; with a heap the JVM sizes from the machine's memory, RSS follows "
        "the heap more than the "
        "threads.",
        {
            "file_1": "maxthreads_cost.dat",
            "nseries_1": len(rows),
            "colors_1": colors(len(rows), cells),
            **interval_key([c for _, peak in peaks for c in same_point(swept, peak)]),
            "nflagged": flagged([c for _, c in peaks], "rss_peak_mb"),
        },
        ["maxthreads_cost.dat"],
        missing_note([c for _, c in peaks], "rss_peak_mb"),
    )


def static_chart(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    """The static mix's throughput per setting, a series per concurrency (mean, min and max of repetitions)."""
    static = [c for c in tomcat_ok(cells) if is_static(c.get("endpoint"))]
    settings = by_setting(static)
    if len(settings) < 2:
        return None
    by_c: dict[int, list[list]] = defaultdict(list)
    for x, (name, mine) in enumerate(settings):
        for c in sorted({m["concurrency"] for m in mine}):
            rps = [num(m.get("rps")) for m in mine if m["concurrency"] == c and num(m.get("rps")) is not None]
            if rps:
                mean, low, high = interval_of(rps, run.launch_rule)
                by_c[c].append([x, name, mean, min(rps), max(rps), len(rps), low, high])
    blocks = [(f"{c} concurrent clients (C={c})", rows) for c, rows in sorted(by_c.items())]
    write_blocks(
        data_dir / "maxthreads_static.dat",
        f"static mix per setting (run {run.run_id}); rps_lo, rps_hi: "
        "the 95 % interval of the mean over launches (NaN with one launch)",
        ["x", "setting", "rps_mean", "rps_min", "rps_max", "cells", "rps_lo", "rps_hi"],
        blocks,
    )
    return ChartJob(
        "maxthreads_static",
        "maxthreads_static.gp",
        f"Static mix: responses per second per Tomcat setting ({how(static)})",
        "Seed 002's second conclusion put to the test: do more threads help short requests? One "
        "series per number of clients; the point is the mean of the launches, the bar its 95 % "
        "interval (none with one launch; an interval wider than the differences between settings means "
        "the machine, not the setting, decided).",
        {
            **interval_key(static),
            "file_1": "maxthreads_static.dat",
            "nseries_1": len(blocks),
            "nsettings": len(settings),
            "colors_1": colors(len(blocks), cells),
        },
        ["maxthreads_static.dat"],
    )


def queues_chart(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    """Beyond maxThreads + acceptCount and maxConnections: requests served, connections Tomcat held, errors;
    a block per setting and delay of the queue-limit groups, the limits drawn from the first."""
    groups = sorted(g for g in queue_groups(cells) if g)
    if not groups:
        return None
    here = [c for c in tomcat_ok(cells) if c.get("group") in groups and num(c.get("delay_ms"))]
    series: dict[str, list[dict]] = defaultdict(list)
    with_jdk = knee_finder.jdks_vary(here)
    for c in sorted(
        here, key=lambda c: (num(c["delay_ms"]), setting_sort(c, with_jdk), num(c.get("concurrency")) or 0)
    ):
        series[", ".join([setting(c, with_jdk), *fixed_knobs(c), f"delay {num(c['delay_ms']) / 1000:g} s"])].append(c)
    blocks = [
        (
            label,
            [
                [
                    c["concurrency"],
                    num(c.get("rps")),
                    num(c.get("tomcat_connection_count_peak")),
                    *[num(get(c, f"errors.{k}")) for k in ERROR_KINDS],
                    num(c.get("efficiency_ratio")),
                    num(c.get("latency_ratio")),
                    is_valid(c),
                    c["cell_id"],
                    *point_interval(here, c, lambda x: x.get("rps"), run.launch_rule),
                ]
                for c in mine
            ],
        )
        for label, mine in series.items()
    ]
    write_blocks(
        data_dir / "maxthreads_queues.dat",
        f"queue limits (run {run.run_id}); rps_mean, _lo, _hi: the "
        "point's mean over its launches and 95 % interval (NaN with one launch)",
        [
            "concurrency",
            "rps",
            "connections_held",
            *ERROR_KINDS,
            "efficiency_ratio",
            "latency_ratio",
            "valid",
            "cell_id",
            "rps_mean",
            "rps_lo",
            "rps_hi",
        ],
        blocks,
    )
    first = next(iter(series.values()))[0]
    limit_queue = (num(pool_size(first)) or 0) + (num(first.get("accept_count")) or 0)
    note = f"limits drawn for the first of {len(blocks)} series" if len(blocks) > 1 else ""
    return ChartJob(
        "maxthreads_queues",
        "maxthreads_queues.gp",
        f"Beyond the connector's queues (group {', '.join(groups)}): what the client sees",
        "Responses per second, the connections Tomcat held at once (its connectionCount, from the JVM "
        "probe) and the load generator's errors by kind, against concurrent clients. Vertical lines: "
        "maxThreads + acceptCount and maxConnections. Clients beyond them wait outside Tomcat and wrk "
        "counts no error for them (runner/crossbench/loadgen/README.md): only the flat throughput and "
        "the held-connection ceiling show them. Bars: each point's 95 % interval of responses per "
        "second over launches (none with one launch).",
        {
            **interval_key(here),
            "file_1": "maxthreads_queues.dat",
            "nseries_1": len(blocks),
            "colors_1": colors(len(blocks), cells),
            "nflagged": flagged(here, "rps"),
            "limit_queue": limit_queue,
            "limit_connections": num(first.get("max_connections")) or 0,
            "pool_rps": (num(pool_size(first)) or 0) / (num(first["delay_ms"]) / 1000),
        },
        ["maxthreads_queues.dat"],
        note,
    )


HEADINGS = {
    "maxthreads_knees": "Knees: where the ratio bends",
    "maxthreads_threads": "maxThreads: peak threads",
    "maxthreads_cost": "maxThreads: what the threads cost",
    "maxthreads_static": "maxThreads: static mix",
    "maxthreads_queues": "maxThreads: beyond the connector's queues",
}


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    charts = (knees_chart, threads_chart, cost_chart, static_chart, queues_chart)
    return with_headings([chart(run, data_dir, run.cells) for chart in charts], HEADINGS)
