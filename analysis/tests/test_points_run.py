"""A reference run read from points.jsonl alone gives the records the summary reads: each launch its own figures, in
the order of the point's cells, with the point's settings; on a quick-hours run, which keeps its cells.jsonl too,
the summary from the points alone is the summary from the records."""

from __future__ import annotations

import shutil
from pathlib import Path

from crossbench.figures import points
from crossbench_analysis.findings import summary
from crossbench_analysis.findings.finding import load_points
from crossbench_analysis.read import points_run
from crossbench_analysis.read.runinfo import AnalysisError, load_run

QUICK = Path(__file__).resolve().parents[2] / "docs" / "results" / "quick-hours" / "runs" / "quick-2026-11-28-1131"


def test_each_launch_gets_its_own_figures_and_the_points_settings(tmp_path):
    run = Path(shutil.copytree(QUICK, tmp_path / "run"))
    (run / "cells.jsonl").unlink()
    assert points_run.has_points_only(run)
    read = points_run.load(run)
    point = next(p for p in points.read_jsonl(run / points.POINTS_FILE) if p["cells"])
    mine = [c for c in read.cells if c["cell_id"] in point["cells"]]
    assert [c["cell_id"] for c in sorted(mine, key=lambda c: c["repetition"])] == point["cells"]
    assert [c["rps"] for c in sorted(mine, key=lambda c: c["repetition"])] == point["figures"]["rps"]["launches"]
    assert all(c["latency_ms"]["p99"] in point["figures"]["latency_ms.p99"]["launches"] for c in mine)
    assert {c["setting"] for c in mine} == {point["setting"]} and read.experiment == "quick"


def test_the_summary_from_the_points_alone_is_the_summary_from_the_records(tmp_path):
    whole = summary.compute(load_points(load_run(QUICK)))
    run = Path(shutil.copytree(QUICK, tmp_path / "run"))
    (run / "cells.jsonl").unlink()
    assert summary.compute(load_points(points_run.load(run))) == whole and whole["rows"]


def test_a_folder_without_points_is_refused_in_one_line(tmp_path):
    try:
        points_run.load(tmp_path)
    except AnalysisError as e:
        assert "holds no points.jsonl (nor cells.jsonl)" in str(e)
    else:
        raise AssertionError("a folder without points.jsonl was read")
