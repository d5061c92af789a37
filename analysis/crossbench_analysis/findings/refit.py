"""The knee findings of a run whose cells are not at hand, fitted again from its points. A reference run under
docs/results keeps points.jsonl, findings.json and findings.md, not cells.jsonl; its points keep every launch's
ratio, which is all the knee's fit reads, so its knee sentences (findings_knees.bends) and the summary's
"bends at" follow the suite's fit while every other finding, which reads the cells, stays as the run's analysis
wrote it. `python -m crossbench_analysis.findings.refit RUN_DIR...` rewrites findings.json and findings.md in
place and says how many knees it fitted again."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

from crossbench.figures.points import POINTS_FILE
from crossbench_analysis.read.runinfo import Run

from ..report import tables
from . import findings, summary
from .finding import LAUNCH_RULE, left_note, who
from .findings_knees import bends, counted, delay_sweeps


def stored_points(run_dir: Path) -> list[dict]:
    """The run's points.jsonl as the findings read points, with no launch records (the cells are not at hand)
    and the run's launch rule from its metadata.json."""
    meta = run_dir / "metadata.json"
    rule = Run(run_dir, json.loads(meta.read_text()) if meta.is_file() else {}, []).launch_rule
    lines = (run_dir / POINTS_FILE).read_text().splitlines()
    return [
        {**json.loads(line), "records": [], "disturbed_records": [], LAUNCH_RULE: rule}
        for line in lines
        if line.strip()
    ]


def refit(run_dir: Path) -> int:
    """Puts the knees fitted again from the run's points in place of the findings and summary cells that state
    them (a finding by its cells, every point of the sweep, which no other finding of the sweep cites all of; a
    summary row by its setting and workload); returns how many findings it replaced."""
    path = run_dir / findings.FILE_JSON
    written = json.loads(path.read_text())
    points = stored_points(run_dir)
    records = written.get("findings", [])
    replaced = 0
    for found in bends("", points):
        at = next((i for i, r in enumerate(records) if sorted(r.get("cells") or []) == sorted(found.cells)), None)
        if at is None:
            continue
        old = records[at]
        found.family, found.chart = old["family"], old.get("chart_name") or found.chart
        found.left_out = old.get("left_out") or []  # the launches left out are known from their records only
        found.sentence += left_note(found.left_out)
        records[at] = found.to_dict({old["chart_name"]} if old.get("chart_name") else set())
        replaced += 1
    knees = {
        (who(pts[0]), f"{pts[0].get('endpoint')}, {summary.delay_text(pts[0])} delay"): summary.bend_text(
            counted(pts)[3]
        )
        for _, pts in delay_sweeps(points)
    }
    table = written.get("summary") or tables.EMPTY
    for line in table.get("rows", []):  # the summary table's lines, not records
        if "bends_at" in line:
            line["bends_at"] = knees.get((line.get("setting"), line.get("workload")), line["bends_at"])
    path.write_text(json.dumps(written, indent=2) + "\n")
    run = SimpleNamespace(run_id=written.get("run_id"))
    (run_dir / findings.FILE_MD).write_text(findings.markdown(run, records, {**tables.EMPTY, **table}))
    return replaced


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="fit the knees of runs again from their points.jsonl (refit.py)")
    parser.add_argument("runs", type=Path, nargs="+", help="run directories holding points.jsonl and findings.json")
    args = parser.parse_args(argv)
    for run in args.runs:
        missing = [name for name in (POINTS_FILE, findings.FILE_JSON) if not (run / name).is_file()]
        if missing:
            parser.error(f"{run}: no {' and no '.join(missing)} to fit the knees from")
    for run in args.runs:
        print(f"{run}: {refit(run)} knee findings fitted again")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
