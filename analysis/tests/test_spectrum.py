"""The latency percentile spectrum chart: each point's line from the samples its requests had (wrk's recovered
histogram, read back through the adapter), the record's own percentiles where the raw output is gone, and the
launch with the median p99 standing for its point."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from analysis_markers import needs_gnuplot

from crossbench import paths
from crossbench.loadgen import wrk
from crossbench_analysis.charts import plot, spectrum
from crossbench_analysis.read.runinfo import load_run

WRK_RUN = paths.REPO / "runner" / "tests" / "fixtures" / "loadgen" / "wrk" / "recovered_c32_static"


def cell(cell_id: str, p99: float, requests: int, **more) -> dict:
    return {
        "cell_id": cell_id,
        "status": "ok",
        "valid": True,
        "flags": [],
        "kind": "closed_loop",
        "loadgen": "wrk",
        "server": "tomcat",
        "group": "static",
        "endpoint": "/static/*",
        "concurrency": 32,
        "delay_ms": 0,
        "point_id": "static-tomcat-c32",
        "requests": requests,
        "index": 0,
        "latency_ms": {"p50": p99 / 4, "p90": p99 / 2, "p99": p99, "max": p99 * 2},
        **more,
    }


def run_with(tmp_path: Path, cells: list[dict], raw: dict[str, Path]) -> Path:
    run_dir = tmp_path / "run"
    for cell_id, source in raw.items():
        shutil.copytree(source, run_dir / "cells" / cell_id)
    run_dir.mkdir(exist_ok=True)
    (run_dir / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells))
    (run_dir / "metadata.json").write_text(json.dumps({"run_id": "spectrum", "experiment": "quick"}))
    return run_dir


def test_a_point_is_drawn_from_its_median_launch_over_the_samples_its_requests_had(tmp_path):
    measured = wrk.parse(WRK_RUN)
    n = measured.requests
    launches = [cell("a", 1.0, n), cell("b", measured.latency_ms["p99"], n), cell("c", 99.0, n)]
    run = load_run(run_with(tmp_path, launches, {"b": WRK_RUN}))
    assert spectrum.median_launch(run.cells)["cell_id"] == "b"
    curve = dict(spectrum.spectrum(run, run.cells[1]))
    # wrk's rule over the recovered histogram: the record's own p50 and p99 (parse) are points of the line
    assert curve[50] == measured.latency_ms["p50"] and curve[99] == measured.latency_ms["p99"]
    values = [ms for _, ms in sorted(curve.items())]
    assert values == sorted(values) and max(curve) <= 100 * (1 - 1 / n)
    # without its raw output, a launch is drawn from its record's percentiles
    assert spectrum.spectrum(run, run.cells[0]) == [(50.0, 0.25), (90.0, 0.5), (99.0, 1.0)]
    (tmp_path / "data").mkdir()
    [job] = spectrum.jobs(run, tmp_path / "data")
    assert job.params["panels"] == 1 and job.params["nseries_1"] == 1 and job.params["delay_1"] == ""
    rows = (tmp_path / "data" / job.data_files[0]).read_text()
    assert job.data_files == ["spectrum_static.dat"] and "no interval" in job.caption
    assert '"tomcat, C=32"' in rows and "\tb\n" in rows and "\ta\n" not in rows


def test_a_setting_keeps_its_colour_and_its_concurrencies_differ_by_width(tmp_path):
    """A dozen lines (maxthreads-quick) are told apart by setting (colour) and then by concurrency (width), and the
    key names each setting and each concurrency once."""
    launches = [
        cell(f"{server}-{c}", 10.0, 1000, server=server, concurrency=c, point_id=f"static-{server}-c{c}")
        for server in ("tomcat", "tornado")
        for c in (1, 10, 100)
    ]
    run = load_run(run_with(tmp_path, launches, {}))
    (tmp_path / "data").mkdir()
    [job] = spectrum.jobs(run, tmp_path / "data")
    colors, widths = job.params["colors_1"].split(), job.params["widths_1"].split()
    assert len(set(colors[:3])) == 1 and len(set(colors[3:])) == 1 and colors[0] != colors[3], colors
    assert widths == ["1", "1.7", "2.4", "1", "1.7", "2.4"]
    assert job.params["compact_1"] == "1" and job.params["keyconcurrencies_1"] == "1 10 100"
    assert (job.params["keytitle_1_1"], job.params["keytitle_1_2"]) == ("tomcat", "tornado")
    assert job.params["keycolors_1"].split() == [colors[0], colors[3]]


@needs_gnuplot
@pytest.mark.spawns
def test_a_panel_with_a_compact_key_and_one_with_a_line_each_draw_together(tmp_path):
    """The static panel's settings share their concurrencies (a key entry per setting and per concurrency); the
    delay panel's one setting titles each line: gnuplot reads the key's styles even in a panel with no key entry
    of its kind (maxthreads' reference failed so)."""
    static = [
        cell(f"{server}-{c}", 10.0, 1000, server=server, concurrency=c, point_id=f"static-{server}-c{c}")
        for server in ("tomcat", "tornado")
        for c in (1, 10)
    ]
    delayed = [
        cell(
            f"d-{c}",
            260.0,
            1000,
            concurrency=c,
            point_id=f"delay-tomcat-c{c}",
            group="delay",
            endpoint="/delay/sync",
            delay_ms=250,
        )
        for c in (1, 10)
    ]
    run = load_run(run_with(tmp_path, static + delayed, {}))
    (tmp_path / "charts" / "data").mkdir(parents=True)
    [job] = spectrum.jobs(run, tmp_path / "charts" / "data")
    assert job.params["panels"] == 2 and {job.params["compact_1"], job.params["compact_2"]} == {"0", "1"}
    drawn = plot.plot_chart(job, tmp_path / "charts", "footer", formats=("png",))
    assert not drawn.error and (tmp_path / "charts" / "latency_spectrum.png").stat().st_size > 0, drawn.error
