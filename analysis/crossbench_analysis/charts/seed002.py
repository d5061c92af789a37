"""Seed 002's charts: responses per second on the static mix, the efficiency ratio per delay, throughput against
concurrency with Little's-law lines, busy and queued requests, latency, peak threads and the threads over time
(the VisualVM view)."""

from __future__ import annotations

from pathlib import Path

from crossbench.endpoints import is_static
from crossbench_analysis.read.runinfo import Run, get, is_valid, num

from .kit import (
    ChartJob,
    against_concurrency,
    flagged,
    how,
    is_delay,
    max_threads_of,
    missing_note,
    panel_files,
    panel_key,
    panel_order,
    with_headings,
)
from .kit_files import write_blocks
from .kit_labels import panel_style, series_of

BEND = 1.1  # the findings' bend threshold (finding.THRESHOLD; families import only kit and runinfo)
HEADINGS = {
    "static_rps": "Static files: responses per second",
    "efficiency": "Efficiency ratio (seed 002)",
    "threads_peak": "Peak thread count",
    "threads_timeline": "Threads over time (VisualVM view)",
    "latency": "Latency p50 and p99",
    "throughput": "Throughput against concurrency (Little's law)",
    "in_flight": "Requests being served and waiting",
}


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    cells = against_concurrency(run.cells)
    charts = (static_rps, efficiency, throughput, in_flight, threads_peak, threads_timeline, latency)
    return with_headings([chart(run, data_dir, cells) for chart in charts], HEADINGS)


def figure_job(
    run: Run,
    data_dir: Path,
    name: str,
    cells: list[dict],
    columns: list[str],
    row_of,
    keys: tuple,
    title: str,
    text: str,
    extra=None,
) -> ChartJob | None:
    """One chart of these cells' figures `keys`, a panel each: its data files, how many of its cells are flagged,
    and the note on missing ones; None without cells."""
    if not cells:
        return None
    params, files = panel_files(run, data_dir, name, cells, columns, row_of, keys, extra=extra)
    params["nflagged"] = flagged(cells, *keys)
    return ChartJob(name, f"{name}.gp", title, text, params, files, missing_note(cells, *keys))


