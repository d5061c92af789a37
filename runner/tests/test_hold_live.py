"""Seed 003 live: the holder against the real servers (all held; Tomcat's maxConnections biting, and what
the client then sees), stopped by signals without leaving a connection, and seed003-quick end to end."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from live_servers import build_missing_reason, running
from testkit import records_by_id, seed003_quick_holding, wait_until

from crossbench import paths
from crossbench.clients.holder import HoldConfig, hold
from crossbench.sampling.socket_census import census

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(build_missing_reason() is not None, reason=str(build_missing_reason())),
]


def established(port: int) -> int:
    return census(port)[1]


def test_holder_holds_every_connection_on_tornado_and_closes_them(report_figure):
    with running("tornado", backlog=1024) as server:
        config = HoldConfig(
            port=server.spec.port, connections=200, rate_per_10ms=10, head_interval_s=1, hold_s=2, timeout_s=5
        )
        result = hold(config)
        assert result.connections_held_peak == 200 and result.connections_held_at_end == 200
        assert result.failure_total == 0, result.failures
        # The first HEAD on each, then one a second for the 2 s hold; a few are in flight when it closes.
        assert 400 <= result.requests_answered <= result.requests_sent <= result.requests_answered + 200 <= 1000
        assert result.hold_end_epoch - result.ramp_end_epoch == pytest.approx(2, abs=0.2)
        wait_until(lambda: established(server.spec.port) == 0, 5, "every connection closed")
    report_figure(
        f"holder 200 conns on tornado: all held after {result.all_held_after_s:.2f} s, "
        f"HEAD p50 {result.latency_ms['p50']:.1f} ms, client rss {result.client_rss_mb_peak:.0f} MB "
        f"({result.event_loop})"
    )


@pytest.mark.parametrize("accept_count, connections", [(100, 150), (20, 100)])
def test_tomcat_max_connections_50_holds_50_and_the_client_sees_the_rest_fail(accept_count, connections, report_figure):
    """Tomcat stops accepting at maxConnections; the kernel still completes handshakes into the accept
    queue (acceptCount, plus one: Linux admits backlog + 1), so those clients connect, send their HEAD and
    time out waiting; the rest find the queue full, their SYNs are dropped, and connecting times out. That queue is
    a floor, not an exact count: a SYN the kernel admitted while the queue had room completes on the client's side
    even when the queue is full by the time its ACK arrives (tcp_abort_on_overflow 0 keeps it half-open), so a
    slow accept lets more clients read as connected (seen once in CI: all 100 open, 50 held); those time out
    reading too. What Tomcat decides stays exact: 50 held, every other client failed."""
    with running("tomcat", max_connections=50, accept_count=accept_count) as server:
        config = HoldConfig(
            port=server.spec.port, connections=connections, head_interval_s=1, hold_s=2.5, timeout_s=1.5, retry_s=0
        )
        result = hold(config)
    queued = min(connections - 50, accept_count + 1)
    assert result.connections_held_peak == 50 and result.connections_held_at_end == 50
    assert 50 + queued <= result.connections_open_peak <= connections
    assert result.failures["read_timeout"] == result.connections_open_peak - 50  # open, never served
    assert result.failures["connect_timeout"] == connections - result.connections_open_peak
    assert result.failure_total == connections - 50
    report_figure(
        f"tomcat maxConnections=50 acceptCount={accept_count}, {connections} conns: held "
        f"{result.connections_held_peak}, read timeouts {result.failures['read_timeout']}, "
        f"connect timeouts {result.failures['connect_timeout']}"
    )


STOP_LIMIT_S = 20.0  # closing 300 connections takes under a second here; the bound only catches a hang


def stopped_within(proc: subprocess.Popen, limit_s: float) -> int:
    """The holder's exit status once it stops; if it outlives `limit_s`, its threads' stacks in the failure."""
    try:
        return proc.wait(timeout=limit_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler dumps every thread's stack on its way out
        _, stderr = proc.communicate(timeout=10)
        pytest.fail(f"the holder did not stop within {limit_s:g} s of the signal; its stacks:\n{stderr[-4000:]}")


@pytest.mark.shares_cores
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_holder_stops_on_a_signal_and_closes_everything(tmp_path, sig):
    with running("tornado", backlog=1024) as server:
        port = server.spec.port
        out = tmp_path / "holder.json"
        # -X faulthandler: a holder that does not stop is made to print where each of its threads is
        # started with SIGINT ignored, as `nohup run_all.sh &` leaves it: the holder must stop all the same
        proc = subprocess.Popen(
            [
                sys.executable,
                "-X",
                "faulthandler",
                "-m",
                "crossbench.clients.holder",
                "--port",
                str(port),
                "--connections",
                "300",
                "--hold",
                "60",
                "--json",
                str(out),
                "--csv",
                str(tmp_path / "h.csv"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        )
        try:
            wait_until(lambda: established(port) >= 300, 10, "300 connections established")
            assert established(port) == 300
            proc.send_signal(sig)
            assert stopped_within(proc, STOP_LIMIT_S) == 130, proc.stderr.read()
        finally:
            proc.kill()
            proc.wait()
        result = json.loads(out.read_text())
        assert result["interrupted"] and result["connections_held_at_end"] == 300
        wait_until(lambda: established(port) == 0, 5, "every connection closed")


def test_seed003_quick_end_to_end(tmp_path, report_figure):
    """The quick file's ramp (the RSS fit's samples) kept, its hold cut to 3 s and no idle warm-up: every
    connection is held or times out within that, and the JVM probe, attached while the server starts, counts
    Tomcat's connections through the ramp and hold."""
    out = tmp_path / "seed003-quick"
    done = subprocess.run(
        [
            str(paths.RUNNER / "run_all.sh"),
            "--experiment",
            str(seed003_quick_holding(tmp_path, 3)),  # a second past a queued client's 2 s read timeout
            "--warmup",
            "0",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cells = records_by_id(out)
    assert len(cells) == 4 and all(r["status"] == "ok" for r in cells.values())
    tomcat, tornado = cells["hold-tomcat-mt200-hello-c500-d0-r1"], cells["hold-tornado-hello-c500-d0-r1"]
    nginx = cells["hold-nginx-hello-c500-d0-r1"]
    limited = cells["hold-maxconn300-tomcat-mt200-hello-c500-d0-r1"]
    for r in (tomcat, tornado, nginx):
        assert r["connections_held_peak"] == r["connections_held_at_end"] == 500 and r["failure_total"] == 0
        assert r["rss_per_connection_kb"] is not None and r["rss_fit_points"] >= 5
        assert r["server_established_peak"] == 500 and r["client_rss_mb_peak"] > 0
        assert r["loadgen_cpu_percent"] > 0  # the holder is the cell's load generator, not a foreign process
        assert (out / r["holder_series"]).is_file() and (out / r["sockets_series"]).is_file()
    assert tornado["server_threads_hold_peak"] == 1
    assert tomcat["tomcat_connection_count_peak"] >= 500  # Tomcat's own count (+1 for the probe's check)
    assert limited["connections_held_peak"] == 300 and limited["tomcat_connection_count_peak"] == 300
    assert limited["failures"]["read_timeout"] >= 200 and "timeouts" in limited["flags"]
    assert limited["accept_queue_peak"] >= 200
    for chart in ("hold_server", "hold_limit", "hold_client"):
        assert (out / "charts" / f"{chart}.png").stat().st_size > 10_000, chart
    server_dat = (out / "charts" / "data" / "hold_server.dat").read_text()
    assert all(cell_id in server_dat for cell_id in cells)
    report_figure(
        "seed003-quick: "
        + "; ".join(
            f"{r['cell_id'].split('-hello')[0]} held {r['connections_held_peak']}, rss/conn "
            f"{r['rss_per_connection_kb'] if r['rss_per_connection_kb'] is None else round(r['rss_per_connection_kb'], 1)} KB, "
            f"failures {r['failure_total']}"
            for r in cells.values()
        )
        + f"; maxconn300: read timeouts {limited['failures']['read_timeout']}, accept queue peak "
        f"{limited['accept_queue_peak']}, Tomcat's count peak {limited['tomcat_connection_count_peak']}"
    )
