"""openloop-quick end to end: real servers, real oha, the rates kept or not, the peak measured first, charts."""

from __future__ import annotations

import subprocess

import pytest
from testkit import records_by_id

from crossbench import paths
from crossbench.loadgen import oha

pytestmark = pytest.mark.live


def test_openloop_quick_end_to_end(tmp_path, report_figure):
    if not oha.available():
        pytest.fail(f"oha {oha.VERSION} is not built: run runner/install-openloop.sh (runner/test.sh does)")
    out = tmp_path / "openloop-quick"
    # 3 s windows (the quick file's 6 s are for users; saves ~18 s of the suite): 150 req/s offered to Tomcat's
    # 100 still leaves 150 requests queued by the window's end, 1.5 s of wait, well over 3x the kept rate's p99
    done = subprocess.run(
        [str(paths.RUNNER / "run_all.sh"), "--experiment", "openloop-quick", "--out", str(out), "--duration", "3s"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cells = records_by_id(out)
    assert all(r["status"] == "ok" for r in cells.values()), [r.get("error") for r in cells.values()]

    # Tomcat's 20 threads at 200 ms answer 100 req/s: 50 offered is kept, 150 is not, and the queue grows
    kept, over = (
        cells["delay-tomcat-mt20-delay_sync-c1000-d200-q50-r1"],
        cells["delay-tomcat-mt20-delay_sync-c1000-d200-q150-r1"],
    )
    assert "unsustainable" not in kept["flags"] and kept["rate_achieved"] >= 0.95 * 50
    assert "unsustainable" in over["flags"] and over["latency_rise_ms"] > 200, over["unsustainable_reason"]
    assert over["latency_ms"]["p99"] > 3 * kept["latency_ms"]["p99"]
    # Tornado waits without a thread: both rates kept
    for rate in (50, 150):
        tornado = cells[f"delay-tornado-delay_async-c1000-d200-q{rate}-r1"]
        assert "unsustainable" not in tornado["flags"], tornado["unsustainable_reason"]
        assert tornado["latency_ms"]["p999"] is not None and tornado["latency_ms"]["p50"] >= 200

    # rates = "auto": the closed-loop peak first, then 90% of what it measured
    peak = cells["same-throughput-peak-tomcat-mt20-delay_sync-c40-d200-r1"]
    offered = cells["same-throughput-tomcat-mt20-delay_sync-c40-d200-q90pct-r1"]
    assert peak["kind"] == "closed_loop" and peak["loadgen"] == "wrk" and peak["index"] < offered["index"]
    assert offered["peak_cell"] == peak["cell_id"] and offered["rate"] == round(0.9 * peak["rps"], 1)
    assert (out / "cells" / offered["cell_id"] / "oha.sqlite").is_file()
    assert (out / "report.html").is_file()
    report_figure(
        "openloop-quick: Tomcat maxThreads=20 /delay/sync 200 ms: p99 "
        f"{kept['latency_ms']['p99']:.0f} ms at 50 req/s, {over['latency_ms']['p99']:.0f} ms at 150 req/s "
        f"({over['unsustainable_reason']}); Tornado p99 "
        + ", ".join(
            f"{cells[f'delay-tornado-delay_async-c1000-d200-q{r}-r1']['latency_ms']['p99']:.0f} ms" for r in (50, 150)
        )
        + f"; same throughput: wrk p99 {peak['latency_ms']['p99']:.0f} ms at {peak['rps']:.1f} req/s, "
        f"oha p99 {offered['latency_ms']['p99']:.0f} ms at {offered['rate']:g} req/s"
    )
