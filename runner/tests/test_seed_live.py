"""Seeds 000 and 001 against the real servers: pipelining answered in full by both, and the quick variants of
both experiments end to end through run_all.sh (real ab, wrk, Tomcat, Tornado)."""

from __future__ import annotations

import contextlib
import csv
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from live_servers import build_missing_reason, running
from testkit import records_by_id

from crossbench import paths
from crossbench.clients import pipeline_check

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(build_missing_reason() is not None, reason=str(build_missing_reason())),
]

RUN_ALL = str(paths.RUNNER / "run_all.sh")


def run_experiment(name: str, out: Path, *extra: str) -> dict[str, dict]:
    done = subprocess.run(
        [RUN_ALL, "--experiment", name, "--out", str(out), "--no-analysis", *extra],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cells = records_by_id(out)
    assert all(r["status"] == "ok" for r in cells.values()), [r.get("error") for r in cells.values()]
    return cells


# --- pipelining -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("server", ["tomcat", "tornado"])
def test_both_servers_answer_all_24_pipelined_requests(server):
    with running(server) as s:
        result = pipeline_check.check("127.0.0.1", s.spec.port, "/hello", 24, b"Hello, world")
    assert result.verified, result
    assert result.answered == 24 and result.statuses == {200: 24} and result.leftover_bytes == 0


class DropsPipelined:
    """A raw server that answers only the first request of whatever arrives in one read, as seed 001 says
    some servers do with pipelined requests: the check must catch it."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        with self.sock:
            conn, _ = self.sock.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello, world")
                conn.settimeout(30)
                with contextlib.suppress(OSError):
                    while conn.recv(65536):  # the rest is never answered; open until the check hangs up
                        pass


def test_the_check_catches_a_server_that_drops_pipelined_requests():
    server = DropsPipelined()
    result = pipeline_check.check("127.0.0.1", server.port, "/hello", 24, b"Hello, world", timeout_s=1.0)
    assert not result.verified and result.answered == 1 and result.sent == 24


# --- the quick experiments ------------------------------------------------------------------------------


def test_seed000_quick_end_to_end(tmp_path, report_figure):
    out = tmp_path / "seed000-quick"
    cells = run_experiment("seed000-quick", out)
    assert len(cells) == 8
    ab_cells = {k: r for k, r in cells.items() if r["group"].startswith("ab_")}
    for r in ab_cells.values():
        assert r["loadgen"] == "ab" and r["requests"] == 40 and r["error_total"] == 0, r
        assert (out / "cells" / r["cell_id"] / "ab.tsv").is_file()
    # 40 requests one after the other at 300 ms: 3.33 req/s, ab's lone first request costs nothing extra
    sync = ab_cells["ab_sync-tornado-delay_sync-c8-d300-r1"]
    assert 3.0 < sync["rps"] < 3.4 and sync["ab"]["rounds"]["ideal"] == 40
    # everything else answers 8 at once: 5 rounds, but ab takes 6 (the lone first request); the figure
    # without it is back near 8 / 0.3 s
    for cell_id in (
        "ab_async-tornado-delay_async-c8-d300-r1",
        "ab_async-tomcat-mt200-delay_async-c8-d300-r1",
        "ab_sync-tomcat-mt200-delay_sync-c8-d300-r1",
    ):
        r = ab_cells[cell_id]
        assert r["ab"]["rounds"] == {"ideal": 5, "with_lone_first_request": 6}
        assert 40 / (6 * 0.3) * 0.8 < r["rps"] < 40 / (5.5 * 0.3), r["rps"]
        # 39 requests in 5 rounds instead of 40 in 6: 1.17 times ab's figure, never above 8 / 0.3 s
        assert 1.1 < r["rps_startup_free"] / r["rps"] < 1.25, r["ab"]["startup_free"]
        assert r["rps_startup_free"] < 8 / 0.3 * 1.02, r["ab"]["startup_free"]
        assert r["ab"]["reported"]["rps"] == pytest.approx(r["rps"], rel=0.01)

    probes = {k: r for k, r in cells.items() if r["group"].startswith("hol_")}
    for r in probes.values():
        rows = list(csv.DictReader(open(out / "cells" / r["cell_id"] / "probe.csv")))
        assert len(rows) == r["probes_sent"] and r["background"]["requests"] > 0, r
        assert r["background"]["error_total"] == 0 and r["error_total"] == 0
        assert r["latency_ms"]["max"] == max(float(row["latency_ms"]) for row in rows)
    blocked = probes["hol_sync-tornado-delay_sync-c4-d300-r1"]
    # one event loop blocked by 4 connections x 300 ms: /now waits behind them (the seed's "A then C")
    assert blocked["latency_ms"]["p50"] > 300 and blocked["probes_sent"] < 10
    for cell_id in (
        "hol_async-tornado-delay_async-c4-d300-r1",
        "hol_sync-tomcat-mt200-delay_sync-c4-d300-r1",
        "hol_async-tomcat-mt200-delay_async-c4-d300-r1",
    ):
        assert probes[cell_id]["latency_ms"]["p50"] < 100 and probes[cell_id]["probes_sent"] >= 20, probes[cell_id]
    report_figure(
        "seed000-quick: ab req/s (startup-free) "
        + ", ".join(
            f"{r['server']} {r['endpoint']} {r['rps']:.1f} ({r['rps_startup_free']:.1f})" for r in ab_cells.values()
        )
        + "; /now p50 "
        + ", ".join(f"{r['server']} {r['endpoint']} {r['latency_ms']['p50']:.1f} ms" for r in probes.values())
    )


@pytest.mark.shares_cores
def test_seed001_quick_end_to_end(tmp_path):
    """Each server's pipelined cell, one 1 s window without a warm-up: the pipeline check before the load, wrk's
    pipelined window and the connection census halfway through it are met by any window a cell has."""
    out = tmp_path / "seed001-quick"
    cells = run_experiment("seed001-quick", out, "--duration", "1s", "--warmup", "0")
    assert sorted((r["server"], r["processes"]) for r in cells.values()) == [
        ("tomcat", 1),
        ("tornado", 1),
        ("tornado", 2),
        ("uvicorn", 1),
    ]
    for r in cells.values():
        assert r["pipeline"] == 24 and r["concurrency"] == 100
        assert r["pipeline_verified"] is True and r["pipeline_check"]["answered"] == 24
        assert r["requests"] > 0 and r["error_total"] == 0
        # wrk records a latency per completed batch of 24; a slow server on a busy machine may complete
        # none in its window, and then there is no max either
        assert r["latency_ms"]["max"] is None or r["latency_ms"]["max"] > 0
        assert r["latency_ms"]["p50"] is None or r["latency_invalid"] is None
        assert (out / "cells" / r["cell_id"] / "pipeline-check.json").is_file()
        # the connections open halfway through, spread over the server's processes; Tomcat closes each one
        # after 100 answers (maxKeepAliveRequests), so some may be reconnecting at that moment (a CI run here
        # counted 69 of 100 in that instant): the census only has to find them with the server's processes
        assert len(r["connections_by_process"]) <= (r["processes"] or 1), r["connections_by_process"]
        assert 50 <= sum(r["connections_by_process"].values()) <= 101, r["connections_by_process"]
