"""The repository's Tornado app declared as data (examples/tornado-declared.toml) measured beside the built-in
`tornado` plug-in in one run of run_all.sh: one delayed point each (100 ms /delay/async at C 20), three short
launches. Both come out as records and points with their intervals, and their figures agree: the same process
measured through the two forms of the same seam. Nothing is left running."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from testkit import marked_processes, records

from crossbench import paths, servers

pytestmark = [pytest.mark.live, pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed")]

RUN_ALL = str(paths.RUNNER / "run_all.sh")
EXAMPLE = paths.REPO / "examples" / "tornado-declared.toml"
MARKER = "CROSSBENCH_TEST_DECLARED"
DELAY_MS, CLIENTS = 100, 20

EXPERIMENT = f"""
name = "declared-live"
[run]
duration_s = 2
warmup_s = 1
repetitions = 3
loadgen = "wrk"
servers = ["tornado", "tornado_declared"]
server_cpus = [1]
loadgen_cpus = [0]

[[group]]
name = "delay"
endpoint = {{ tornado = "/delay/async", tornado_declared = "/delay/async" }}
concurrency = [{CLIENTS}]
delays_ms = [{DELAY_MS}]
"""


def agree(a: dict, b: dict) -> bool:
    """Their intervals overlap; where one has none (a launch the host disturbed left fewer than three counted),
    their values are within 20 % of each other."""
    if a["ci95_low"] is None or b["ci95_low"] is None:
        return abs(a["value"] - b["value"]) <= 0.2 * max(a["value"], b["value"])
    return a["ci95_low"] <= b["ci95_high"] and b["ci95_low"] <= a["ci95_high"]


def shown(figure: dict) -> str:
    low, high = figure["ci95_low"], figure["ci95_high"]
    return f"{figure['value']:.1f}" + (f" [{low:.1f}, {high:.1f}]" if low is not None else " (no interval)")


def test_the_declared_tornado_measures_as_the_built_in_plugin(tmp_path, report_figure):
    """A check of figures against known truths, so it keeps three launches a point and the cores to itself: the
    declared and the built-in form of one process measure alike (their intervals overlap), and both stay under
    the closed loop's bound of C / delay requests a second."""
    experiment, out = tmp_path / "declared-live.toml", tmp_path / "run"
    experiment.write_text(EXPERIMENT)
    env = {**os.environ, MARKER: str(out)}
    done = subprocess.run(
        [RUN_ALL, "--experiment", str(experiment), "--server-file", str(EXAMPLE), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert marked_processes(MARKER, str(out)) == []
    meta = json.loads((out / "metadata.json").read_text())
    try:  # the record contract of a declared server's records is its recorded declaration's
        servers.declare(meta["config"], "metadata.json")
        cells = records(out)
    finally:
        servers.forget_declared()
    # three launches each, and one more for each the host disturbed (noisy_host: relaunched after the rounds)
    assert all(
        sum(r["server"] == name and r["repetition"] <= 3 for r in cells) == 3
        for name in ("tornado", "tornado_declared")
    ), [r["cell_id"] for r in cells]
    assert all(r["status"] == "ok" and r["processes"] == 1 and r["threads_peak"] >= 1 for r in cells), cells
    assert meta["config"]["server"]["tornado_declared"]["workdir"] == str(paths.REPO)  # recorded for --resume
    points = {p["server"]: p for p in map(json.loads, (out / "points.jsonl").read_text().splitlines())}
    # a launch the host disturbed (noisy_host: a machine shared with other work) counts only where its point has
    # no undisturbed one, so a point may rest on fewer than three launches, and then has no interval
    assert set(points) == {"tornado", "tornado_declared"} and all(p["n"] >= 1 for p in points.values())
    built_in, declared = points["tornado"]["figures"], points["tornado_declared"]["figures"]
    for name in ("rps", "latency_ms.p50"):
        report_figure(
            f"{name} at C {CLIENTS}, {DELAY_MS} ms /delay/async: declared tornado "
            f"{shown(declared[name])}, built-in {shown(built_in[name])}"
        )
        assert agree(built_in[name], declared[name]), (name, built_in[name], declared[name])
    # the closed loop's bound for both: C clients each waiting the delay send at most C / delay requests a second
    # (the lower end leaves room for a machine shared with other work)
    assert all(
        0.5 * CLIENTS / (DELAY_MS / 1000) < f["rps"]["value"] <= CLIENTS / (DELAY_MS / 1000)
        for f in (built_in, declared)
    )
    assert "tornado_declared" in (out / "report.html").read_text()
