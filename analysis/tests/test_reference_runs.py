"""Analysis on run directories captured from REAL runs (fixtures/runs/): every chart the run calls for is drawn
and the report lists every cell, with the records exactly as the runner wrote them."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from analysis_markers import needs_gnuplot

from crossbench_analysis import analyze

RUNS = Path(__file__).parent / "fixtures" / "runs"


@needs_gnuplot
@pytest.mark.parametrize("name, charts", [
    ("quick", {"static_rps", "efficiency", "threads_peak", "threads_timeline", "latency", "resources_static",
               "resources_d250"}),
    ("seed000-quick", {"seed000_ab", "seed000_hol", "efficiency", "resources_d300"}),
    ("seed001-quick", {"seed001_pipelined", "resources_hello"}),
    ("seed003-quick", {"hold_client", "hold_limit", "hold_server", "resources_hold"}),
    ("maxthreads-quick", {"maxthreads_knees", "maxthreads_threads", "maxthreads_cost", "efficiency"}),
    ("openloop-quick", {"openloop_latency", "openloop_achieved", "openloop_distribution", "efficiency"}),
])
def test_a_real_run_is_drawn_whole(tmp_path, name, charts):
    run = tmp_path / name
    shutil.copytree(RUNS / name, run)
    analyze(run)
    drawn = {p.stem for p in (run / "charts").glob("*.png")}
    assert charts <= drawn, f"missing: {sorted(charts - drawn)}"
    for chart in charts:
        assert (run / "charts" / f"{chart}.svg").stat().st_size > 1000
    report = (run / "report.html").read_text()
    ids = [json.loads(line)["cell_id"] for line in (run / "cells.jsonl").read_text().splitlines()]
    assert ids and all(cell_id in report for cell_id in ids)


@needs_gnuplot
def test_open_loop_distribution_uses_every_request_and_the_closed_cells_own_validity(tmp_path):
    run = tmp_path / "openloop-quick"
    shutil.copytree(RUNS / "openloop-quick", run)
    analyze(run)
    blocks = (run / "charts" / "data" / "openloop_distribution.dat").read_text().split("\n\n\n")
    closed, offered = ([line.split("\t") for line in block.splitlines() if line[:1].isdigit()] for block in blocks)
    assert {row[-1] for row in closed} == {"same-throughput-peak-tomcat-mt20-delay_sync-c40-d200-r1"}
    assert {row[-1] for row in offered} == {"same-throughput-tomcat-mt20-delay_sync-c40-d200-q90pct-r1"}
    assert len(offered) > 100 and len(closed) == 5           # every request's percentiles; wrk's own five
    p99 = {float(row[0]): float(row[2]) for row in offered}[99.0]
    assert p99 < float(dict((row[0], row[2]) for row in closed)["99"]) / 2   # the closed loop's own queue
