"""Analysis on run directories captured from REAL runs (fixtures/runs/): every chart the run calls for is drawn
and the report lists every cell, with the records exactly as the runner wrote them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from analysis_markers import needs_gnuplot
from synthetic_run import rewrite
from testkit import records, records_by_id

from crossbench_analysis import analyze

RUNS = Path(__file__).parent / "fixtures" / "runs"


@needs_gnuplot
@pytest.mark.parametrize(
    "name, charts",
    [
        (
            "quick",
            {
                "static_rps",
                "efficiency",
                "threads_peak",
                "threads_timeline",
                "latency",
                "resources_static",
                "resources_d250",
            },
        ),
        ("seed000-quick", {"seed000_ab", "seed000_hol", "efficiency", "resources_d300"}),
        ("seed001-quick", {"seed001_pipelined", "resources_hello"}),
        ("seed003-quick", {"hold_client", "hold_limit", "hold_server", "resources_hold"}),
        ("maxthreads-quick", {"maxthreads_knees", "maxthreads_threads", "maxthreads_cost", "efficiency"}),
        ("openloop-quick", {"openloop_latency", "openloop_achieved", "openloop_distribution", "efficiency"}),
        (
            "seed004-quick",
            {
                "seed004_table_db",
                "seed004_table_db-behind-nginx",
                "seed004_table_db-pgbouncer",
                "seed004_table_pools",
                "seed004_workers",
                "seed004_cpu_db",
                "seed004_cpu_db-behind-nginx",
                "seed004_cpu_db-pgbouncer",
                "seed004_cpu_pools",
                "seed004_pool_waiting",
                "latency",
                "resources_db",
            },
        ),
    ],
)
@pytest.mark.spawns  # gnuplot
def test_a_real_run_is_drawn_whole(tmp_path, name, charts):
    run = tmp_path / name
    shutil.copytree(RUNS / name, run)
    analyze(run)
    drawn = {p.stem for p in (run / "charts").glob("*.png")}
    assert charts <= drawn, f"missing: {sorted(charts - drawn)}"
    for chart in charts:
        assert (run / "charts" / f"{chart}.svg").stat().st_size > 1000
    report = (run / "report.html").read_text()
    ids = [r["cell_id"] for r in records(run)]
    assert ids and all(cell_id in report for cell_id in ids)


@needs_gnuplot
@pytest.mark.parametrize("name", sorted(p.name for p in RUNS.iterdir() if (p / "cells.jsonl").is_file()))
@pytest.mark.spawns  # gnuplot
def test_a_real_run_whose_every_launch_was_left_out_still_analyses(tmp_path, name):
    """A busy machine can flag every launch noisy_host (two `yes` loops beside maxthreads-quick did): every chart
    family draws, or leaves out, a panel with no valid point instead of failing the run (gnuplot's `stats` stops
    a script that has nothing to read; the knee labels once took min() of no concurrencies)."""
    run = tmp_path / name
    shutil.copytree(RUNS / name, run)
    rewrite(run, lambda r: r.update(flags=["noisy_host"], valid=False))
    result = analyze(run)
    assert not result.failed_charts, [(c.name, c.error) for c in result.failed_charts]
    report = (run / "report.html").read_text()
    ids = [r["cell_id"] for r in records(run)]
    assert ids and all(cell_id in report for cell_id in ids)


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
def test_open_loop_distribution_uses_every_request_and_the_closed_cells_own_validity(tmp_path):
    run = tmp_path / "openloop-quick"
    shutil.copytree(RUNS / "openloop-quick", run)
    analyze(run)
    blocks = (run / "charts" / "data" / "openloop_distribution.dat").read_text().split("\n\n\n")
    closed, offered = ([line.split("\t") for line in block.splitlines() if line[:1].isdigit()] for block in blocks)
    assert {row[-1] for row in closed} == {"same-throughput-peak-tomcat-mt20-delay_sync-c40-d200-r1"}
    assert {row[-1] for row in offered} == {"same-throughput-tomcat-mt20-delay_sync-c40-d200-q90pct-r1"}
    assert len(offered) > 100 and len(closed) == 5  # every request's percentiles; wrk's own five
    p99 = {float(row[0]): float(row[2]) for row in offered}[99.0]
    assert p99 < float(dict((row[0], row[2]) for row in closed)["99"]) / 2  # the closed loop's own queue


def test_the_open_loop_caption_names_how_the_cells_generator_kept_its_schedule():
    from crossbench_analysis.charts.openloop import schedules

    assert schedules([{"loadgen": "oha"}]) == "oha -q RATE --latency-correction"
    assert (
        schedules([{"loadgen": "k6"}, {"loadgen": "oha"}, {"loadgen": "k6"}])
        == "k6's constant-arrival-rate executor, oha -q RATE --latency-correction"
    )


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
def test_seed004_table_keeps_each_sweeps_best_step_sorted_by_p99(tmp_path):
    run = tmp_path / "seed004-quick"
    shutil.copytree(RUNS / "seed004-quick", run)
    analyze(run)
    lines = (run / "charts" / "data" / "seed004_table_db.dat").read_text().splitlines()
    cell_id = next(line for line in lines if line.startswith("# columns: ")).split()[2:].index("cell_id")
    rows = [line.split("\t") for line in lines if line[:1].isdigit()]
    cells = records_by_id(run)
    p99s = [float(row[3]) for row in rows]
    assert p99s == sorted(p99s) and len(rows) == 4  # tomcat + the best of three sweeps
    for row in (r for r in rows if cells[r[cell_id]]["sweep"]):
        sweep = [c for c in cells.values() if c["sweep"] == cells[row[cell_id]]["sweep"]]
        assert (
            cells[row[cell_id]]["rps"] == max(c["rps"] for c in sweep) and "best_of_3" in row[1]
        )  # spaces are underscores in .dat files


def data_rows(path) -> list[dict]:
    """A one-block-per-series .dat file as dicts (the header line names the columns after the series label)."""
    rows, names = [], None
    for line in path.read_text().splitlines():
        if line.startswith('"'):
            names = line.split("\t")
        elif line[:1].isdigit() or line[:1] == "-":
            rows.append(dict(zip(names, line.split("\t"))))
    return rows


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
def test_seed004_cpu_split_stacks_every_part_and_the_pool_chart_shows_who_waits(tmp_path):
    run = tmp_path / "seed004-quick"
    shutil.copytree(RUNS / "seed004-quick", run)
    analyze(run)
    cells = records_by_id(run)
    for row in data_rows(run / "charts" / "data" / "seed004_cpu_db-behind-nginx.dat"):
        cell = cells[row["cell_id"]]
        total = cell["cpu_percent"] + cell["proxy_cpu_percent"] + cell["db_cpu_percent"]
        assert float(row["upto_db"]) == pytest.approx(total, rel=1e-4) and float(row["proxy"]) > 0
        assert float(row["ms_upto_db"]) == pytest.approx(total * 10 / cell["rps"], rel=1e-4)
    waiting: dict[str, float] = {}
    for row in data_rows(run / "charts" / "data" / "seed004_pool_waiting_pools.dat"):
        waiting[row["cell_id"]] = max(waiting.get(row["cell_id"], 0), float(row["waiting"]))
    assert len(waiting) == 8  # four stacks at two pool totals
    for cell_id, most in waiting.items():
        assert most >= cells[cell_id]["db_pool_waiting_peak"]  # the chart shows the window and half a second around
        if "gunicorn" in cell_id or "pool16" in cell_id:
            assert most <= 1, cell_id  # sync workers, or room for every client
        else:
            assert most >= 8, cell_id  # 16 clients on 2 connections
