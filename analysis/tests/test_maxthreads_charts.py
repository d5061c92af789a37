"""The maxthreads charts, on a SYNTHETIC maxthreads run (a toy model, not a measurement: a pool of maxThreads
threads serves C clients a 1 s delay at ratio max(1, C / maxThreads); virtual threads at 1). The knees are
found by the analysis itself, from the cells, every time it runs."""

from __future__ import annotations

import json
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from analysis_markers import needs_gnuplot
from synthetic_run import SYNTHETIC_CPU, make_run, rewrite

from crossbench_analysis.charts import export, plot
from crossbench_analysis.read.runinfo import load_run

MAXTHREADS_CHARTS = {
    "maxthreads_knees",
    "maxthreads_threads",
    "maxthreads_cost",
    "maxthreads_static",
    "maxthreads_queues",
}
JVM_OWN_THREADS = 27


def cell(
    group, c, mt, executor="platform", *, delay=1000, rep=1, accept=1024, max_conn=8192, rps=None, held=None, flags=()
):
    ratio = 1.01 if executor == "virtual" or delay == 0 else max(1.0, c / mt) * 1.01
    rps = rps if rps is not None else (c / ratio / (delay / 1000) if delay else 3000.0 - (mt or 100))
    threads = JVM_OWN_THREADS + (min(c, mt) if executor == "platform" else 3)
    name = f"mt{mt}" if executor == "platform" else "virtual"
    return {
        "schema_version": 1,
        "cell_id": f"{group}-{name}-c{c}-d{delay}-r{rep}",
        "experiment": "maxthreads",
        "group": group,
        "server": "tomcat",
        "endpoint": "/delay/sync" if delay else "/static/*",
        "concurrency": c,
        "delay_ms": delay,
        "duration_s": 30,
        "repetition": rep,
        "loadgen": "wrk",
        "keepalive": True,
        "max_threads": mt if executor == "platform" else None,
        "executor": executor,
        "accept_count": accept,
        "max_connections": max_conn,
        "status": "ok",
        "valid": not flags,
        "flags": list(flags),
        "requests": int(rps * 30),
        "rps": rps,
        "error_total": 0,
        "errors": {k: 0 for k in ("connect", "read", "write", "timeout", "non_2xx", "other")},
        "efficiency_ratio": ratio * 1.04 if delay else None,
        "latency_ratio": ratio if delay else None,
        "latency_ms": {"mean": 1000 * ratio, "p50": 1000 * ratio, "p90": 1000, "p99": 1000, "max": 1000},
        "threads_peak": threads,
        "rss_peak_mb": 600 + 0.13 * threads,
        "cpu_percent": 20 + rps / 20,
        "tomcat_connection_count_peak": held if held is not None else c + 1,
    }


def synthetic_maxthreads_run(path: Path) -> Path:
    cells = []
    for mt, executor in ((50, "platform"), (200, "platform"), (None, "virtual")):
        cells += [cell("delay", c, mt, executor) for c in (25, 50, 100, 200, 400, 1000)]
        cells += [cell("static", c, mt, executor, delay=0, rep=r) for c in (10, 1000) for r in (1, 2)]
    cells += [
        cell(
            "queues",
            c,
            10,
            accept=5,
            max_conn=20,
            rps=9.3,
            held=min(c, 20),
            flags=() if c == 10 else ("ratio_disagreement",),
        )
        for c in (10, 20, 50, 100)
    ]
    path.mkdir(parents=True)
    (path / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells))
    (path / "metadata.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "run_id": path.name,
                "experiment": "maxthreads",
                "synthetic": True,
                "started_at": "2026-11-22T01:30:00+00:00",
                "machine": {"cpu_model": SYNTHETIC_CPU, "cores": 2},
            }
        )
    )
    return path


def read_blocks(path: Path) -> dict[str, list[dict]]:
    """{series label: rows as dicts} from one exported .dat file."""
    lines = path.read_text().splitlines()
    columns = next(line for line in lines if line.startswith("# columns: "))[len("# columns: ") :].split()
    blocks, current = {}, None
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith('"'):
            current = blocks.setdefault(line[1 : line.index('"', 1)], [])
        else:
            current.append(dict(zip(columns, line.split("\t"))))
    return blocks


@pytest.fixture()
def exported(tmp_path):
    run_dir = synthetic_maxthreads_run(tmp_path / "20261122-0130-maxthreads-synthetic")
    jobs = {j.name: j for j in export.export(load_run(run_dir), run_dir / "charts")}
    return run_dir, jobs


