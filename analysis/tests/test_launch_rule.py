"""A run's launch rule is a value of the run (Run.launch_rule), carried to every figure computed from its launches:
a run under the precision target has its charts' intervals and its findings' unstated figures from Stein's
estimator, one without from Student's t, with nothing set around the call that reads it. Four launches tell the
two apart (with three, Stein's interval is Student's)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crossbench import stats
from crossbench.figures import points
from crossbench_analysis.charts import export
from crossbench_analysis.findings import finding
from crossbench_analysis.read.runinfo import load_run

RUNS = Path(__file__).parent / "fixtures" / "runs"
CELL = "static-tomcat-mt200-static_mix-c100-d0-r1"
SHARES = (1.0, 0.9, 0.8, 0.95)


def four_launches(tmp_path: Path, precision: float | None) -> Path:
    """The quick fixture with each static point launched four times (the later ones slower by SHARES), its
    metadata giving the precision target `precision` (None: none)."""
    run = tmp_path / "quick"
    shutil.copytree(RUNS / "quick", run)
    records = [json.loads(line) for line in (run / "cells.jsonl").read_text().splitlines()]
    extra = [
        dict(
            r,
            cell_id=r["cell_id"].replace("-r1", f"-r{k}"),
            repetition=k,
            rps=r["rps"] * share,
            rps_steady=r["rps_steady"] * share,
        )
        for r in records
        if r["group"] == "static"
        for k, share in enumerate(SHARES[1:], 2)
    ]
    (run / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records + extra))
    metadata = json.loads((run / "metadata.json").read_text())
    metadata["config"]["run"]["precision"] = precision
    (run / "metadata.json").write_text(json.dumps(metadata))
    return run


def expected(record: dict, name: str, precision: float | None) -> stats.Estimate:
    values = [record[name] * share for share in SHARES]
    return (stats.stein_estimate if precision is not None else stats.estimate)(values)


def chart_row(run: Path, cell_id: str) -> dict:
    """The static_rps chart's row of a launch, by column name."""
    lines = (run / "charts" / "data" / "static_rps.dat").read_text().splitlines()
    columns = next(line for line in lines if line.startswith("# columns:")).split(":", 1)[1].split()
    row = next(line.split("\t") for line in lines if cell_id in line)
    return dict(zip(columns, row))


@pytest.mark.parametrize("precision", [None, 0.05])
def test_the_charts_and_the_findings_use_the_runs_own_estimator(tmp_path, precision):
    run_dir = four_launches(tmp_path, precision)
    record = next(
        json.loads(line) for line in (RUNS / "quick" / "cells.jsonl").read_text().splitlines() if CELL in line
    )
    run = load_run(run_dir)
    assert run.launch_rule == points.LaunchRule(adaptive=precision is not None)

    export.export(run, run_dir / "charts")
    row = chart_row(run_dir, CELL)
    want = expected(record, "rps", precision)
    assert [float(row["rps_lo"]), float(row["rps_hi"])] == pytest.approx([want.low, want.high], rel=1e-5)

    [point] = [p for p in finding.load_points(run) if CELL in p["cells"]]
    assert "rps_steady" not in point["figures"]  # not in points.jsonl: the findings compute it from the launches
    steady = finding.figure(point, "rps_steady")
    want = expected(record, "rps_steady", precision)
    assert steady["estimator"] == want.as_figure()["estimator"]
    assert [steady["ci95_low"], steady["ci95_high"]] == pytest.approx([want.low, want.high], rel=1e-5)


def test_the_two_estimators_differ_on_four_launches():
    """What the test above tells apart is there to tell: Stein's interval on these launches is not Student's."""
    values = [500 * share for share in SHARES]
    assert stats.stein_estimate(values).high != pytest.approx(stats.estimate(values).high, rel=1e-3)
