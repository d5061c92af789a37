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
    ("seed004-quick", {"seed004_table_db", "seed004_table_db-behind-nginx", "seed004_table_db-pgbouncer",
                       "seed004_table_pools", "seed004_workers", "latency", "resources_db"}),
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


@needs_gnuplot
def test_seed004_table_keeps_each_sweeps_best_step_sorted_by_p99(tmp_path):
    run = tmp_path / "seed004-quick"
    shutil.copytree(RUNS / "seed004-quick", run)
    analyze(run)
    rows = [line.split("\t") for line in (run / "charts" / "data" / "seed004_table_db.dat").read_text().splitlines()
            if line[:1].isdigit()]
    cells = {json.loads(line)["cell_id"]: json.loads(line) for line in (run / "cells.jsonl").read_text().splitlines()}
    p99s = [float(row[3]) for row in rows]
    assert p99s == sorted(p99s) and len(rows) == 4                     # tomcat + the best of three sweeps
    for row in (r for r in rows if cells[r[-1]]["sweep"]):
        sweep = [c for c in cells.values() if c["sweep"] == cells[row[-1]]["sweep"]]
        assert cells[row[-1]]["rps"] == max(c["rps"] for c in sweep) and "best_of_3" in row[1]     # spaces are underscores in .dat files
