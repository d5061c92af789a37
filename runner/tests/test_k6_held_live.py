"""k6 holds a window as oha does (loadgen/k6_held.py): the quick profile's hardest delayed point, Tomcat's 200
threads under 400 clients at 250 ms, reads its known truth from one k6 process's rows."""

from __future__ import annotations

import subprocess

import pytest

K6_HELD_EXPERIMENT = """
name = "k6-held-check"
description = "a window held by k6: Tomcat's 200 threads under 400 clients at 250 ms (2 rounds)"

[run]
duration = "4s"
warmup = "1s"
repetitions = 1
precision = false
loadgen = "wrk"
held_windows = "k6"
servers = ["tomcat"]
server_cpus = [1]
loadgen_cpus = [0]
loadgen_threads = 1

[tomcat]
max_threads = [200]
executor = ["platform"]
accept_count = 1024
max_connections = 8192
jvm_options = ["-XX:+UseSerialGC"]

[[group]]
name = "delay"
endpoint = { tomcat = "/delay/sync" }
concurrency = [400]
delays = ["250ms"]
"""


@pytest.mark.live
def test_a_window_held_by_k6_reads_tomcats_two_rounds(tmp_path, report_figure):
    """400 clients on 200 threads at 250 ms wait 2 rounds in steady state: both ratios 2.0 and rps x mean latency
    = 400 (Little's law). A cold window, or a latency counted from the wrong moment, reads neither."""
    from live_servers import build_missing_reason
    from testkit import records

    from crossbench import paths

    if build_missing_reason():
        pytest.skip(build_missing_reason())
    experiment = tmp_path / "k6-held.toml"
    experiment.write_text(K6_HELD_EXPERIMENT)
    out = tmp_path / "run"
    done = subprocess.run(
        [str(paths.RUNNER / "run_all.sh"), "--experiment", str(experiment), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [cell] = records(out)
    window = cell["held_window"]
    assert cell["loadgen"] == "k6" and window and not window["short"] and not cell["flags"], cell
    little = cell["rps"] * cell["latency_ms"]["mean"] / 1000 / 400
    figure = (
        f"k6 held window, Tomcat maxThreads=200 C=400 at 250 ms (truth 2.0): efficiency ratio "
        f"{cell['efficiency_ratio']:.3f}, latency ratio {cell['latency_ratio']:.3f}, rps x mean / C {little:.4f}, "
        f"k6 CPU {cell['loadgen_cpu_percent']:.0f} %"
    )
    assert abs(little - 1) <= 0.02, figure
    assert abs(cell["efficiency_ratio"] / 2 - 1) <= 0.03 and abs(cell["latency_ratio"] / 2 - 1) <= 0.03, figure
    report_figure(figure)