def test_a_maxthreads_run_gets_the_five_charts(exported):
    _, jobs = exported
    assert MAXTHREADS_CHARTS <= set(jobs)
    assert all(jobs[name].heading.startswith("maxThreads") for name in MAXTHREADS_CHARTS - {"maxthreads_knees"})


def test_knee_marks_are_the_knees_found_and_the_queue_group_is_left_out(exported):
    run_dir, jobs = exported
    job = jobs["maxthreads_knees"]
    assert job.params["panels"] == 1 and job.params["predicted_1"] == "50 200 NaN"
    marks = read_blocks(run_dir / "charts" / "data" / job.params["marks_1"])
    written = {
        k["setting"]: k for k in map(json.loads, (run_dir / "charts" / "data" / "knees.jsonl").read_text().splitlines())
    }
    assert set(marks) == {"tomcat maxThreads=50", "tomcat maxThreads=200", "tomcat virtual"}  # not the queues group's
    for name, rows in marks.items():  # the diamond: a fitted N only, never a bracket's indicative fit
        expected = written[name]["knee_concurrency"] if written[name]["status"] == "fitted" else None
        assert (
            (rows[0]["knee_concurrency"] == "NaN")
            if expected is None
            else float(rows[0]["knee_concurrency"]) == pytest.approx(expected)
        )
    # ratio 1.01 max(1, C / 50), one launch a point, four past the knee: N = 50 with no residual to widen it
    mt50 = marks["tomcat maxThreads=50"][0]
    assert written["tomcat maxThreads=50"]["status"] == "fitted"
    assert float(mt50["knee_concurrency"]) == pytest.approx(50, abs=0.1)
    assert float(mt50["range_low"]) <= 50 <= float(mt50["range_high"])
    assert (
        marks["tomcat virtual"][0]["range_mid"] == "NaN"
        and "not reached up to C=1000" in written["tomcat virtual"]["text"]
    )
    assert "interpolated" not in job.caption and "fitted over every launch" in job.caption
    curves = read_blocks(run_dir / "charts" / "data" / job.params["file_1"])
    assert [float(r["concurrency"]) for r in curves["tomcat virtual"]] == [25, 50, 100, 200, 400, 1000]


def test_threads_cost_static_and_queues_data(exported):
    run_dir, jobs = exported
    data = run_dir / "charts" / "data"
    platform = read_blocks(data / "maxthreads_threads.dat")["platform threads"]
    assert [(r["max_threads"], r["threads_peak"]) for r in platform] == [("50", "77"), ("200", "227")]
    assert read_blocks(data / "maxthreads_threads_virtual.dat")["virtual threads"][0]["threads_peak"] == "30"
    cost = read_blocks(data / "maxthreads_cost.dat")
    assert {name: rows[0]["concurrency"] for name, rows in cost.items()} == {
        "tomcat maxThreads=50": "1000",
        "tomcat maxThreads=200": "1000",
        "tomcat virtual": "1000",
    }
    static = read_blocks(data / "maxthreads_static.dat")
    assert set(static) == {"10 concurrent clients (C=10)", "1000 concurrent clients (C=1000)"}
    assert [r["setting"] for r in static["10 concurrent clients (C=10)"]] == [
        "tomcat_maxThreads=50",
        "tomcat_maxThreads=200",
        "tomcat_virtual",
    ]  # .dat text: spaces as _
    assert (
        jobs["maxthreads_queues"].params | {"limit_queue": 15, "limit_connections": 20, "pool_rps": 10}
        == jobs["maxthreads_queues"].params
    )
    queues = next(iter(read_blocks(data / "maxthreads_queues.dat").values()))
    assert [r["connections_held"] for r in queues] == ["10", "20", "20", "20"]
    assert [r["valid"] for r in queues] == ["1", "0", "0", "0"]


def two_jdk_run(tmp_path: Path) -> tuple[Path, dict]:
    """The same synthetic cells on JDK 17 and JDK 25 (server_settings.jdk, as the runner records it); virtual
    threads only on 25."""
    run_dir = synthetic_maxthreads_run(tmp_path / "20261122-0130-maxthreads-synthetic")
    cells = [json.loads(line) for line in (run_dir / "cells.jsonl").read_text().splitlines()]
    both = [
        {**c, "cell_id": f"{c['cell_id']}-jdk{v.split('.')[0]}", "server_settings": {"jdk": v}}
        for v in ("17.0.15", "25.0.2")
        for c in cells
        if c["executor"] == "platform" or v.startswith("25")
    ]
    (run_dir / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in both))
    return run_dir, {j.name: j for j in export.export(load_run(run_dir), run_dir / "charts")}


