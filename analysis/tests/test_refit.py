"""Knee findings fitted again from a reference run's points.jsonl (findings/refit.py): the committed maxthreads
references hold what today's fit says of their points, every other finding stays as written, and launches a
finding left out stay said."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crossbench_analysis.findings import refit

MAXTHREADS = Path(__file__).resolve().parents[2] / "docs" / "results" / "maxthreads"
RUNS = [
    MAXTHREADS / "runs" / "maxthreads-delay",
    MAXTHREADS / "runs" / "maxthreads-static-queues",
    MAXTHREADS / "worked-example" / "run",
]


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_the_committed_knees_are_what_the_fit_says_of_their_points(tmp_path, run):
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    refit.refit(copy)
    for name in ("findings.json", "findings.md"):
        assert (copy / name).read_text() == (run / name).read_text(), (
            f"{run.name}/{name} is stale: python -m crossbench_analysis.findings.refit {run}"
        )


def test_a_knee_fitted_again_replaces_only_its_own_finding_and_keeps_what_was_left_out(tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(RUNS[1], copy)
    written = json.loads((copy / "findings.json").read_text())
    knee = next(f for f in written["findings"] if f["left_out"] and "bends at or below" in f["sentence"])
    knee["sentence"] = "stale"
    for entry in knee["left_out"]:
        entry["reason"] = "timeouts"
    (copy / "findings.json").write_text(json.dumps(written))
    assert refit.refit(copy) == 1
    again = json.loads((copy / "findings.json").read_text())["findings"]
    changed = [(a, b) for a, b in zip(written["findings"], again) if a != b]
    assert len(changed) == 1 and len(again) == len(written["findings"])
    assert changed[0][1]["sentence"].endswith(f"({len(knee['left_out'])} launches left out: timeouts)")


def test_a_run_without_points_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "findings.json").write_text("{}")
    with pytest.raises(SystemExit):
        refit.main([str(tmp_path)])
    assert "no points.jsonl to fit the knees from" in capsys.readouterr().err


def test_a_run_whose_findings_have_no_summary_table_is_refitted_all_the_same(tmp_path):
    """Runs analysed before the summary table existed keep none: their knees are refitted, the table left out."""
    copy = tmp_path / "run"
    shutil.copytree(RUNS[0], copy)
    written = json.loads((copy / "findings.json").read_text())
    written["summary"] = {}
    (copy / "findings.json").write_text(json.dumps(written))
    assert refit.refit(copy) == 6
    assert (copy / "findings.md").read_text().count("- Knee at C=") == 5
