"""Seed 003's pure parts: the per-connection fit, the failure classification, the holder's parsing, the
driver's options, and the open-file refusals (run for real in a child with a lowered hard limit)."""

from __future__ import annotations

import asyncio
import errno
import resource
import subprocess
import sys

import pytest

from crossbench import paths
from crossbench.clients.holder import FAILURE_KINDS, Non2xx, classify, percentiles, status_of
from crossbench.drivers import DRIVERS, hold_fit
from crossbench.drivers.hold import HoldOptionsError, hold_config
from crossbench.plan.experiment import apply_overrides, expand, load
from crossbench.sampling.jvm_probe import connection_counts
from crossbench.sampling.process_tree import Sample
from crossbench.sampling.socket_census import tcp_ext, tcp_mem_pages


def sample(t: float, rss_mb: float) -> Sample:
    return Sample(t, "measure", 1, 1, rss_mb, None, (), None, None, None)


def test_least_squares_recovers_a_line_and_refuses_what_says_nothing():
    fit = hold_fit.least_squares([0, 1, 2, 3], [5, 7, 9, 11])
    assert fit.slope == pytest.approx(2) and fit.intercept == pytest.approx(5) and fit.r2 == pytest.approx(1)
    assert hold_fit.least_squares([1, 2], [1, 2]) is None  # too few points
    assert hold_fit.least_squares([3, 3, 3], [1, 2, 3]) is None  # no spread in x
    assert hold_fit.least_squares([1, 2, 3], [4, 4, 4]).r2 is None  # flat y: slope 0, r2 meaningless
    noisy = hold_fit.least_squares([0, 1, 2, 3, 4], [0, 1.2, 1.8, 3.1, 4.0])
    assert 0.9 < noisy.slope < 1.1 and 0.95 < noisy.r2 < 1


def test_value_at_interpolates_and_stays_inside_the_timeline():
    timeline = [{"t_epoch": 10.0, "connections_held": 0.0}, {"t_epoch": 12.0, "connections_held": 100.0}]
    assert hold_fit.value_at(timeline, 11.0, "connections_held") == pytest.approx(50)
    assert hold_fit.value_at(timeline, 10.0, "connections_held") == 0
    assert hold_fit.value_at(timeline, 12.0, "connections_held") == 100
    assert hold_fit.value_at(timeline, 9.9, "connections_held") is None
    assert hold_fit.value_at(timeline, 12.1, "connections_held") is None


def test_rss_per_connection_is_the_slope_over_the_window_in_kib():
    # 1000 connections a second, 10 KiB each, on a 30 MiB base; samples outside the window are ignored.
    timeline = [{"t_epoch": 100.0 + i, "connections_held": 1000.0 * i} for i in range(11)]
    samples = [sample(100.0 + i / 4, 30 + (250 * i) * 10 / 1024) for i in range(41)]
    samples.append(sample(120.0, 999.0))
    fit = hold_fit.rss_per_connection(timeline, samples, 100.0, 110.0)
    assert fit["rss_per_connection_kb"] == pytest.approx(10.0)
    assert fit["rss_per_connection_kb_r2"] == pytest.approx(1.0) and fit["rss_fit_points"] == 41
    assert hold_fit.rss_per_connection(timeline, samples, 200.0, 300.0)["rss_per_connection_kb"] is None


def test_client_per_connection_fits_its_own_rss():
    timeline = [
        {"t_epoch": float(i), "connections_open": 100.0 * i, "client_rss_mb": 20 + i * 100 * 8 / 1024} for i in range(6)
    ]
    assert hold_fit.client_per_connection(timeline, 0, 5) == pytest.approx(8.0)


@pytest.mark.parametrize(
    "phase, exc, kind",
    [
        ("connect", ConnectionRefusedError(errno.ECONNREFUSED, "refused"), "connect_refused"),
        ("connect", TimeoutError(), "connect_timeout"),
        ("connect", OSError(errno.ETIMEDOUT, "timed out"), "connect_timeout"),
        ("connect", OSError(errno.EADDRNOTAVAIL, "no port"), "no_local_port"),
        ("connect", OSError(errno.EMFILE, "too many"), "too_many_open_files"),
        ("connect", OSError(errno.ECONNREFUSED, "refused"), "connect_refused"),
        ("request", TimeoutError(), "read_timeout"),
        ("request", ConnectionResetError(errno.ECONNRESET, "reset"), "reset"),
        ("request", BrokenPipeError(errno.EPIPE, "pipe"), "reset"),
        ("request", asyncio.IncompleteReadError(b"", None), "closed_by_server"),
        ("request", Non2xx(503), "non_2xx"),
        ("request", ValueError("not HTTP"), "other"),
    ],
)
def test_failures_are_classified_by_where_and_what(phase, exc, kind):
    assert classify(phase, exc) == kind
    assert kind in FAILURE_KINDS


