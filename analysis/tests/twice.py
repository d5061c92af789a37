"""A reference run directory measured three times, for the chart-interval tests: every cell of a real run
(fixtures/runs, one launch a point) gets a second and a third launch that are NOT measurements: the same record,
repetitions 2 and 3, with its figures moved by a known factor (FACTOR, then FACTOR squared), so each point has the
three launches a stated interval needs. The first launch keeps the real figures; the cell's own files
(samples.csv, db-pool.csv, ...) are copied for the others."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

FACTOR = 1.1  # the second launch's figures: the first's times this
# Figures the charts draw, by dotted name (a name whose object holds several, e.g. latency_ms, moves them all).
FIGURES = (
    "rps",
    "rate_achieved",
    "latency_ms",
    "efficiency_ratio",
    "latency_ratio",
    "cpu_percent",
    "loadgen_cpu_percent",
    "rss_peak_mb",
    "cpu_per_core",
    "batch_latency_mean_ms",
    "rps_startup_free",
    "ab.reported.rps",
    "ab.reported.time_per_request_ms",
    "ab.startup_free.time_per_request_ms",
    "tomcat_gc_pause_max_ms",
    "tomcat_gc_pause_total_ms",
    "proxy_cpu_percent",
    "pooler_cpu_percent",
    "db_cpu_percent",
    "tomcat_connection_count_peak",
)


def moved(value):
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value * FACTOR
    if isinstance(value, dict):
        return {k: moved(v) for k, v in value.items()}
    return value


def later_launch(record: dict, index: int, repetition: int) -> dict:
    """The record's repetition 2 or 3: same point, figures times FACTOR ** (repetition - 1), threads_peak plus 3
    a launch."""
    r2 = copy.deepcopy(record)
    r2["cell_id"] = later_id(record["cell_id"], repetition)
    r2["repetition"], r2["index"] = repetition, index
    for name in FIGURES:
        *path, last = name.split(".")
        holder = r2
        for part in path:
            holder = holder.get(part) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and last in holder:
            for _ in range(repetition - 1):
                holder[last] = moved(holder[last])
    if isinstance(r2.get("threads_peak"), int):
        r2["threads_peak"] += 3 * (repetition - 1)
    if isinstance(r2.get("series"), str):
        r2["series"] = r2["series"].replace(record["cell_id"], r2["cell_id"])
    return r2


def later_id(cell_id: str, repetition: int) -> str:
    head, _, tail = cell_id.rpartition("-r")
    assert head and tail == "1", f"not a first launch: {cell_id}"
    return f"{head}-r{repetition}"


def run_twice(source: Path, path: Path, edit=None) -> Path:
    """Copies the run at source to path with a second and a third launch of every cell (each first launch changed
    by edit, when given, before it is repeated); returns path."""
    shutil.copytree(source, path, ignore=shutil.ignore_patterns("README.md", "charts", "report.html"))
    records = [json.loads(line) for line in (path / "cells.jsonl").read_text().splitlines() if line.strip()]
    for record in records:
        if edit:
            edit(record)
    later = [
        later_launch(r, len(records) * (repetition - 1) + i + 1, repetition)
        for repetition in (2, 3)
        for i, r in enumerate(records)
    ]
    for first, again in zip(records * 2, later):
        own = path / "cells" / first["cell_id"]
        if own.is_dir():
            shutil.copytree(own, path / "cells" / again["cell_id"])
    (path / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records + later))
    return path
