"""What run_all.sh prints after a run's last cell: the charts and the report drawn (pipeline.analyze), the knees when
the experiment asks for them (`[analysis] knees`), the maxThreads advice when it asks for it (`[analysis] advise`)
or the run was given a load (--advise-rate, --advise-hold-ms), the findings, and where the report is. The runner
reaches the analysis only through this command, `python -m crossbench_analysis at-end RUN_DIR`: the measurements
are on disk before it starts, so a failure here loses none of them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from crossbench.advice_load import Workload

from .advice import advice
from .findings import findings
from .judge import knees
from .pipeline import analyze
from .read.runinfo import AnalysisError


def asked(run_dir: Path) -> dict:
    """The experiment's [analysis] table as metadata.json recorded it; empty when it cannot be read."""
    try:
        metadata = json.loads((run_dir / "metadata.json").read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return (metadata.get("config") or {}).get("analysis") or {}


def say(text: str) -> None:
    print(text, file=sys.stderr)


def at_end(run_dir: Path, workload: Workload | None = None) -> None:
    try:
        analyze(run_dir)
    except AnalysisError as e:  # the measurements are safe; only drawing failed
        say(f"run_all: charts incomplete: {e}\nredraw with ./analysis/analyze.sh {run_dir}")
    wanted = asked(run_dir)
    if wanted.get("knees"):
        say(knees.summary(knees.read_jsonl(run_dir / "charts" / "data" / knees.KNEES_FILE)))
    if wanted.get("advise") or workload:  # maxThreads advice (advice.md, advice.json)
        say(advice.at_end(run_dir, workload))
    found = findings.text(run_dir)  # the run's findings (findings.md), last before the report's path
    if found:
        say(found)
    say(f"charts and report: {run_dir / 'report.html'}")