def test_status_of_reads_the_status_line_and_refuses_what_is_not_http():
    assert status_of(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n") == 200
    assert status_of(b"HTTP/1.1 503 Service Unavailable\r\n\r\n") == 503
    with pytest.raises(ValueError):
        status_of(b"SSH-2.0-OpenSSH\r\n\r\n")


def test_percentiles():
    p = percentiles([float(v) for v in range(1, 101)])
    # nearest rank, the suite's one definition (crossbench.stats): the probe gives the same on 1..100
    assert p["mean"] == pytest.approx(50.5) and p["p50"] == 50 and p["p99"] == 99 and p["max"] == 100
    assert percentiles([])["mean"] is None


def plan_for(options: dict):
    config = load("seed003-quick")
    config["group"] = [{**config["group"][0], "options": options}]
    return expand(apply_overrides(config, {}))[0]


def test_hold_options_take_the_connections_from_concurrency_and_refuse_the_rest():
    assert type(DRIVERS["hold_connections"]).__module__ == "crossbench.drivers.hold"
    config = hold_config(plan_for({"hold_s": 3}), 8080)
    assert config.connections == 500 and config.hold_s == 3 and config.rate_per_10ms == 10
    assert config.path == "/hello" and config.port == 8080
    with pytest.raises(HoldOptionsError, match="concurrency"):
        hold_config(plan_for({"connections": 10}), 8080)
    with pytest.raises(HoldOptionsError, match="unknown options"):
        hold_config(plan_for({"hold": 3}), 8080)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"rate_per_10ms": 0}, "rate_per_10ms must be a number > 0"),  # divided by inside the cell before
        ({"rate_per_10ms": 2.5}, "rate_per_10ms must be a whole number"),
        ({"head_interval_s": -1}, "head_interval_s must be a number > 0"),
        ({"retry_s": -0.5}, "retry_s must be a number >= 0"),
        ({"hold_s": "5"}, "hold_s must be a number"),
    ],
)
def test_hold_preflight_refuses_impossible_options(options, message):
    plan = plan_for(options)
    with pytest.raises(HoldOptionsError, match=message):
        DRIVERS["hold_connections"].preflight(plan)


def test_seed003_plans_10k_on_every_server_and_both_tomcat_limits():
    cells = expand(apply_overrides(load("seed003"), {}))
    assert {(c.server, c.settings.get("max_connections")) for c in cells} == {
        ("tomcat", 8192),
        ("tomcat", 12000),
        ("tornado", None),
        ("nginx", None),
    }
    assert all(c.kind == "hold_connections" and c.concurrency == 10_000 for c in cells)


def test_kernel_counters_parse():
    netstat = "TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 0 12 14\nIpExt: InNoRoutes\nIpExt: 0\n"
    assert tcp_ext(netstat) == {"SyncookiesSent": 0, "ListenOverflows": 12, "ListenDrops": 14}
    assert tcp_mem_pages("sockets: used 21\nTCP: inuse 3 orphan 0 tw 2 alloc 3 mem 104\nUDP: inuse 0 mem 0\n") == 104


def test_tomcat_connections_come_from_the_probe_lines(tmp_path):
    raw = tmp_path / "jvm-probe.jsonl"
    raw.write_text(
        '{"type":"jvm"}\n'
        '{"type":"pool","t_epoch":1.5,"pools":[{"kind":"connector","name":"http-nio-1","connections":300}]}\n'
        'not json\n'
    )
    assert connection_counts(raw) == [(1.5, 300)]
    assert connection_counts(tmp_path / "missing.jsonl") == []


def with_hard_limit(limit: int):
    def lower():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return lower


@pytest.mark.spawns  # python -m crossbench.clients.holder
def test_holder_refuses_clearly_when_the_hard_limit_is_too_low():
    done = subprocess.run(
        [sys.executable, "-m", "crossbench.clients.holder", "--port", "9", "--connections", "5000"],
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=with_hard_limit(1024),
    )
    assert done.returncode == 2 and "hard limit is 1024" in done.stderr, done.stderr


@pytest.mark.spawns  # run_all.sh
def test_run_all_refuses_10k_connections_under_a_low_hard_limit():
    done = subprocess.run(
        [str(paths.RUNNER / "run_all.sh"), "--experiment", "seed003", "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=with_hard_limit(4096),
    )
    assert done.returncode == 2, done.stderr
    assert "10000 connections need about 11024 open files" in done.stderr and "hard limit is 4096" in done.stderr
