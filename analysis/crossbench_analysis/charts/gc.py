"""Tomcat's GC pauses beside its latency p99: per panel (group or delay), the p99 of each Tomcat cell and, from
its JFR recording (runner/crossbench/servers/tomcat_jfr.py), the longest GC pause and the pauses' total inside the
window. Only cells that have both; a run without JFR (jfr = false) gets no chart."""

from __future__ import annotations

from pathlib import Path

from crossbench_analysis.read.runinfo import Run, get, num

from .kit import ChartJob, against_concurrency, count, flagged, panels, write_series
from .kit_intervals import interval_key
from .kit_labels import panel_style

HEADINGS: dict[str, str] = {}  # one chart per panel, each with its own heading
FIGURES = ("latency_ms.p99", "tomcat_gc_pause_max_ms", "tomcat_gc_pause_total_ms")


def with_both(cells: list[dict]) -> list[dict]:
    return [
        c
        for c in against_concurrency(cells)
        if num(get(c, "latency_ms.p99")) is not None and num(c.get("tomcat_gc_pause_count")) is not None
    ]


def row_of(c: dict) -> list:
    return [
        c.get("concurrency"),
        num(get(c, "latency_ms.p99")),
        num(c.get("tomcat_gc_pause_max_ms")),
        num(c.get("tomcat_gc_pause_total_ms")),
        num(c.get("tomcat_gc_pause_count")),
    ]


def longest_pauses(cells: list[dict], of_cell: dict) -> dict:
    """(series, concurrency) -> the longest GC pause of any of its launches: the solid line, drawn through
    maxima (gnuplot's smooth unique would average them: 0, 0 and 137 ms drawn as 46)."""
    longest: dict = {}
    for c in cells:
        key = (id(of_cell[c["cell_id"]]), num(c.get("concurrency")))
        longest[key] = max(longest.get(key, 0.0), num(c.get("tomcat_gc_pause_max_ms")) or 0.0)
    return longest


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    cells = with_both(run.cells)
    found = []
    for key, title, here, series, of_cell in panels(cells):
        name = f"gc_pauses_{key}"
        columns = [
            "concurrency",
            "p99_ms",
            "gc_pause_max_ms",
            "gc_pause_total_ms",
            "gc_pause_count",
            "gc_pause_longest_ms",
            "valid",
            "repetition",
            "cell_id",
        ]
        longest = longest_pauses(here, of_cell)
        write_series(
            data_dir / f"{name}.dat",
            f"latency p99 and GC pauses in the window, '{title}' (run "
            f"{run.run_id}); pauses from each cell's JFR recording; gc_pause_longest_ms: the longest of "
            "the point's launches (a maximum is never averaged)",
            columns,
            lambda c: row_of(c) + [longest[(id(of_cell[c["cell_id"]]), num(c.get("concurrency")))]],
            here,
            series,
            of_cell,
            run.launch_rule,
        )
        pauses = sum(int(num(c.get("tomcat_gc_pause_count")) or 0) for c in here)
        found.append(
            ChartJob(
                name,
                "gc_pauses.gp",
                f"Tomcat, {title}: latency p99 beside the GC pauses in the same window",
                f"{title}: left, each Tomcat cell's 99th-percentile latency; right, from the cell's JFR recording, "
                "its longest GC pause (points; the solid line through the longest of each point's launches, never "
                "their mean) and all its pauses added up (dashed), for the measured window only "
                f"({pauses} pauses over {len(here)} cells). A pause stops every request thread: a p99 near the "
                "longest pause points at the collector, one far above it does not. Bars on the left: each point's 95 % "
                "interval over its launches (none with one launch).",
                {
                    **interval_key(here),
                    "panels": 1,
                    "file_1": f"{name}.dat",
                    "title_1": title,
                    **panel_style(1, series, {}),
                    "nflagged": flagged(here, *FIGURES),
                    "values_1": count(here, *FIGURES),
                },
                [f"{name}.dat"],
                "",
                f"GC pauses: {title}",
            )
        )
    return found
