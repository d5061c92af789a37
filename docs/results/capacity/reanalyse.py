"""The committed capacity runs read again by the analysis as it stands, so their capacity.json, findings.json and
findings.md say what its rules say of the same launches (no launch is run).

A committed run keeps its points, metadata and launches.jsonl (each launch's rate, requests, latency, CPU and
flags, cut from its cells.jsonl). Each launch is given back its point's identity (point id, setting, delay, pool)
and the run is analysed from a scratch copy; what a launch did not keep (its RSS and threads) is not in the cost.
The two other sittings in aa/ keep only capacity.json: their answers are recomputed from each rate's verdict and count
of launches that held, as their search recorded them.

python docs/results/capacity/reanalyse.py    (from the repository's root, in the project's environment)
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from crossbench.decide import capacity, capacity_answer, capacity_spread
from crossbench.figures.points import IDENTITY
from crossbench_analysis.findings import findings
from crossbench_analysis.judge.capacity_marks import outcomes
from crossbench_analysis.read.runinfo import load_run

HERE = Path(__file__).resolve().parent
RUNS = [HERE / "runs" / "capacity", HERE / "quick"]
SAVED_ONLY = [HERE / "aa" / "capacity-a", HERE / "aa" / "capacity-b"]
KEPT = ("capacity.json", "findings.json", "findings.md")


def records(run: Path) -> list[dict]:
    """The run's launches, each with its point's identity, as cells.jsonl held them."""
    point_of = {}
    for line in (run / "points.jsonl").read_text().splitlines():
        point = json.loads(line)
        identity = {k: point[k] for k in IDENTITY if k in point}
        for repetition, cell in enumerate(point["cells"], 1):
            point_of[cell] = {**identity, "repetition": repetition}
    launches = [json.loads(line) for line in (run / "launches.jsonl").read_text().splitlines() if line.strip()]
    return [{**point_of[r["cell_id"]], **r, "status": "ok", "schema_version": 6} for r in launches]


def reanalyse(run: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / run.name
        copy.mkdir()
        shutil.copy(run / "metadata.json", copy / "metadata.json")
        shutil.copy(run / "points.jsonl", copy / "points.jsonl")
        (copy / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records(run)))
        loaded = load_run(copy)
        (copy / capacity.FILE).write_text(json.dumps(outcomes(loaded), indent=1) + "\n")
        findings.write(loaded, {"capacity"})  # the chart the run drew beside its findings
        for name in KEPT:
            shutil.copy(copy / name, run / name)


def from_saved(out: dict, machine: str) -> dict:
    """A saved outcome's answer recomputed from its rates' verdicts and counts of launches that held."""
    if out.get("generator"):
        return {**out, "estimate": None}
    launches = [
        (t["rate"], i < t["held"]) for t in out["trials"] if t["verdict"] != capacity.CEILING for i in range(t["n"])
    ]
    launches += [(c["rate"], c["held"]) for c in out.get("confirmations") or ()]
    found, failure, ceiling = capacity_answer.held(out), capacity_answer.fails(out), capacity_answer.known_ceiling(out)
    fitted, why = capacity_answer.estimate(out, launches)
    spread = capacity_spread.for_setting(out["series"], machine)
    return {
        **out,
        "held_rps": found[0] if found else None,
        "held_s": found[1] if found else None,
        "fails_rps": failure,
        "fails_s": out.get("confirm_s") if failure in capacity_answer.long_failures(out) else None,
        "known_ceiling_rps": ceiling[0] if ceiling else None,
        "known_ceiling": ceiling[1] if ceiling else None,
        "estimate": fitted,
        "estimate_why": why,
        "spread": spread.as_dict() if spread else None,
    }


def resave(run: Path) -> None:
    meta = json.loads((run / "metadata.json").read_text())
    machine = f"{meta['machine']['cpu_model']}, {meta['machine']['cores']} cores"
    saved = json.loads((run / capacity.FILE).read_text())
    (run / capacity.FILE).write_text(json.dumps([from_saved(out, machine) for out in saved], indent=1) + "\n")


def main() -> int:
    for run in RUNS:
        reanalyse(run)
        print(f"read again: {run.relative_to(HERE)}", file=sys.stderr)
    for run in SAVED_ONLY:
        resave(run)
        print(f"recomputed from its capacity.json: {run.relative_to(HERE)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
