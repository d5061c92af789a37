"""The maxthreads experiment's charts: where each setting's ratio bends (knees.py, kept as knees.jsonl),
peak threads vs maxThreads, what the threads cost (RSS, CPU), the static mix per setting, and what a client sees
beyond the connector's queues. Each function returns a ChartJob, or None when the run has nothing for it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

from crossbench.endpoints import is_static
from crossbench.loadgen.base import ERROR_KINDS
from crossbench_analysis.judge import knees as knee_finder
from crossbench_analysis.read.runinfo import Run, get, is_valid, num
from crossbench_analysis.read.setting import fixed_knobs, pool_size, setting_order, sweeps_pool

from .kit import ChartJob, flagged, how, missing_note, with_headings
from .kit_files import write_blocks
from .kit_intervals import interval_key, interval_of, point_interval, same_point
from .kit_labels import series_order, shades_in_order


def setting(cell: dict, with_jdk: bool = False) -> str:
    """'tomcat maxThreads=50' or 'tomcat virtual' (the record's setting); with ', JDK 25' when the run set JDKs
    against each other."""
    return knee_finder.setting_label(cell, with_jdk)


def setting_sort(cell: dict, with_jdk: bool = False) -> tuple:
    return setting_order(setting(cell, with_jdk))


def tomcat_ok(cells: list[dict]) -> list[dict]:
    """The cells with a connector pool setting (Tomcat's executor): what this experiment sweeps."""
    return [c for c in cells if sweeps_pool(c) and c.get("status") == "ok"]


def beyond_queues(cell: dict) -> bool:
    """More clients than the connector takes in: maxConnections, or maxThreads + acceptCount (platform)."""
    c = num(cell.get("concurrency")) or 0
    limits = [num(cell.get("max_connections"))]
    if num(pool_size(cell)) and num(cell.get("accept_count")):
        limits.append(num(pool_size(cell)) + num(cell["accept_count"]))
    return any(limit and c > limit for limit in limits)


def queue_groups(cells: list[dict]) -> set[str]:
    """Groups of delay cells driven beyond the queues: charted apart, left out of the sweep's charts."""
    return {c.get("group") for c in tomcat_ok(cells) if num(c.get("delay_ms")) and beyond_queues(c)}


def sweep_cells(cells: list[dict]) -> list[dict]:
    """The sweep: Tomcat's blocking delay cells (a thread held per request) outside the queue-limit groups."""
    queues = queue_groups(cells)
    return [
        c
        for c in tomcat_ok(cells)
        if c.get("endpoint") == "/delay/sync" and num(c.get("delay_ms")) and c.get("group") not in queues
    ]


def colors(n: int, cells: list[dict]) -> str:
    """n shades of the swept server's palette."""
    return " ".join(color for color, _ in shades_in_order([cells[0].get("server") if cells else None] * n))


def knee_shades(knees: list[dict]) -> tuple[str, str]:
    """Colours and dashes of a panel's knee series, as the chart kit gives every chart's: each server's k-th
    setting its shade in setting order (a run that sweeps Tomcat beside Tornado draws Tornado in its blue)."""
    styles = shades_in_order([k["server"] for k in knees])
    return " ".join(color for color, _ in styles), " ".join(str(dash) for _, dash in styles)


def by_setting(cells: list[dict]) -> list[tuple[str, list[dict]]]:
    grouped: dict[str, list[dict]] = defaultdict(list)
    with_jdk = knee_finder.jdks_vary(cells)
    for c in sorted(cells, key=lambda c: (setting_sort(c, with_jdk), num(c.get("concurrency")) or 0)):
        grouped[setting(c, with_jdk)].append(c)
    return list(grouped.items())


COST_FIGURES = ("threads_peak", "rss_peak_mb", "rps", "cpu_percent")


def peak_point(cells: list[dict]) -> list:
    """[mean, low, high] of threads_peak at the point (concurrency) of the cells whose mean peak is highest."""
    found = [point_interval(cells, c, lambda x: x.get("threads_peak")) for c in cells]
    return max((f for f in found if f[0] is not None), key=lambda f: f[0], default=[None, None, None])


def peak_cells(cells: list[dict]) -> list[tuple[str, dict]]:
    """Per setting, its highest-concurrency cell (lowest repetition): where the pool is used the most."""
    return [
        (name, max(mine, key=lambda c: (num(c.get("concurrency")) or 0, -(num(c.get("repetition")) or 0))))
        for name, mine in by_setting(cells)
    ]


def write_knees(run: Run, data_dir: Path) -> list[dict]:
    """Finds every setting's knee in the run's cells (so re-analysing an old run recomputes them) and keeps them
    beside the chart data as knees.jsonl."""
    found = [asdict(k) for k in knee_finder.settings_knees(run.cells)]
    knee_finder.write_jsonl(found, data_dir / knee_finder.KNEES_FILE)
    return found


def knee_range(k: dict) -> list[float | None]:
    """[middle, low, high] of the knee's bar: the fitted N's interval, or the bracket (middle in log C)."""
    if k["status"] == "fitted" and k["knee_low"] is not None:
        return [k["knee_concurrency"], k["knee_low"], k["knee_high"]]
    if k["status"] == "bracket" and k["bracket"]:
        low, high = k["bracket"]
        return [round((low * high) ** 0.5, 1), low, high]
    return [None, None, None]


LABEL_EDGE = 0.8  # a knee this far along the panel's log C range, or further, is labelled to its left


def label_edge(concurrencies: list[float]) -> float:
    """The concurrency past which a knee's label would run off the panel's right edge (LABEL_EDGE of the log range)."""
    low, high = min(concurrencies), max(concurrencies)
    return low * (high / low) ** LABEL_EDGE


def knees_chart(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    """Ratio vs concurrency, a curve per setting, its knee marked; one panel per group and delay."""
    queues = queue_groups(cells)
    # nothing to draw for a setting whose every launch was left out, nor one at one concurrency (no curve to bend)
    knees = [k for k in write_knees(run, data_dir) if k.get("group") not in queues and len(k["points"]) > 1]
    if not knees:
        return None
    panels: dict[tuple, list[dict]] = defaultdict(list)
    for k in knees:
        panels[(k["group"], k["delay_ms"])].append(k)
    params: dict = {
        "panels": len(panels),
        "nflagged": sum(1 for k in knees for pt in k["points"] if not pt.get("valid", True)),
        **interval_key(
            [
                c
                for c in cells
                if c["cell_id"] in {i for k in knees for pt in k["points"] for i in pt.get("cell_ids", [])}
            ]
        ),
    }
    files = []
    for p, ((group, delay), mine) in enumerate(sorted(panels.items(), key=lambda kv: (kv[0][1], kv[0][0])), 1):
        mine = sorted(mine, key=lambda k: series_order(k["server"], k["setting"]))
        shades, dashes = knee_shades(mine)
        name, marks = f"maxthreads_knees_{group}_d{delay}.dat", f"maxthreads_knees_{group}_d{delay}_marks.dat"
        write_blocks(
            data_dir / name,
            f"maxthreads knees, group {group}, delay {delay} ms (run "
            f"{run.run_id}); ratio = {mine[0]['ratio_used']}, efficiency_ratio = the seed's",
            ["concurrency", "ratio", "threads_peak", "efficiency_ratio", "valid", "ratio_lo", "ratio_hi", "launches"],
            [
                (
                    k["setting"],
                    [
                        [
                            pt["concurrency"],
                            pt["ratio"],
                            pt.get("threads_peak"),
                            pt.get("efficiency_ratio"),
                            pt.get("valid", True),
                            pt.get("ratio_low"),
                            pt.get("ratio_high"),
                            pt.get("launches"),
                        ]
                        for pt in k["points"]
                    ],
                )
                for k in mine
            ],
        )
        write_blocks(
            data_dir / marks,
            "knees: the hinge's fitted N (NaN: none stated), its 95 % interval, or "
            "the bracket of measured concurrencies that holds it (range_*); predicted = the parallel limit "
            "(maxThreads, workers)",
            ["knee_concurrency", "threshold", "predicted", "range_mid", "range_low", "range_high", "text"],
            [
                (
                    k["setting"],
                    [
                        [
                            k["knee_concurrency"] if k["status"] == "fitted" else None,
                            k["threshold"],
                            k["predicted"],
                            *knee_range(k),
                            k["text"],
                        ]
                    ],
                )
                for k in mine
            ],
        )
        files += [name, marks]
        params.update(
            {
                f"file_{p}": name,
                f"marks_{p}": marks,
                f"nseries_{p}": len(mine),
                f"key_{p}": 1,
                f"title_{p}": f"{group}, delay {delay / 1000:g} s",
                f"colors_{p}": shades,
                f"dashes_{p}": dashes,
                f"threshold_{p}": mine[0]["threshold"],
                f"ratio_{p}": mine[0]["ratio_used"],
                f"predicted_{p}": " ".join(str(k["predicted"] or "NaN") for k in mine),
                f"label_edge_{p}": label_edge([pt["concurrency"] for k in mine for pt in k["points"]]),
            }
        )
    summary = "; ".join(f"{k['setting']}: {k['text']}" for k in knees)
    ratio = knees[0]["ratio_used"].replace("_", " ")
    return ChartJob(
        "maxthreads_knees",
        "maxthreads_knees.gp",
        f"Where the ratio bends: {ratio} vs concurrent clients per server setting, knee marked",
        "One curve per setting (Tomcat's maxThreads or virtual threads, gunicorn's workers, ...), log "
        "scales. The knee (diamond) is the parallel limit N of a hinge, ratio = a max(1, C / N), fitted "
        "over every launch; its horizontal bar is N's 95 % interval (from the launches' spread), or, "
        "where the launches do not place it more closely, the bracket of measured concurrencies that holds it; the dotted "
        "vertical line of the same colour is the prediction, the parallel limit (maxThreads, workers). Thin dashed: "
        "the seed's ratio from the window's count, which past the knee shows the queue the answered "
        "requests' latency hides when the window is short. Each point is the geometric mean of its "
        "launches, its bar the 95 % interval (none under 3 launches). From "
        f"charts/data/knees.jsonl: {summary}.",
        params,
        files,
    )


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
        interval = peak_point(mine)
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
                    *[v for f in COST_FIGURES for v in point_interval(swept, c, lambda x, f=f: x.get(f))],
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
                mean, low, high = interval_of(rps)
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
                    *point_interval(here, c, lambda x: x.get("rps")),
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