def static_rps(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    cells = [c for c in cells if is_static(c.get("endpoint")) and not is_delay(c)]
    return figure_job(
        run,
        data_dir,
        "static_rps",
        cells,
        ["concurrency", "rps", "rps_steady", "bytes_per_s", "valid", "repetition", "cell_id"],
        lambda c: [c.get("concurrency"), num(c.get("rps")), num(c.get("rps_steady")), num(c.get("bytes_per_s"))],
        ("rps",),
        f"Static files: responses per second vs concurrent clients ({how(cells)})",
        "Responses per second over the measured window (requests / window, the seed's definition) "
        "for the random static mix, one line per server (the mean of repetitions), against the "
        "number of concurrent clients. Seed 002's first figure.",
    )


def efficiency(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    cells = [c for c in cells if is_delay(c)]
    if not cells:
        return None
    params, files = panel_files(
        run,
        data_dir,
        "efficiency",
        cells,
        ["concurrency", "efficiency_ratio", "latency_ratio", "valid", "repetition", "cell_id"],
        lambda c: [c.get("concurrency"), num(c.get("efficiency_ratio")), num(c.get("latency_ratio"))],
        ("efficiency_ratio", "latency_ratio"),
    )
    params["nflagged"] = flagged(cells, "efficiency_ratio")
    params["bend"] = BEND
    return ChartJob(
        "efficiency",
        "efficiency.gp",
        f"Efficiency ratio (C / rps) / delay vs concurrent clients ({how(cells)})",
        "Seed 002's efficiency ratio, (concurrency / responses per second) / delay: 1.0 (dashed "
        "black) means every client waited only the delay; above 1 the server added waiting of its "
        f"own; dotted grey, {BEND:g}: where the findings say a server bends (its ratio stays above "
        "it). Solid: the ratio from rps; thin dashed: mean latency / delay, the same idea measured "
        "directly (the two disagree when the window is short against the delay). One panel per "
        "delay.",
        params,
        files,
        missing_note(cells, "efficiency_ratio", "latency_ratio"),
    )


def throughput(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    """Delayed cells' answers per second against C, beside what Little's law allows: C / delay (every client
    served at once) and, per pooled setting, maxThreads / delay (the pool's most)."""
    cells = [c for c in cells if is_delay(c)]
    return figure_job(
        run,
        data_dir,
        "throughput",
        cells,
        ["concurrency", "rps", "valid", "repetition", "cell_id"],
        lambda c: [c.get("concurrency"), num(c.get("rps"))],
        ("rps",),
        f"Throughput vs concurrent clients, delayed answers ({how(cells)})",
        "Answers per second against concurrent clients, one panel per delay, log scales. Dotted "
        "grey: C / delay, what a server that serves every client at once answers (Little's law: "
        "the clients' own pace); dashed grey: maxThreads / delay, the most a pool of that size can "
        "answer. A thread-per-request server follows the dotted line up to its pool, then runs flat "
        "along the dashed one; an event loop stays on the dotted line until its core fills.",
        extra=lambda here: {**delay_of(here), **max_threads_of(here)},
    )


def in_flight(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    """Requests in flight (rps x mean latency, Little's law) against C, and of them those a pool was serving at
    its busiest (Tomcat's busy threads); the rest waited in a queue."""
    cells = [c for c in cells if is_delay(c) and num(c.get("in_flight")) is not None]
    return figure_job(
        run,
        data_dir,
        "in_flight",
        cells,
        ["concurrency", "in_flight", "busy", "queued", "valid", "repetition", "cell_id"],
        lambda c: [c.get("concurrency"), num(c.get("in_flight")), busy(c), queued(c)],
        ("in_flight",),
        f"Requests in flight, being served and waiting, vs concurrent clients ({how(cells)})",
        "Solid: requests in flight, answers per second x mean latency (Little's law; at most C in a "
        "closed loop). Dashed: those a pool was serving at once at its busiest (Tomcat's busy "
        "threads, where each request holds one); dotted with crosses: the rest, waiting for a "
        "thread (in flight - busy). A server without such a pool (an event loop, an async servlet) "
        "shows in flight only: all of it being served. One panel per delay; dotted grey, maxThreads.",
        extra=max_threads_of,
    )


def busy(cell: dict) -> float | None:
    """The pool's busy peak where each request holds a thread (a parallel limit: Tomcat's /delay/sync); None
    elsewhere (an async servlet hands its thread back while it waits: its busy count is no request's)."""
    return num(cell.get("pool_busy_peak")) if num(cell.get("parallel_limit")) else None


def queued(cell: dict) -> float | None:
    """In flight less the pool's busy peak: the requests that waited for a thread (None without such a pool)."""
    flying, serving = num(cell.get("in_flight")), busy(cell)
    return None if flying is None or serving is None else max(0.0, flying - serving)


def latency(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    return figure_job(
        run,
        data_dir,
        "latency",
        cells,
        ["concurrency", "p50_ms", "p99_ms", "mean_ms", "max_ms", "valid", "repetition", "cell_id"],
        lambda c: [
            c.get("concurrency"),
            num(get(c, "latency_ms.p50")),
            num(get(c, "latency_ms.p99")),
            num(get(c, "latency_ms.mean")),
            num(get(c, "latency_ms.max")),
        ],
        ("latency_ms.p50", "latency_ms.p99"),
        f"Latency p50 and p99 vs concurrent clients ({how(cells)})",
        "Per-request latency the requests had: median (p50, solid, circles) and 99th percentile "
        "(p99, dashed, squares), one panel per group or delay; dotted grey, the panel's delay (the "
        "least a delayed answer can take). Log scale where the values span a factor of 20 or more, "
        "linear otherwise (a narrow log axis would show one tick).",
        extra=delay_of,
    )


def delay_of(cells: list[dict]) -> dict:
    """A delay panel's delay (ms), for the line latency.gp draws; 0 for a panel without one."""
    delays = {num(c.get("delay_ms")) or 0 for c in cells}
    return {"delay": f"{delays.pop():g}" if len(delays) == 1 else "0"}  # a word: latency.gp reads it with real()


def threads_peak(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    cells = [c for c in cells if is_delay(c)]
    return figure_job(
        run,
        data_dir,
        "threads_peak",
        cells,
        ["concurrency", "threads_peak", "threads_mean", "pool_busy_peak", "valid", "repetition", "cell_id"],
        lambda c: [
            c.get("concurrency"),
            num(c.get("threads_peak")),
            num(c.get("threads_mean")),
            num(c.get("pool_busy_peak")),
        ],
        ("threads_peak",),
        "Server threads: peak thread count in the measured window vs concurrent clients",
        "The most threads the server process tree had at once while measured (all threads, JVM "
        "housekeeping included), one panel per delay. Dotted grey: Tomcat's maxThreads; a "
        "thread-per-request server stops just above it (seed 002 saw about 220 for 200), an "
        "event loop stays flat.",
        extra=max_threads_of,
    )


def threads_timeline(run: Run, data_dir: Path, cells: list[dict]) -> ChartJob | None:
    cells = [c for c in cells if is_delay(c)]
    series, of_cell = series_of(cells, panel_key)
    # per delay and series: the highest-concurrency cell that has samples (its lowest repetition)
    chosen, samples = [], {}
    for key, _ in panel_order(cells):
        for s in series:
            mine = [c for c in cells if panel_key(c) == key and of_cell[c["cell_id"]] is s]
            for c in mine:
                samples[c["cell_id"]] = run.samples(c)
            mine = [c for c in mine if samples[c["cell_id"]]]
            if mine:
                chosen.append(
                    max(mine, key=lambda c: (num(c.get("concurrency")) or 0, -(num(c.get("repetition")) or 0)))
                )
    if not chosen:
        return None
    columns = ["t_s", "threads", "pool_busy", "pool_current", "concurrency", "valid", "phase", "cell_id"]
    panels = panel_order(chosen)
    params: dict = {"panels": len(panels), "nflagged": flagged(chosen, "threads_peak", "rps")}
    files, keyed = [], {}
    for p, (key, title) in enumerate(panels, 1):
        here = [c for c in chosen if panel_key(c) == key]
        present = [s for s in series if any(of_cell[c["cell_id"]] is s for c in here)]
        blocks = []
        for s in present:
            c = next(c for c in here if of_cell[c["cell_id"]] is s)
            rows = samples[c["cell_id"]]
            measure = [r for r in rows if r.get("phase") == "measure"]
            t0 = (measure or rows)[0]["t_epoch"]
            blocks.append(
                (
                    f"{s.label}, C={c.get('concurrency')}" + ("" if is_valid(c) else " (flagged)"),
                    [
                        [
                            r["t_epoch"] - t0,
                            r.get("threads"),
                            r.get("pool_busy"),
                            r.get("pool_current"),
                            c.get("concurrency"),
                            is_valid(c),
                            r.get("phase") or "-",
                            c["cell_id"],
                        ]
                        for r in rows
                    ],
                )
            )
        name = f"threads_timeline_{key}.dat" if len(panels) > 1 else "threads_timeline.dat"
        write_blocks(
            data_dir / name,
            f"threads_timeline, panel '{title}' (run {run.run_id}); "
            "t_s = seconds from the first sample of the measured window",
            columns,
            blocks,
        )
        files.append(name)
        params.update(
            {
                f"file_{p}": name,
                f"title_{p}": title,
                **panel_style(p, present, keyed),
                f"values_{p}": sum(1 for _, rows in blocks for r in rows if num(r[1]) is not None),
                **{f"{k}_{p}": v for k, v in max_threads_of(here).items()},
            }
        )
    lost = [
        c
        for c in cells
        if c not in chosen
        and not samples.get(c["cell_id"])
        and num(c.get("concurrency")) == max(num(x.get("concurrency")) or 0 for x in cells)
    ]
    note = f"no samples.csv: {', '.join(c['cell_id'] for c in lost[:3])}" if lost else ""
    return ChartJob(
        "threads_timeline",
        "threads_timeline.gp",
        "Server threads over time at each server's highest concurrency (t = 0: measured window starts)",
        "The server's thread count from samples.csv (4 a second) in each series' highest-"
        "concurrency cell per delay: the VisualVM picture of seed 002. Thin lines: Tomcat's "
        "connector pool busy threads where the JVM probe captured them. Dotted grey: maxThreads. "
        "Each line is one launch, the point's first: a time series has no launches to average (their "
        "clocks do not align), so it has no interval; the peak-threads chart gives the peak's.",
        params,
        files,
        note,
    )
