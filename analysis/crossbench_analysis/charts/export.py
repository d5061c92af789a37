"""The one export step: cells.jsonl and samples.csv -> the .dat files in charts/data/, plus manifest.json saying
which gnuplot script draws which chart from which files with which parameters (kit.py describes the files).

Charts come in families, one module each with the same two names: `HEADINGS` (chart name -> report heading)
and `jobs(run, data_dir) -> list[ChartJob]` (writes its data files, returns its charts with headings set, none
when the run has nothing for it). A new family is one such module, added to FAMILIES; families import only
the kit and runinfo, never each other or this module."""

from __future__ import annotations

import json
from pathlib import Path

from crossbench_analysis.read.runinfo import Run

from . import capacity_charts, gc, hold, maxthreads, openloop, resources, seed002, seed004, seeds, spectrum, tfb
from .kit import ChartJob

MANIFEST = "manifest.json"
FAMILIES = (
    seed002,
    maxthreads,
    capacity_charts,
    openloop,
    seed004,
    tfb,
    hold,
    seeds,
    gc,
    spectrum,
    resources,
)  # the report's order


def export(run: Run, charts_dir: Path) -> list[ChartJob]:
    """Writes charts/data/*.dat and charts/data/manifest.json; returns the chart jobs."""
    data_dir = charts_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in data_dir.glob("*.dat"):
        old.unlink()
    jobs = [job for family in FAMILIES for job in family.jobs(run, data_dir)]
    write_manifest(data_dir, run, jobs)
    return jobs


def write_manifest(data_dir: Path, run: Run, jobs: list[ChartJob]) -> None:
    manifest = {"run_id": run.run_id, "footer": run.footer(), "charts": [j.to_dict() for j in jobs]}
    (data_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


def read_manifest(data_dir: Path) -> tuple[str, list[ChartJob]]:
    manifest = json.loads((data_dir / MANIFEST).read_text())
    return manifest["footer"], [ChartJob.from_dict(d) for d in manifest["charts"]]
