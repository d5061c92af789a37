"""Every chart family draws each point's 95 % interval over launches: on each reference run (fixtures/runs, real
records) given a second and a third, NOT measured launch of every cell (twice.py: the figures times 1.1 and 1.21), every chart's data
files carry the interval columns (<figure>_lo/_hi, with values, lo <= mean <= hi), its gnuplot script draws them
and names them in its key, and gnuplot renders it. A timeline (a time series: no launches to average) says so in
its caption instead. With one launch a point the key says there is no interval."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from analysis_markers import needs_gnuplot
from twice import FACTOR, run_twice

from crossbench_analysis.charts import export, plot
from crossbench_analysis.read.runinfo import load_run

FIXTURES = Path(__file__).parent / "fixtures"
RUNS = sorted(p for p in (FIXTURES / "runs").iterdir() if p.is_dir())
GNUPLOT_DIR = plot.GNUPLOT_DIR
TIMELINES = {
    "threads_timeline",
    "hold_server",
    "hold_limit",
    "hold_client",
    "seed004_pool_waiting",
    "openloop_distribution",
    "latency_spectrum",
}
T2 = 4.302652729696142  # Student's t, 95 %, two degrees of freedom


def with_pauses(record: dict) -> None:
    """JFR figures on the Tomcat cells that lack them, so the GC chart has cells to draw."""
    if record.get("executor") and record.get("tomcat_gc_pause_count") is None:
        record.update(tomcat_gc_pause_count=2, tomcat_gc_pause_max_ms=4.0, tomcat_gc_pause_total_ms=6.0)


def exported(source: Path, tmp_path: Path) -> tuple[Path, dict[str, export.ChartJob]]:
    run_dir = run_twice(source, tmp_path / source.name, edit=with_pauses)
    return run_dir, {j.name: j for j in export.export(load_run(run_dir), run_dir / "charts")}


def dat_rows(path: Path) -> list[dict]:
    """Every data row of a .dat file as {column: value or None}, across its blocks (placeholders dropped)."""
    lines = path.read_text().splitlines()
    columns = next(line for line in lines if line.startswith("# columns: "))[len("# columns: ") :].split()
    rows = []
    for line in lines:
        if not line.strip() or line.startswith("#") or line.startswith('"'):
            continue
        row = dict(zip(columns, line.split("\t")))
        if row.get("cell_id") != "-":
            rows.append({k: None if v == "NaN" else v for k, v in row.items()})
    return rows


def intervals_of(rows: list[dict]) -> dict[str, list[tuple[float, float, float | None]]]:
    """{figure: [(lo, hi, mean or the row's value)]} for every figure with a drawn interval."""
    found: dict = {}
    for row in rows:
        for column in row:
            if column.endswith("_lo") and row[column] is not None and row.get(column[:-3] + "_hi") is not None:
                figure = column[:-3]
                centre = row.get(figure + "_mean") or row.get(figure)
                found.setdefault(figure, []).append(
                    (float(row[column]), float(row[figure + "_hi"]), float(centre) if centre is not None else None)
                )
    return found


@pytest.mark.parametrize("source", RUNS, ids=[p.name for p in RUNS])
def test_every_chart_carries_and_draws_its_intervals(source, tmp_path):
    run_dir, jobs = exported(source, tmp_path)
    data = run_dir / "charts" / "data"
    for name, job in jobs.items():
        script = (GNUPLOT_DIR / job.script).read_text()
        if name in TIMELINES:
            assert "no interval" in job.caption, f"{name}: a timeline says it has no interval"
            continue
        found, rows = {}, []
        for file in job.data_files:
            rows += dat_rows(data / file)
            found.update(intervals_of(dat_rows(data / file)))
        if not found and rows and all(row.get("valid") in ("0", "False", "false") for row in rows):
            continue  # every launch flagged: no point is stated, so no line and no bar (hollow marks only)
        assert found, f"{name}: no interval with values in {job.data_files}"
        for figure, bars in found.items():
            assert all(lo <= hi for lo, hi, _ in bars), f"{name}: {figure} interval upside down"
            assert all(lo <= c <= hi for lo, hi, c in bars if c is not None), f"{name}: {figure} mean outside"
        assert "_lo" in script and "_hi" in script, f"{job.script} draws no interval"
        assert "interval_title" in script, f"{job.script}: the key names the bars"
        assert job.params.get("ikey") == "bar: 95% interval over launches", name


def test_the_interval_is_students_t_on_logs_over_the_three_launches(tmp_path):
    """A point of launches v, 1.1 v and 1.21 v: geometric mean 1.1 v; on logs the spread is ln 1.1, so the
    interval is 1.1 v times exp(-+ t(2) ln 1.1 / sqrt(3)): the same numbers points.jsonl states."""
    run_dir, jobs = exported(FIXTURES / "runs" / "quick", tmp_path)
    cells = {c["cell_id"]: c for c in map(json.loads, (run_dir / "cells.jsonl").read_text().splitlines())}
    rows = [
        r
        for file in jobs["resources_static"].data_files
        if not file.endswith("_cores.dat")
        for r in dat_rows(run_dir / "charts" / "data" / file)
    ]
    assert len(rows) == 3 * len({r["cell_id"].rpartition("-r")[0] for r in rows})
    for row in rows:
        first = cells[row["cell_id"].rpartition("-r")[0] + "-r1"]["rss_peak_mb"]
        value, spread = first * FACTOR, math.exp(T2 * math.log(FACTOR) / math.sqrt(3))
        assert math.isclose(float(row["rss_peak_mb_mean"]), value, rel_tol=1e-4)
        assert math.isclose(float(row["rss_peak_mb_lo"]), value / spread, rel_tol=1e-4)
        assert math.isclose(float(row["rss_peak_mb_hi"]), value * spread, rel_tol=1e-4)


@pytest.mark.parametrize("source", RUNS, ids=[p.name for p in RUNS])
def test_one_launch_a_point_is_drawn_without_bars_and_the_key_says_so(source, tmp_path):
    run_dir = tmp_path / source.name
    shutil.copytree(source, run_dir, ignore=shutil.ignore_patterns("README.md"))
    jobs = export.export(load_run(run_dir), run_dir / "charts")
    for job in jobs:
        if job.name not in TIMELINES:
            assert job.params.get("ikey") == "under 3 launches a point: no interval", job.name
        for file in job.data_files:
            assert not intervals_of(dat_rows(run_dir / "charts" / "data" / file)), f"{job.name}: {file}"


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
@pytest.mark.parametrize("source", RUNS, ids=[p.name for p in RUNS])
def test_every_chart_renders_with_its_intervals(source, tmp_path):
    run_dir, jobs = exported(source, tmp_path)
    for job in jobs.values():
        result = plot.plot_chart(job, run_dir / "charts", "three launches a point (the later two NOT measured)")
        assert result.ok, f"{job.name}: {result.error}"
        assert (run_dir / "charts" / f"{job.name}.png").stat().st_size > 20_000, job.name


def test_a_charts_bar_is_the_plus_minus_of_its_finding(tmp_path):
    """The static chart's bar for Tomcat's C=100 point and its finding's figure are the same numbers, from the same
    counted launches: three, then with the third flagged noisy_host (left out: two launches, no interval)."""
    from crossbench_analysis.findings import findings

    point = "static-tomcat-mt200-static_mix-c100-d0"

    def bar_and_finding(run_dir, jobs):
        rows = [
            r
            for file in jobs["static_rps"].data_files
            for r in dat_rows(run_dir / "charts" / "data" / file)
            if r["cell_id"].startswith(point)
        ]
        bars = {(r["rps_mean"], r["rps_lo"], r["rps_hi"]) for r in rows}
        [finding] = [
            f
            for f in findings.compute(load_run(run_dir))
            if "tomcat maxThreads=200 on the static mix at C=100" in f.sentence
        ]
        assert len(bars) == 1, bars
        return [None if v is None else float(v) for v in bars.pop()], finding

    (value, low, high), finding = bar_and_finding(*exported(FIXTURES / "runs" / "quick", tmp_path / "three"))
    assert [value, low, high] == pytest.approx([finding.figure, *finding.interval], rel=1e-6)

    def disturbed(record):
        if record["cell_id"] == f"{point}-r1":
            record.update(flags=["noisy_host"], valid=False)

    run_dir = run_twice(FIXTURES / "runs" / "quick", tmp_path / "two" / "quick")
    cells = [json.loads(line) for line in (run_dir / "cells.jsonl").read_text().splitlines()]
    for record in cells:
        disturbed(record)
    (run_dir / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in cells))
    jobs = {j.name: j for j in export.export(load_run(run_dir), run_dir / "charts")}
    (value, low, high), finding = bar_and_finding(run_dir, jobs)
    assert low is None and high is None and finding.interval is None and finding.n == 2
    assert value == pytest.approx(finding.figure, rel=1e-6)


def test_the_line_goes_through_the_points_the_findings_state_not_flagged_launches():
    """A chart's line is drawn through each point's stated value (the geometric mean of its counted launches); a
    point with a flag beyond the caveats has none, so its launches stand off the line as hollow marks, and a
    caveat alone (imprecise) keeps the point on it."""
    from crossbench.figures.points import FIXED
    from crossbench_analysis.charts.kit_intervals import with_intervals

    def launch(c, rep, rps, flags=()):
        return {
            "cell_id": f"c{c}-r{rep}",
            "experiment": "x",
            "group": "g",
            "server": "tomcat",
            "endpoint": "/delay/sync",
            "delay_ms": 200,
            "concurrency": c,
            "repetition": rep,
            "rps": rps,
            "status": "ok",
            "flags": list(flags),
            "valid": not flags,
        }

    cells = [
        launch(10, 1, 40.0),
        launch(10, 2, 90.0),
        launch(10, 3, 60.0),
        launch(100, 1, 300.0, ["few_completions"]),
        launch(100, 2, 500.0),
        launch(50, 1, 200.0, ["imprecise"]),
    ]
    rows = {row[-4]: row for row in with_intervals(cells, lambda c: [c["concurrency"], c["rps"]], FIXED)}
    clean = rows["c10-r1"][-3]
    assert clean == pytest.approx(math.exp((math.log(40) + math.log(90) + math.log(60)) / 3))
    assert rows["c100-r2"][-3] is None and rows["c100-r1"][-3] is None
    assert rows["c50-r1"][-3] == pytest.approx(200.0)
