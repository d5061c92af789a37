"""A user's request (--path) in the summary: its sweep judged by its ratios against its own C=1 latency (its
service time), named with that service time, as a delayed endpoint's sweep is named with its delay. The quick
run's recorded Tornado delay sweep stands in for such a sweep: its endpoint renamed to a user's path, its delay and
ratios taken away, the path recorded in the run's configuration as --path records it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crossbench import endpoints
from crossbench_analysis.findings import summary
from crossbench_analysis.findings.finding import load_points
from crossbench_analysis.judge import knees
from crossbench_analysis.read.runinfo import load_run

RUNS = Path(__file__).parent / "fixtures" / "runs"
USER_PATH = "/shop/orders"


@pytest.fixture(autouse=True)
def no_user_paths():
    yield
    endpoints.USER.clear()


def as_user_path(run: Path) -> None:
    records = [json.loads(line) for line in (run / "cells.jsonl").read_text().splitlines()]
    for r in records:
        if r["group"] == "delay" and r["server"] == "tornado":
            r.update(endpoint=USER_PATH, delay_ms=0, efficiency_ratio=None, latency_ratio=None)
    (run / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    meta = json.loads((run / "metadata.json").read_text())
    meta["config"]["run"]["paths"] = [USER_PATH]
    (run / "metadata.json").write_text(json.dumps(meta))


def test_a_user_path_s_sweep_is_a_row_judged_against_its_service_time(tmp_path):
    run = Path(shutil.copytree(RUNS / "quick", tmp_path / "quick"))
    as_user_path(run)
    service_ms = json.loads(
        next(
            line for line in (run / "cells.jsonl").read_text().splitlines() if '"delay-tornado-delay_async-c1-' in line
        )
    )["latency_ms"]["mean"]
    rows = {(r["setting"], r["workload"]): r for r in summary.compute(load_points(load_run(run)))["rows"]}
    row = rows[("tornado", f"{USER_PATH}, {service_ms:.0f} ms service time at C=1")]
    assert row["bends_at"] == "C 100-400" and row["at_c"] == "400"
    top = json.loads(
        next(
            line
            for line in (run / "cells.jsonl").read_text().splitlines()
            if '"delay-tornado-delay_async-c400-' in line
        )
    )
    assert row["efficiency_top"].startswith(f"{(400 / top['rps']) / (service_ms / 1000):.3g}")


def test_a_user_path_s_sweep_has_its_knee_in_the_knees_file(tmp_path):
    run = Path(shutil.copytree(RUNS / "quick", tmp_path / "quick"))
    as_user_path(run)
    found = {(k.endpoint, k.setting): k for k in knees.settings_knees(load_run(run).cells)}
    assert found[(USER_PATH, "tornado")].status == "bracket"