def test_a_run_that_sets_jdks_against_each_other_gets_a_series_per_jdk(tmp_path):
    """Every setting's label says its JDK, and the peak-threads chart has a block per JDK."""
    run_dir, jobs = two_jdk_run(tmp_path)
    data = run_dir / "charts" / "data"
    knees = {k["setting"] for k in map(json.loads, (data / "knees.jsonl").read_text().splitlines())}
    assert {
        "tomcat maxThreads=50, JDK 17",
        "tomcat maxThreads=50, JDK 25",
        "tomcat maxThreads=200, JDK 17",
        "tomcat virtual, JDK 25",
    } <= knees
    assert set(read_blocks(data / "maxthreads_threads.dat")) == {"platform threads, JDK 17", "platform threads, JDK 25"}
    assert jobs["maxthreads_threads"].params["nplatform"] == 2


def test_knees_are_found_again_on_reanalysis_and_a_seed002_run_gets_only_its_knees(tmp_path, exported):
    run_dir, _ = exported
    (run_dir / "charts" / "data" / "knees.jsonl").unlink()
    names = {j.name for j in export.export(load_run(run_dir), run_dir / "charts")}
    assert "maxthreads_knees" in names and (run_dir / "charts" / "data" / "knees.jsonl").is_file()
    seed002 = make_run(tmp_path / "20261122-0130-seed002-synthetic")
    assert {j.name for j in export.export(load_run(seed002), seed002 / "charts")} & MAXTHREADS_CHARTS == {
        "maxthreads_knees"
    }


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
def test_every_maxthreads_chart_draws(exported):
    run_dir, jobs = exported
    charts = run_dir / "charts"
    for name in sorted(MAXTHREADS_CHARTS):
        result = plot.plot_chart(jobs[name], charts, "SYNTHETIC test run")
        assert result.ok, result.error
        png = (charts / f"{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1200, 750)
        assert len(png) > 20_000, f"{name}.png looks empty"
        assert ET.parse(charts / f"{name}.svg").getroot().tag.endswith("svg")


@pytest.mark.spawns  # gnuplot
@needs_gnuplot
def test_the_two_jdk_charts_draw(tmp_path):
    run_dir, jobs = two_jdk_run(tmp_path)
    for name in ("maxthreads_knees", "maxthreads_threads"):
        assert plot.plot_chart(jobs[name], run_dir / "charts", "SYNTHETIC test run").ok, name


@needs_gnuplot
@pytest.mark.spawns
def test_a_run_whose_every_launch_was_left_out_is_analysed_without_a_knee_chart(tmp_path):
    """A busy machine flags every launch noisy_host: the knees have no points, so there is no knee chart, and the
    run's analysis does not fail for it (the knee labels' edge once took min() of no concurrencies, and the
    script's stats had no point to read)."""
    from crossbench_analysis import analyze

    run_dir = synthetic_maxthreads_run(tmp_path / "20261122-0130-maxthreads-synthetic")
    rewrite(run_dir, lambda r: r.update(flags=["noisy_host"], valid=False))
    assert "maxthreads_knees" not in {j.name for j in export.export(load_run(run_dir), run_dir / "charts")}
    result = analyze(run_dir)
    assert not result.failed_charts, [(c.name, c.error) for c in result.failed_charts]


@needs_gnuplot
@pytest.mark.spawns
def test_a_delay_measured_at_one_concurrency_draws_no_knee_chart_and_fails_no_chart(tmp_path):
    """A delay at one concurrency per setting (the interpreter experiment's Tornado at C=1000) is a point, not a
    curve: no knee chart, and the analysis draws the others (gnuplot's stats once failed on its one x)."""
    from crossbench_analysis import analyze

    run_dir = make_run(
        tmp_path / "r",
        concurrency=(1000,),
        delays=(100,),
        groups=("delay",),
        repetitions=3,
        failed=False,
        flagged=False,
    )
    assert "maxthreads_knees" not in {j.name for j in export.export(load_run(run_dir), run_dir / "charts")}
    result = analyze(run_dir)
    assert not result.failed_charts, [(c.name, c.error) for c in result.failed_charts]
