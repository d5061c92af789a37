"""Capacity searches' chart (groups with rates = "search", crossbench.decide.capacity): each series' bracket as a
bar (the highest rate shown to hold the target) with its bracket up to the lowest rate shown not to, beside the
rate its parallel limit predicts. The open-loop latency chart marks the same brackets (capacity_marks.py)."""

from __future__ import annotations

from pathlib import Path

from crossbench_analysis.judge.capacity_marks import outcomes, shown
from crossbench_analysis.read.runinfo import Run

from .kit import ChartJob, with_headings

HEADINGS = {"capacity": "Capacity at a latency target"}


def jobs(run: Run, data_dir: Path) -> list[ChartJob]:
    found = [out for out in outcomes(run) if not out.get("generator")]  # its ceiling is a finding, not a bar
    if not found:
        return []
    return with_headings([bars(run, data_dir, found)], HEADINGS)


def bars(run: Run, data_dir: Path, found: list[dict]) -> ChartJob:
    name = "capacity.dat"
    rows = ["label passed_rps failed_rps predicted_rps target_p99_ms"]
    for out in found:
        label = f"{out['setting']} {out['endpoint']}".replace(" ", "_")
        rows.append(
            f"{label} {shown(out['held_rps'])} {shown(out['fails_rps'] or out['ceiling_rps'])} "
            f"{shown(out['predicted_rps'])} {out['target_p99_ms']:g}"
        )
    (data_dir / name).write_text(f"# capacity brackets of run {run.run_id} (capacity.json)\n" + "\n".join(rows) + "\n")
    targets = sorted({out["target_p99_ms"] for out in found})
    return ChartJob(
        "capacity",
        "capacity.gp",
        f"Capacity: the highest offered rate shown to hold p99 <= {', '.join(f'{t:g}' for t in targets)} ms",
        "Bars: the highest offered rate at which the target held (over the long launch where one "
        "ran: p99 over its requests at or under the target, every offered request answered, errors "
        "within 0.1 %); the bracket above each bar reaches the lowest rate shown not to hold it in "
        "any window (or the rate at which the load generator fell behind its schedule: capacity above "
        "that). Crosses: the rate the "
        "server's parallel limit predicts (maxThreads / delay, workers / delay); none where waiting "
        "holds nothing. A rate between a bar and its bracket's top was not shown either way.",
        {
            "panels": 1,
            "file_1": name,
            "title_1": "capacity at the target",
            "nseries_1": 1,
            "colors_1": "#2166ac",
            "dashes_1": "1",
            "key_1": 1,
        },
        [name],
    )
